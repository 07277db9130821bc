"""Plugin discovery through real (temporary) entry points: isolation, filtering, compatibility, tracing."""

from __future__ import annotations

import sys

import pytest

import lit_sb3_core
from lit_sb3_core import hookimpl
from lit_sb3_core.errors import PluginError
from lit_sb3_core.registry import plugins as _plugins
from lit_sb3_core.registry.plugins import LitSb3PluginWarning, PluginInfo, register_plugin, unregister_plugin
from lit_sb3_core.registry.registry import algo_spec, list_algos, list_callbacks, list_plugins, make_algo


def info(name: str) -> PluginInfo:
    return next(plugin for plugin in list_plugins() if plugin.name == name)


def names() -> list[str]:
    return [plugin.name for plugin in list_plugins()]


def test_core_plugin_is_loaded_from_a_source_checkout(fresh_registry: None) -> None:
    core = info("core")
    assert (core.distribution, core.status, core.error) == ("lit-sb3-core", "loaded", None)
    assert core.version == lit_sb3_core.__version__


def test_a_plugin_registers_through_its_entry_point(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA, version="0.1.3")

    assert "alpha" in list_algos()
    assert make_algo("alpha", lr=0.1).kwargs == {"lr": 0.1}
    spec = algo_spec("alpha")
    assert (spec.plugin, spec.distribution, spec.version) == ("alpha", "lit-sb3-alpha", "0.1.3")
    assert info("alpha") == PluginInfo("alpha", "lit-sb3-alpha", "0.1.3", "loaded", None, ["algorithm:alpha"])


def test_a_plugin_that_fails_to_import_is_skipped_and_recorded(fake_plugins) -> None:
    fake_plugins.add("broken", "import lit_sb3_no_such_module\n")
    fake_plugins.add("alpha", fake_plugins.ALPHA)

    with pytest.warns(LitSb3PluginWarning, match="broken"):
        assert "alpha" in list_algos()
    broken = info("broken")
    assert broken.status == "failed"
    assert "ModuleNotFoundError" in broken.error and "lit_sb3_no_such_module" in broken.error
    assert broken.provides == []


def test_an_unknown_hook_fails_the_plugin_and_names_the_known_hooks(fake_plugins) -> None:
    fake_plugins.add(
        "typo",
        """
        from lit_sb3_core import hookimpl

        @hookimpl
        def lit_sb3_register_algoritms(registry):
            registry.add("typo", "MODULE:Typo")

        @hookimpl
        def lit_sb3_register_callbacks(registry):
            registry.add("typo_callback", "MODULE:Typo")
        """,
    )
    fake_plugins.add("alpha", fake_plugins.ALPHA)

    with pytest.warns(LitSb3PluginWarning, match="lit_sb3_register_algoritms"):
        assert "alpha" in list_algos()
    typo = info("typo")
    assert typo.status == "failed"
    assert "unknown hook(s) lit_sb3_register_algoritms" in typo.error
    assert "lit_sb3_register_algorithms" in typo.error  # the known hooks are listed
    assert "typo_callback" not in list_callbacks()  # its valid hooks did not run either
    assert _plugins._state.manager.get_plugin("typo") is None


def test_unmarked_hooks_count_as_hook_implementations(fake_plugins) -> None:
    fake_plugins.add(
        "unmarked",
        """
        class Thing: ...

        def lit_sb3_register_algorithms(registry):
            registry.add("unmarked", "MODULE:Thing")

        def lit_sb3_register_algoritms(registry): ...
        """,
    )
    with pytest.warns(LitSb3PluginWarning, match="lit_sb3_register_algoritms"):
        assert info("unmarked").status == "failed"


def test_a_plugin_for_another_core_is_not_imported(fake_plugins) -> None:
    module = fake_plugins.add("future", fake_plugins.ALPHA, requires=["lit-sb3-core>=9", "numpy"])

    with pytest.warns(LitSb3PluginWarning, match="incompatible"):
        future = info("future")
    assert future.status == "incompatible"
    assert "lit-sb3-core>=9" in future.error and lit_sb3_core.__version__ in future.error
    assert module not in sys.modules
    assert "alpha" not in list_algos()


def test_requirements_under_an_extra_are_ignored(fake_plugins) -> None:
    fake_plugins.add("extra", fake_plugins.ALPHA, requires=['lit-sb3-core>=9; extra == "testing"'])
    assert info("extra").status == "loaded"


def test_a_plugin_without_a_core_requirement_loads(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA, requires=[])
    assert info("alpha").status == "loaded"


def test_a_hook_that_raises_leaves_nothing_behind(fake_plugins) -> None:
    fake_plugins.add(
        "halfway",
        """
        from lit_sb3_core import hookimpl

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            registry.add("halfway", "MODULE:Nothing")
            raise RuntimeError("database is down")
        """,
    )
    fake_plugins.add("alpha", fake_plugins.ALPHA)

    with pytest.warns(LitSb3PluginWarning, match="database is down"):
        algos = list_algos()
    assert "alpha" in algos and "halfway" not in algos
    assert info("halfway").status == "failed"
    assert "lit_sb3_register_algorithms raised RuntimeError: database is down" in info("halfway").error


def test_an_invalid_registration_fails_the_plugin(fake_plugins) -> None:
    fake_plugins.add(
        "slash",
        """
        from lit_sb3_core import hookimpl

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            registry.add("a/b", "MODULE:Nothing")
        """,
    )
    with pytest.warns(LitSb3PluginWarning):
        assert "Invalid algorithm name 'a/b'" in info("slash").error


