"""Registry lookups: case, ambiguity, unknown names, aliases, overrides, policies, callbacks, buffers."""

from __future__ import annotations

import pytest

from lit_sb3_core.errors import (
    AmbiguousNameError,
    DuplicateNameError,
    MissingPluginError,
    RegistrationError,
    TargetImportError,
    UnknownNameError,
)
from lit_sb3_core.registry import registry as _registry
from lit_sb3_core.registry.plugins import LitSb3PluginWarning
from lit_sb3_core.registry.registry import (
    FIRST_PARTY,
    SB3_CLASS_NAMES,
    AlgoSpec,
    algo_spec,
    get_algo_class,
    get_buffer_class,
    get_policy_class,
    list_algos,
    list_buffers,
    list_callbacks,
    list_policies,
    make_algo,
    make_callback,
    register_algo,
    resolve_sb3_class_name,
)

EVERYTHING = """
from lit_sb3_core import hookimpl

class Recurrent:
    pass

class LstmPolicy:
    pass

class Eval:
    def __init__(self, every=1):
        self.every = every

class Her:
    pass

@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add("recurrent_ppo", "MODULE:Recurrent", description="PPO with memory", aliases=("ppo_lstm",))

@hookimpl
def lit_sb3_register_policies(registry):
    registry.add(algo="recurrent_ppo", alias="MlpLstmPolicy", target="MODULE:LstmPolicy")

@hookimpl
def lit_sb3_register_callbacks(registry):
    registry.add("fake_eval", "MODULE:Eval", description="evaluate")

@hookimpl
def lit_sb3_register_buffers(registry):
    registry.add("her", "MODULE:Her")
"""


def same_name(plugin: str, cls: str = "Same") -> str:
    return f"""
from lit_sb3_core import hookimpl

class {cls}:
    pass

@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add("same", "MODULE:{cls}", description="from {plugin}")
"""


class UserAlgo:
    def __init__(self, **kwargs: object) -> None:
        self.kwargs = kwargs


# --- lookup -------------------------------------------------------------------------------------------


def test_lookup_is_case_insensitive(fake_plugins) -> None:
    module = fake_plugins.add("alpha", fake_plugins.ALPHA)

    assert make_algo("ALPHA", gamma=0.9).kwargs == {"gamma": 0.9}
    assert get_algo_class(" Alpha ").__module__ == module
    assert get_algo_class("ALPHA/Alpha") is get_algo_class("alpha")
    assert list_algos("AL*") == ["alpha"]


def test_algo_spec_describes_without_importing(fake_plugins) -> None:
    module = fake_plugins.add(
        "lazy",
        """
        from lit_sb3_core import hookimpl

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            registry.add("lazy", "MODULE_heavy.deep:Lazy", description="never imported")
        """,
    )
    spec = algo_spec("lazy")
    assert spec == AlgoSpec(
        "lazy", f"{module}_heavy.deep:Lazy", "never imported", "lazy", "lit-sb3-lazy", "0.1.0"
    )
    assert spec.class_name == "Lazy"
    assert AlgoSpec("x", "pkg.mod:Outer.Inner", "", "p", "", "").class_name == "Inner"


def test_a_name_two_plugins_provide_is_ambiguous(fake_plugins) -> None:
    first = fake_plugins.add("first", same_name("first"), distribution="lit-sb3-first")
    fake_plugins.add("second", same_name("second"), distribution="lit-sb3-second")

    with pytest.raises(AmbiguousNameError) as caught:
        get_algo_class("same")
    message = str(caught.value)
    assert isinstance(caught.value, KeyError)
    assert "plugin 'first' (lit-sb3-first)" in message and "plugin 'second' (lit-sb3-second)" in message
    assert "first/same or second/same" in message
    assert get_algo_class("first/same").__module__ == first
    assert algo_spec("second/SAME").description == "from second"
    assert list_algos().count("same") == 1


def test_the_same_target_from_two_plugins_is_not_ambiguous(fake_plugins) -> None:
    body = """
        from lit_sb3_core import hookimpl

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            registry.add("shared", "lit_sb3_core.errors:LitSb3Error")
        """
    fake_plugins.add("first", body)
    fake_plugins.add("second", body)
    assert get_algo_class("shared").__name__ == "LitSb3Error"


def test_an_unknown_name_suggests_lists_and_hints(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    fake_plugins.add("broken", "raise RuntimeError('no GPU here')\n", distribution="lit-sb3-broken")

    with pytest.warns(LitSb3PluginWarning), pytest.raises(UnknownNameError) as caught:
        make_algo("alhpa")
    error = caught.value
    assert isinstance(error, KeyError)
    assert error.suggestions == ["alpha"]
    message = str(error)
    assert message.startswith("Unknown algorithm 'alhpa'. Did you mean 'alpha'?")
    assert "Available algorithms: alpha" in message
    assert "broken (lit-sb3-broken 0.1.0): failed: " in message and "no GPU here" in message

    with pytest.raises(UnknownNameError, match="pip install lit-sb3-sac") as caught:
        make_algo("SAC")
    assert caught.value.distribution == "lit-sb3-sac"


def test_an_unknown_name_says_when_its_first_party_plugin_is_broken(fake_plugins) -> None:
    fake_plugins.add("sac", "raise ImportError('torch too old')\n", distribution="lit-sb3-sac")
    with pytest.warns(LitSb3PluginWarning), pytest.raises(UnknownNameError) as caught:
        get_algo_class("sac")
    message = str(caught.value)
    assert "lit-sb3-sac, which is installed but was not loaded (failed" in message
    assert "torch too old" in message
    assert "pip install" not in message


def test_an_unknown_plugin_qualified_name(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    with pytest.raises(
        UnknownNameError, match=r"Unknown algorithm 'alpah/alpha'\. Did you mean 'alpha/alpha'\?"
    ):
        get_algo_class("alpah/alpha")


def test_aliases_resolve_to_the_registration(fake_plugins) -> None:
    fake_plugins.add("recurrent", EVERYTHING)

    assert get_algo_class("PPO_LSTM") is get_algo_class("recurrent_ppo")
    assert algo_spec("ppo_lstm").name == "recurrent_ppo"
    assert algo_spec("ppo_lstm").aliases == ("ppo_lstm",)
    assert list_algos() == ["recurrent_ppo"]


def test_a_target_that_fails_to_import_names_its_plugin(fake_plugins) -> None:
    fake_plugins.add(
        "ghost",
        """
        from lit_sb3_core import hookimpl

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            registry.add("ghost", "lit_sb3_ghost_module:Ghost")
            registry.add("missing_attr", "lit_sb3_core.errors:Ghost")
        """,
        version="2.0",
    )
    with pytest.raises(TargetImportError) as caught:
        make_algo("ghost")
    message = str(caught.value)
    assert isinstance(caught.value, ImportError)
    assert "plugin 'ghost' (lit-sb3-ghost 2.0)" in message and "'lit_sb3_ghost_module:Ghost'" in message
    assert "LIT_SB3_BLOCK_PLUGINS=ghost" in message
    with pytest.raises(TargetImportError, match="AttributeError"):
        get_algo_class("missing_attr")


# --- register_algo ------------------------------------------------------------------------------------


def test_register_algo_from_user_code(fresh_registry: None) -> None:
    register_algo("Mine", UserAlgo, description="my own")
    register_algo("mine_lazy", "tests_nowhere.mod:Mine")

    assert make_algo("mine", x=1).kwargs == {"x": 1}
    spec = algo_spec("mine")
    assert (spec.plugin, spec.class_name, spec.description) == ("user", "UserAlgo", "my own")
    assert get_algo_class("user/mine") is UserAlgo
    with pytest.raises(TargetImportError, match="check the target given to register_algo"):
        get_algo_class("mine_lazy")


def test_register_algo_refuses_a_taken_name_unless_override(fake_plugins) -> None:
    module = fake_plugins.add("alpha", fake_plugins.ALPHA)

    with pytest.raises(DuplicateNameError, match="'alpha' is already registered by 'alpha'") as caught:
        register_algo("ALPHA", UserAlgo)
    assert isinstance(caught.value, ValueError)

    register_algo("alpha", UserAlgo, override=True)
    assert get_algo_class("alpha") is UserAlgo
    assert get_algo_class("alpha/alpha").__module__ == module  # the plugin's stays reachable

    class Newer(UserAlgo):
        pass

    with pytest.raises(DuplicateNameError):
        register_algo("alpha", Newer)
    register_algo("alpha", Newer, override=True)
    assert get_algo_class("alpha") is Newer
    assert [spec.plugin for spec in _registry._all_algo_specs()] == ["alpha", "user"]


@pytest.mark.parametrize(
    ("name", "target"),
    [("a/b", UserAlgo), ("", UserAlgo), ("ok", "no_colon"), ("ok", "mod:"), ("ok", 42)],
)
def test_register_algo_rejects_malformed_input(fresh_registry: None, name: str, target: object) -> None:
    with pytest.raises(RegistrationError):
        register_algo(name, target)  # type: ignore[arg-type]


# --- policies, callbacks, buffers ---------------------------------------------------------------------


def test_policy_aliases_per_algorithm(fake_plugins) -> None:
    module = fake_plugins.add("recurrent", EVERYTHING)

    policy = get_policy_class("recurrent_ppo", "MlpLstmPolicy")
    assert policy is not None and policy.__module__ == module
    assert get_policy_class("PPO_LSTM", "mlplstmpolicy") is policy
    assert get_policy_class("recurrent_ppo", "recurrent/MlpLstmPolicy") is policy
    assert get_policy_class("recurrent_ppo", "CnnPolicy") is None
    assert get_policy_class("ppo", "MlpLstmPolicy") is None
    assert list_policies("recurrent_ppo") == ["MlpLstmPolicy"]
    assert list_policies("unknown") == []


def test_callbacks_by_name(fake_plugins) -> None:
    fake_plugins.add("recurrent", EVERYTHING)

    assert "fake_eval" in list_callbacks() and "eval" in list_callbacks()  # core registers SB3's callbacks
    assert make_callback("FAKE_EVAL", every=5).every == 5
    with pytest.raises(UnknownNameError, match=r"Unknown callback 'fake_evl'\. Did you mean 'fake_eval'"):
        make_callback("fake_evl")


def test_buffers_by_name(fake_plugins) -> None:
    fake_plugins.add("recurrent", EVERYTHING)
    assert list_buffers() == ["dict_replay_buffer", "her", "replay_buffer"]
    assert get_buffer_class("HER").__name__ == "Her"


def test_an_unknown_buffer_names_its_distribution(fake_plugins) -> None:
    with pytest.raises(UnknownNameError, match="pip install lit-sb3-her"):
        get_buffer_class("her")


# --- SB3 class names ----------------------------------------------------------------------------------


def test_sb3_class_names_resolve_through_the_registry(fake_plugins) -> None:
    fake_plugins.add("ppo", same_name("ppo", cls="PPO").replace('"same"', '"ppo"'))
    assert resolve_sb3_class_name("PPO").__name__ == "PPO"


def test_a_third_party_class_name_resolves(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    assert resolve_sb3_class_name("Alpha").__name__ == "Alpha"


def test_a_missing_sb3_class_says_what_to_install(fake_plugins) -> None:
    with pytest.raises(MissingPluginError) as caught:
        resolve_sb3_class_name("MaskablePPO")
    assert isinstance(caught.value, ImportError)
    assert str(caught.value) == (
        "MaskablePPO is provided by the plugin lit-sb3-ppo-mask, which is not installed: "
        "pip install lit-sb3-ppo-mask"
    )
    with pytest.raises(
        MissingPluginError, match="No installed plugin provides an algorithm class named 'Nope'"
    ):
        resolve_sb3_class_name("Nope")


def test_the_name_tables_agree() -> None:
    assert set(SB3_CLASS_NAMES.values()) <= set(FIRST_PARTY)
    assert all(name == name.lower() for name in FIRST_PARTY)


def test_a_misspelled_first_party_name_gets_the_install_hint(fake_plugins) -> None:
    with pytest.raises(UnknownNameError) as caught:
        make_algo("sacc")
    assert str(caught.value).startswith(
        "Unknown algorithm 'sacc'. Did you mean 'sac'?\n"
        "'sac' is provided by the first-party plugin lit-sb3-sac: pip install lit-sb3-sac"
    )
    with pytest.raises(UnknownNameError) as caught:
        make_algo("tqc")
    assert caught.value.suggestions == []  # the exact first-party name needs no guessing