def test_only_the_plugins_listed_in_lit_sb3_plugins_load(fake_plugins, monkeypatch) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    beta = fake_plugins.add(
        "beta", fake_plugins.ALPHA.replace('"alpha"', '"beta"'), distribution="lit-sb3-beta"
    )
    monkeypatch.setenv("LIT_SB3_PLUGINS", "alpha, lit-sb3-nothing")

    assert list_algos() == ["alpha"]
    assert (info("beta").status, info("beta").error) == ("blocked", "not listed in LIT_SB3_PLUGINS")
    assert beta not in sys.modules
    assert info("core").status == "loaded"


def test_lit_sb3_plugins_accepts_distribution_names(fake_plugins, monkeypatch) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA, distribution="lit_sb3.Alpha")
    monkeypatch.setenv("LIT_SB3_PLUGINS", "lit-sb3-alpha")
    assert info("alpha").status == "loaded"


def test_an_empty_lit_sb3_plugins_loads_only_core(fake_plugins, monkeypatch) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    monkeypatch.setenv("LIT_SB3_PLUGINS", "")
    assert info("alpha").status == "blocked"
    assert info("core").status == "loaded"


def test_blocked_plugins_do_not_load_and_core_cannot_be_blocked(fake_plugins, monkeypatch) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    monkeypatch.setenv("LIT_SB3_BLOCK_PLUGINS", "alpha,core")

    assert "alpha" not in list_algos()
    assert (info("alpha").status, info("alpha").error) == ("blocked", "listed in LIT_SB3_BLOCK_PLUGINS")
    assert info("core").status == "loaded"


def test_tracing_prints_discovery_and_hook_calls(fake_plugins, monkeypatch, capsys) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    monkeypatch.setenv("LIT_SB3_TRACE_PLUGINS", "1")

    list_algos()
    err = capsys.readouterr().err
    assert "[lit_sb3] discovering plugins" in err
    assert "[lit_sb3] alpha: lit_sb3_register_algorithms(registry) -> algorithm:alpha" in err
    assert "[lit_sb3] alpha: loaded (lit-sb3-alpha 0.1.0)" in err


def test_no_tracing_by_default(fake_plugins, capsys) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    list_algos()
    assert capsys.readouterr().err == ""


def test_discovery_is_idempotent(fake_plugins) -> None:
    module = fake_plugins.add(
        "counted",
        """
        from lit_sb3_core import hookimpl
        CALLS = []

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            CALLS.append(1)
            registry.add("counted", "MODULE:CALLS")
        """,
    )
    for _ in range(3):
        assert list_algos("counted") == ["counted"]
        list_plugins()
    assert sys.modules[module].CALLS == [1]
    assert names().count("counted") == 1


def test_the_installed_core_entry_point_is_not_loaded_twice(fake_plugins) -> None:
    fake_plugins.add(
        "core", distribution="lit-sb3-core", requires=[], entry_point="lit_sb3_core.registry.builtin_plugin"
    )
    assert names().count("core") == 1
    assert info("core").status == "loaded"


def test_a_plugin_may_not_take_the_core_name(fake_plugins) -> None:
    fake_plugins.add("core", fake_plugins.ALPHA, distribution="lit-sb3-impostor")
    with pytest.warns(LitSb3PluginWarning, match="reserved"):
        impostor = [plugin for plugin in list_plugins() if plugin.distribution == "lit-sb3-impostor"]
    assert impostor[0].status == "failed"
    assert "alpha" not in list_algos()


def test_two_distributions_with_the_same_plugin_name(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA, distribution="lit-sb3-alpha")
    fake_plugins.add("alpha", fake_plugins.ALPHA, distribution="lit-sb3-alpha-fork")
    with pytest.warns(LitSb3PluginWarning, match="another plugin named 'alpha'"):
        statuses = sorted(plugin.status for plugin in list_plugins() if plugin.name == "alpha")
    assert statuses == ["failed", "loaded"]


class InProcess:
    """An in-process plugin: a class with hook implementations."""

    @hookimpl
    def lit_sb3_register_algorithms(self, registry) -> None:
        registry.add("inproc", "lit_sb3_core.errors:LitSb3Error", description="in-process")


def test_register_plugin_in_process(fresh_registry: None) -> None:
    recorded = register_plugin(InProcess(), "inproc", distribution="my-app", version="1.0")

    assert recorded == PluginInfo("inproc", "my-app", "1.0", "loaded", None, ["algorithm:inproc"])
    assert info("inproc") == recorded
    assert algo_spec("inproc").plugin == "inproc"
    with pytest.raises(PluginError, match="already registered"):
        register_plugin(InProcess(), "inproc")

    unregister_plugin("inproc")
    assert "inproc" not in list_algos() and "inproc" not in names()


def test_register_plugin_rejects_unknown_hooks(fresh_registry: None) -> None:
    class Typo:
        @hookimpl
        def lit_sb3_register_policy(self, registry) -> None: ...

    with pytest.raises(PluginError, match=r"unknown hook.*lit_sb3_register_policy"):
        register_plugin(Typo(), "typo")
    assert "typo" not in names()
    register_plugin(InProcess(), "typo")  # the failed one left no trace behind


def test_reset_discovers_again(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    assert "alpha" in list_algos()
    _plugins._reset_for_tests()
    fake_plugins.add("beta", fake_plugins.ALPHA.replace('"alpha"', '"beta"'))
    assert {"alpha", "beta"} <= set(list_algos())
