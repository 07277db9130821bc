"""The conformance kit catches what it promises to: each check fails for a plugin that breaks its rule.

Plugins here are real distributions (``*.dist-info`` folders with ``lit_sb3`` entry points on a temporary
``sys.path`` entry), discovered next to the installed ones (PPO among them). The fake algorithms are PPO
with one thing broken; a kit subclass is instantiated and its checks are called directly.
"""

from __future__ import annotations

import importlib
import itertools
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lit_sb3_core.testing import (
    AlgorithmConformance,
    CallbackConformance,
    PluginConformance,
    PolicyConformance,
    SpaceTestEnv,
    space_cases,
)

_counter = itertools.count()

ALGORITHMS = """
import time

import torch
from gymnasium import spaces
from lit_sb3_core.sdk import OffPolicyAlgorithm
from lit_sb3_dqn.dqn import DQN
from lit_sb3_ppo.ppo import PPO


class Good(PPO):
    algo_name = "kit_good"


class WrongName(PPO):
    algo_name = "something_else"


class NotAnAlgorithm:
    algo_name = "kit_not_algorithm"


class Unseeded(PPO):
    algo_name = "kit_unseeded"

    def setup_model(self):
        super().setup_model()
        generator = torch.Generator().manual_seed(time.perf_counter_ns())
        with torch.no_grad():
            self.policy.action_net.weight.normal_(generator=generator)


class ForgetsBonus(PPO):
    algo_name = "kit_forgets_bonus"

    def __init__(self, policy="MlpPolicy", env=None, bonus=0.0, n_steps=2048, batch_size=64, seed=None):
        self.bonus = bonus
        super().__init__(policy=policy, env=env, n_steps=n_steps, batch_size=batch_size, seed=seed)
        self.hparams.pop("bonus")


class ExtraHyperparameter(PPO):
    algo_name = "kit_extra_hyperparameter"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hparams["note"] = "not a constructor argument"


class ClaimsMultiBinary(PPO):
    algo_name = "kit_claims_multibinary"

    def train_on_rollout(self):
        if isinstance(self.action_space, spaces.MultiBinary):
            raise RuntimeError("MultiBinary actions are not implemented")
        return super().train_on_rollout()


class AcceptsAnything(PPO):
    algo_name = "kit_accepts_anything"
    supported_action_spaces = (spaces.Discrete,)

    def check_spaces(self, observation_space, action_space):
        pass


class RestartsOnResume(PPO):
    algo_name = "kit_restarts_on_resume"

    def on_load_checkpoint(self, checkpoint):
        super().on_load_checkpoint(checkpoint)
        self.num_timesteps = self.iterations = self.n_updates = 0


class NeverSteps(PPO):
    algo_name = "kit_never_steps"

    def optimizer_step(self, optimizer, loss, max_grad_norm=None):
        pass  # computes the loss, forgets to step


class TenIterations(PPO):
    algo_name = "kit_ten_iterations"

    def training_step(self, batch, batch_idx):
        for _ in range(10):  # ten rollouts between budget checks
            self.collect_rollout()
            self.iterations += 1
            self.budget.update_progress()
            self.metrics.log_iteration(self.train_on_rollout())
        self.budget.stop_if_reached()


class CollectsAhead(DQN):
    algo_name = "kit_collects_ahead"

    def training_step(self, batch, batch_idx):
        for _ in range(20):  # twenty train_freq chunks before the base loop checks the budget
            self.collect_chunk()
        super().training_step(batch, batch_idx)


class AlwaysGreedy(PPO):
    algo_name = "kit_always_greedy"

    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        return super().predict(observation, state, episode_start, deterministic=True)


class AlwaysSamples(PPO):
    algo_name = "kit_always_samples"

    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        return super().predict(observation, state, episode_start, deterministic=False)


class FewerArguments(OffPolicyAlgorithm):
    # A C51-like off-policy algorithm: no action_noise, replay_buffer_class or train_freq arguments.

    algo_name = "kit_fewer_arguments"
    supported_action_spaces = (spaces.Discrete,)
    policy_aliases = DQN.policy_aliases

    def __init__(self, policy="MlpPolicy", env=None, learning_starts=0, batch_size=32, seed=None):
        super().__init__(
            policy=policy, env=env, learning_starts=learning_starts, batch_size=batch_size, seed=seed
        )

    def configure_optimizers(self):
        return self.make_optimizer(self.policy.q_net.parameters())

    def train_on_buffer(self, gradient_steps, batch_size):
        optimizer = self.optimizers()
        for _ in range(gradient_steps):
            data = self.replay_buffer.sample(batch_size)
            q = self.policy.q_net(data.observations).gather(1, data.actions.long().reshape(-1, 1))
            self.optimizer_step(optimizer, ((q.squeeze(1) - data.rewards.reshape(-1)) ** 2).mean())


class LeaksNoise(FewerArguments):
    algo_name = "kit_leaks_noise"

    def __init__(self, policy="MlpPolicy", env=None, learning_starts=0, batch_size=32, seed=None):
        super().__init__(policy, env, learning_starts, batch_size, seed)
        self.hparams["action_noise"] = None  # the 0.1 base class did this to every off-policy algorithm


class ChangesHparamsInFit(PPO):
    algo_name = "kit_changes_hparams_in_fit"

    def on_fit_start(self):
        super().on_fit_start()
        self.hparams["fitted_on"] = "CartPole-v1"


class TupleOnly(PPO):
    algo_name = "kit_tuple_only"

    def __init__(self, widths=(8,), **kwargs):
        if not isinstance(widths, tuple):
            raise ValueError(f"widths must be a tuple, got {widths!r}")
        super().__init__(policy_kwargs={"net_arch": list(widths)}, **kwargs)
        self.hparams.pop("policy_kwargs")


class UnsavedState(PPO):
    algo_name = "kit_unsaved_state"
    flipped = False

    def train_on_rollout(self):
        self.flipped = True  # learned state outside the module's state: lost by save/load
        return super().train_on_rollout()

    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        actions, state = super().predict(observation, state, episode_start, deterministic)
        return (1 - actions if self.flipped else actions), state
"""

EXTRAS = """
from lightning.pytorch.callbacks import Callback
from lit_sb3_core.sb3.callbacks import RLCallback
from lit_sb3_core.nets.actor_critic import ActorCriticPolicy


class SmallPolicy(ActorCriticPolicy):
    def __init__(self, observation_space, action_space, **kwargs):
        super().__init__(observation_space, action_space, net_arch=[8], **kwargs)


class FrozenPolicy(SmallPolicy):
    # Only the value head trains (and with vf_coef=0 it gets zero gradients): the policy never changes.

    def __init__(self, observation_space, action_space, **kwargs):
        super().__init__(observation_space, action_space, **kwargs)
        self.requires_grad_(False)
        self.value_net.requires_grad_(True)


class NotAModule:
    pass


class StopAfter(RLCallback):
    def __init__(self, calls=None):
        super().__init__()
        self.limit = calls

    def _on_step(self):
        return self.limit is None or self.n_calls < self.limit


class IgnoresStop(StopAfter):
    def on_step(self):
        super().on_step()
        return True  # asks to stop, but never tells the loop


class NotACallback:
    def __init__(self, calls=None):
        pass
"""

PLUGIN = """
from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def {hook}(registry):
    {body}
"""


class KitPlugins:
    """Writes modules and real plugin distributions (``*.dist-info`` with a ``lit_sb3`` entry point)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: list[str] = []
        self.algorithms = self.module("kit_algorithms", ALGORITHMS)
        self.extras = self.module("kit_extras", EXTRAS)

    def module(self, stem: str, source: str) -> str:
        """Write ``source`` as a new module; returns its (unique) name."""
        name = f"{stem}_{next(_counter)}"
        (self.root / f"{name}.py").write_text(textwrap.dedent(source))
        self.modules.append(name)
        return name

    def add(
        self, name: str, body: str, hook: str = "lit_sb3_register_algorithms", source: str | None = None
    ) -> str:
        """Install plugin ``name`` (distribution ``lit-sb3-<name>``) whose ``hook`` runs ``body``.

        ``ALGOS`` and ``EXTRAS`` in ``body`` name the modules above; returns the plugin's module name.
        """
        body = body.replace("ALGOS", self.algorithms).replace("EXTRAS", self.extras)
        module = self.module(f"kit_plugin_{name}", source or PLUGIN.format(hook=hook, body=body))
        dist_info = self.root / f"{module}-0.1.0.dist-info"
        dist_info.mkdir()
        metadata = ["Metadata-Version: 2.1", f"Name: lit-sb3-{name}", "Version: 0.1.0"]
        (dist_info / "METADATA").write_text(
            "\n".join([*metadata, "Requires-Dist: lit-sb3-core>=0.2,<0.3", ""])
        )
        (dist_info / "entry_points.txt").write_text(f"[lit_sb3]\n{name} = {module}\n")
        importlib.invalidate_caches()
        return module

    def algorithm(self, name: str, cls: str) -> None:
        self.add(name, f'registry.add("{name}", "ALGOS:{cls}")')


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> Iterator[KitPlugins]:
    """Fake plugin distributions visible to discovery, to ``importlib.metadata`` and to child processes."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", str(root))
    plugins = KitPlugins(root)
    yield plugins
    for module in plugins.modules:
        sys.modules.pop(module, None)


def algorithm_kit(name: str, **attributes: Any) -> AlgorithmConformance:
    """An ``AlgorithmConformance`` subclass instance for plugin ``name`` with small settings."""
    defaults = {
        "algo_name": name,
        "distribution": f"lit-sb3-{name}",
        "algo_kwargs": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
        "learn_steps": 64,
    }
    return type(f"Test_{name}", (AlgorithmConformance,), {**defaults, **attributes})()


# configuration --------------------------------------------------------------------------------------
def test_every_kit_starts_with_the_plugin_checks() -> None:
    plugin_checks = set(PluginConformance.check_names())
    assert plugin_checks == {
        "test_entry_point_installed",
        "test_hooks_match_specs",
        "test_plugin_loaded_without_errors",
        "test_plugin_module_imports_nothing_heavy",
    }
    for kit_class in (AlgorithmConformance, PolicyConformance, CallbackConformance):
        assert plugin_checks < set(kit_class.check_names())


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"algo_name": ""}, "must set algo_name"),
        ({"skip": {"test_checkpoint_resume": ""}}, r"skip\['test_checkpoint_resume'\] needs a reason"),
        ({"skip": {"test_checkpoint_resume": None}}, "needs a reason"),
        ({"skip": {"test_checkpont_resume": "typo"}}, "not a check of .*test_checkpoint_resume"),
        ({"skip": ["test_checkpoint_resume"]}, "must be a dict"),
    ],
)
def test_a_subclass_is_refused_until_it_is_configured_properly(attributes: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        algorithm_kit("ppo", **attributes).check_configuration()


def test_policy_and_callback_kits_name_their_required_attributes() -> None:
    with pytest.raises(TypeError, match="must set policy_alias"):
        type("T", (PolicyConformance,), {"algo_name": "ppo", "distribution": "x"})().check_configuration()
    with pytest.raises(TypeError, match="must set callback_name, distribution"):
        type("T", (CallbackConformance,), {})().check_configuration()


def test_a_check_is_skipped_only_with_its_reason(tmp_path: Path) -> None:
    """Through pytest itself: the kit's autouse fixture turns ``skip`` into a reported skip (or an error)."""
    (tmp_path / "test_skips.py").write_text(
        textwrap.dedent(
            """
            from lit_sb3_core.testing import AlgorithmConformance

            class TestWithReason(AlgorithmConformance):
                algo_name = "ppo"
                distribution = "lit-sb3-ppo"
                skip = {"test_checkpoint_resume": "resuming is not supported yet"}

            class TestWithoutReason(AlgorithmConformance):
                algo_name = "ppo"
                distribution = "lit-sb3-ppo"
                skip = {"test_checkpoint_resume": " "}
            """
        )
    )
    reports: list[Any] = []

    class Recorder:
        def pytest_runtest_logreport(self, report: Any) -> None:
            if report.when == "setup":
                reports.append(report)

    pytest.main(
        [str(tmp_path), "-q", "-p", "no:cacheprovider", "-k", "test_checkpoint_resume"], plugins=[Recorder()]
    )
    outcomes = {report.nodeid.split("::")[1]: report for report in reports}
    assert outcomes["TestWithReason"].skipped
    assert "resuming is not supported yet" in str(outcomes["TestWithReason"].longrepr)
    assert outcomes["TestWithoutReason"].failed
    assert "needs a reason" in str(outcomes["TestWithoutReason"].longrepr)


# discovery ------------------------------------------------------------------------------------------
def test_a_conforming_plugin_passes_the_discovery_checks(kit: KitPlugins) -> None:
    kit.algorithm("kit_good", "Good")
    checks = algorithm_kit("kit_good")
    for name in [*PluginConformance.check_names(), "test_registers_name", "test_target_is_rl_algorithm"]:
        getattr(checks, name)()
    checks.test_undeclared_spaces_refused()


def test_a_missing_entry_point_is_reported_with_the_fix(kit: KitPlugins) -> None:
    with pytest.raises(AssertionError, match=r"no entry point 'kit_absent'.*pip install -e"):
        algorithm_kit("kit_absent").test_entry_point_installed()


def test_an_entry_point_of_another_distribution_is_not_yours(kit: KitPlugins) -> None:
    kit.algorithm("kit_good", "Good")
    with pytest.raises(AssertionError, match=r"comes from .*lit-sb3-kit_good.*not from lit-sb3-other"):
        algorithm_kit("kit_good", distribution="lit-sb3-other").test_entry_point_installed()


def test_a_plugin_module_that_imports_torch_fails(kit: KitPlugins) -> None:
    kit.algorithm("kit_heavy", "Good")
    heavy = kit.add(
        "kit_heavy2",
        "",
        source="import torch\nfrom lit_sb3_core.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef lit_sb3_register_algorithms(registry):\n"
        f'    registry.add("kit_heavy2", "{kit.algorithms}:Good")\n',
    )
    algorithm_kit("kit_heavy").test_plugin_module_imports_nothing_heavy()
    with pytest.raises(AssertionError, match=rf"the plugin module {heavy} imports \['torch'\]"):
        algorithm_kit("kit_heavy2").test_plugin_module_imports_nothing_heavy()


def test_an_unknown_hook_fails_discovery_and_the_hook_check(kit: KitPlugins) -> None:
    kit.add("kit_typo", 'registry.add("kit_typo", "ALGOS:Good")', hook="lit_sb3_register_algoritms")
    checks = algorithm_kit("kit_typo")
    with (
        pytest.warns(UserWarning, match="unknown hook"),
        pytest.raises(AssertionError, match=r"kit_typo: failed: .*unknown hook"),
    ):
        checks.test_plugin_loaded_without_errors()
    with pytest.raises(AssertionError, match=r"unknown hook.*lit_sb3_register_algoritms.*a typo"):
        checks.test_hooks_match_specs()


def test_a_hook_taking_arguments_the_spec_does_not_pass_fails(kit: KitPlugins) -> None:
    kit.add(
        "kit_extra_arg",
        "",
        source="def lit_sb3_register_algorithms(registry, config):\n"
        f'    registry.add("kit_extra_arg", "{kit.algorithms}:Good")\n',
    )
    with pytest.raises(AssertionError, match=r"takes \['config'\], which the hook does not pass"):
        algorithm_kit("kit_extra_arg").test_hooks_match_specs()


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        ("NotAnAlgorithm", "not a subclass of lit_sb3_core.RLAlgorithm"),
        ("WrongName", "set the ClassVar algo_name"),
    ],
)
def test_the_target_must_be_the_rl_algorithm_of_that_name(kit: KitPlugins, cls: str, message: str) -> None:
    kit.algorithm("kit_target", cls)
    with pytest.raises(AssertionError, match=message):
        algorithm_kit("kit_target").test_target_is_rl_algorithm()


# behaviour ------------------------------------------------------------------------------------------
def test_unseeded_randomness_is_caught(kit: KitPlugins, tmp_path: Path) -> None:
    kit.algorithm("kit_unseeded", "Unseeded")
    checks = algorithm_kit("kit_unseeded")
    with pytest.raises(AssertionError, match="the same seed gave different parameters"):
        checks.test_seed_reproducible()
    with pytest.raises(AssertionError, match="built a different initial policy"):
        checks.test_hyperparameters_rebuild_the_model(tmp_path)


def test_hyperparameters_must_be_saved_and_be_the_constructor_arguments(
    kit: KitPlugins, tmp_path: Path
) -> None:
    kit.algorithm("kit_forgets_bonus", "ForgetsBonus")
    kit.algorithm("kit_extra_hyperparameter", "ExtraHyperparameter")
    forgets = algorithm_kit("kit_forgets_bonus", algo_kwargs={"bonus": 1.0, "n_steps": 32, "batch_size": 32})
    with pytest.raises(AssertionError, match="hyperparameter 'bonus' not saved"):
        forgets.test_hyperparameters_saved_as_plain_values()
    with pytest.raises(
        AssertionError,
        match=r"(?s)ExtraHyperparameter\(\*\*hyperparameters\).*Saved, but not arguments .*'note'",
    ):
        algorithm_kit("kit_extra_hyperparameter").test_hyperparameters_rebuild_the_model(tmp_path)


def test_a_declared_space_that_fails_is_named(kit: KitPlugins) -> None:
    kit.algorithm("kit_claims_multibinary", "ClaimsMultiBinary")
    with pytest.raises(
        AssertionError, match="declares support for MultiBinary observations, MultiBinary actions but failed"
    ):
        algorithm_kit("kit_claims_multibinary").test_learn_and_predict_on_declared_spaces()


def test_accepting_undeclared_spaces_is_caught(kit: KitPlugins) -> None:
    kit.algorithm("kit_accepts_anything", "AcceptsAnything")
    with pytest.raises(
        AssertionError, match="does not declare Box observations, Box actions but accepted them"
    ):
        algorithm_kit("kit_accepts_anything").test_undeclared_spaces_refused()


def test_a_resume_that_restarts_the_counters_is_caught(kit: KitPlugins, tmp_path: Path) -> None:
    kit.algorithm("kit_restarts_on_resume", "RestartsOnResume")
    with pytest.raises(
        AssertionError,
        match=r"(?s)started with counters \{'num_timesteps': 0, 'iterations': 0, 'n_updates': 0\}, but the "
        r"checkpoint was written at \{'num_timesteps': 64, 'iterations': 2, 'n_updates': 2\}.*"
        r"super\(\).on_load_checkpoint",
    ):
        algorithm_kit("kit_restarts_on_resume").test_checkpoint_resume(tmp_path)


def test_a_plugin_that_never_steps_its_optimizer_is_caught(kit: KitPlugins, tmp_path: Path) -> None:
    kit.algorithm("kit_never_steps", "NeverSteps")
    with pytest.raises(
        AssertionError,
        match=r"(?s)64-step fit on CartPole-v1 never stepped optimizer 0 \(Adam over "
        r"policy\.mlp_extractor.*, \.\.\.\) of the 1 .*self\.optimizer_step\(optimizer, loss\)",
    ):
        algorithm_kit("kit_never_steps").test_learning_changes_the_weights(tmp_path)


@pytest.mark.parametrize(
    ("name", "cls", "kwargs", "unit"),
    [
        ("kit_ten_iterations", "TenIterations", {"n_steps": 16, "batch_size": 16, "n_epochs": 1}, 16),
        ("kit_collects_ahead", "CollectsAhead", {"train_freq": 4, "learning_starts": 0}, 4),
    ],
)
def test_overshooting_the_budget_is_caught(
    kit: KitPlugins, tmp_path: Path, name: str, cls: str, kwargs: dict, unit: int
) -> None:
    kit.algorithm(name, cls)
    checks = algorithm_kit(name, algo_kwargs=kwargs)
    message = rf"(?s)past the budget, more than one collection unit \({unit} env steps\).*num_timesteps >= "
    with pytest.raises(AssertionError, match=message):
        checks.test_learn_and_predict()
    with pytest.raises(AssertionError, match=message):
        checks.test_learning_changes_the_weights(tmp_path)


def test_predict_that_ignores_deterministic_is_caught(kit: KitPlugins) -> None:
    kit.algorithm("kit_always_greedy", "AlwaysGreedy")
    kit.algorithm("kit_always_samples", "AlwaysSamples")
    with pytest.raises(
        AssertionError,
        match=r"(?s)deterministic=False\) gave the deterministic actions.*stochastic_policy = False",
    ):
        algorithm_kit("kit_always_greedy").test_predict_honours_deterministic()
    algorithm_kit("kit_always_greedy", stochastic_policy=False).test_predict_honours_deterministic()
    with pytest.raises(AssertionError, match=r"deterministic=True\) gave different actions.*mode"):
        algorithm_kit("kit_always_samples").test_predict_honours_deterministic()


def test_an_off_policy_algorithm_with_fewer_arguments_rebuilds(kit: KitPlugins, tmp_path: Path) -> None:
    """The base class saves action_noise, replay_buffer_class and train_freq only for constructors taking them."""
    kit.algorithm("kit_fewer_arguments", "FewerArguments")
    checks = algorithm_kit("kit_fewer_arguments", algo_kwargs={"batch_size": 16}, learn_steps=32)
    assert set(checks.make_model("CartPole-v1").hparams) == {
        "policy",
        "learning_starts",
        "batch_size",
        "seed",
    }
    checks.test_hyperparameters_rebuild_the_model(tmp_path)
    checks.test_checkpoint_resume(tmp_path)


def test_hyperparameters_that_do_not_rebuild_are_named_with_the_fix(kit: KitPlugins, tmp_path: Path) -> None:
    kit.algorithm("kit_leaks_noise", "LeaksNoise")
    kit.algorithm("kit_changes_hparams_in_fit", "ChangesHparamsInFit")
    kit.algorithm("kit_tuple_only", "TupleOnly")
    with pytest.raises(
        AssertionError,
        match=r"(?s)LeaksNoise\(\*\*hyperparameters\) with the hyperparameters from model.hparams failed.*"
        r"Saved, but not arguments of LeaksNoise.__init__: \['action_noise'\].*written into self.hparams "
        r"after super\(\).__init__\(\).*if name in self.hparams",
    ):
        algorithm_kit(
            "kit_leaks_noise", algo_kwargs={"batch_size": 16}
        ).test_hyperparameters_rebuild_the_model(tmp_path)
    # Rebuilds from model.hparams and from a model file, but not from a checkpoint written after fit started.
    changes = algorithm_kit("kit_changes_hparams_in_fit")
    changes.test_hyperparameters_rebuild_the_model(tmp_path / "a")
    with pytest.raises(AssertionError, match=r"(?s)from the checkpoint last.ckpt failed.*\['fitted_on'\]"):
        changes.test_checkpoint_resume(tmp_path / "b")
    # A tuple survives model.hparams but comes back from the model file's JSON as a list.
    with pytest.raises(
        AssertionError,
        match=r"(?s)from the model file model.zip failed: ValueError: widths must be a tuple.*"
        r"The keys fit, so a saved value was refused",
    ):
        algorithm_kit("kit_tuple_only", algo_kwargs={"n_steps": 32}).test_hyperparameters_rebuild_the_model(
            tmp_path / "c"
        )


def test_state_lost_by_save_and_load_is_caught(kit: KitPlugins, tmp_path: Path) -> None:
    kit.algorithm("kit_unsaved_state", "UnsavedState")
    with pytest.raises(AssertionError, match="Arrays are not equal"):
        algorithm_kit("kit_unsaved_state").test_save_load_round_trip(tmp_path)


# the test envs --------------------------------------------------------------------------------------
def test_space_cases_cover_every_declared_kind_with_few_envs() -> None:
    from gymnasium import spaces
    from gymnasium.utils.env_checker import check_env

    everything = space_cases(
        (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Dict),
        (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary),
    )
    assert [case.label for case in everything] == [
        "Box observations, Box actions",
        "Discrete observations, Discrete actions",
        "MultiDiscrete observations, MultiDiscrete actions",
        "MultiBinary observations, MultiBinary actions",
        "Dict observations, Box actions",
    ]
    assert [c.label for c in space_cases((spaces.Box,), (spaces.Discrete,))] == [
        "Box observations, Discrete actions"
    ]
    assert space_cases((spaces.Graph,), (spaces.Box,)) == []
    for case in everything:
        check_env(case.make_env(), skip_render_check=True)
    env = SpaceTestEnv(spaces.Box(-1, 1, (2,)), spaces.MultiDiscrete([3, 2]))
    env.reset(seed=0)
    assert env.action_masks().tolist() == [True] * 5
    with pytest.raises(ValueError, match="not in its action space MultiDiscrete"):
        env.step([3, 0])


# policy and callback kits ---------------------------------------------------------------------------
def policy_kit(name: str, alias: str, **attributes: Any) -> PolicyConformance:
    defaults = {
        "algo_name": "ppo",
        "policy_alias": alias,
        "distribution": f"lit-sb3-{name}",
        "algo_kwargs": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
        "learn_steps": 64,
    }
    return type(f"Test_{name}", (PolicyConformance,), {**defaults, **attributes})()


def register_policy(kit: KitPlugins, name: str, alias: str, target: str) -> None:
    body = f'registry.add(algo="ppo", alias="{alias}", target="EXTRAS:{target}")'
    kit.add(name, body, hook="lit_sb3_register_policies")


def test_a_conforming_policy_plugin_passes_every_check(kit: KitPlugins, tmp_path: Path) -> None:
    register_policy(kit, "kit_small_policy", "SmallPolicy", "SmallPolicy")
    checks = policy_kit("kit_small_policy", "SmallPolicy")
    for name in PolicyConformance.check_names():
        method = getattr(checks, name)
        method(tmp_path) if "tmp_path" in method.__code__.co_varnames else method()


def test_broken_policy_plugins_are_caught(kit: KitPlugins) -> None:
    register_policy(kit, "kit_shadow", "MlpPolicy", "SmallPolicy")
    register_policy(kit, "kit_frozen", "FrozenPolicy", "FrozenPolicy")
    register_policy(kit, "kit_not_module", "NotAModule", "NotAModule")
    with pytest.raises(AssertionError, match="already one of ppo's own aliases"):
        policy_kit("kit_shadow", "MlpPolicy").test_alias_resolves_to_a_module_class()
    with pytest.raises(AssertionError, match="left every parameter unchanged"):
        frozen = policy_kit(
            "kit_frozen", "FrozenPolicy", algo_kwargs={"n_steps": 32, "batch_size": 32, "vf_coef": 0.0}
        )
        frozen.test_learning_changes_the_policy()
    with pytest.raises(AssertionError, match=re.escape("not a torch.nn.Module subclass")):
        policy_kit("kit_not_module", "NotAModule").test_alias_resolves_to_a_module_class()
    with pytest.raises(AssertionError, match="no policy 'Absent' is registered for 'ppo'"):
        policy_kit("kit_frozen", "Absent").policy_class()


def callback_kit(name: str, **attributes: Any) -> CallbackConformance:
    defaults = {
        "callback_name": name,
        "distribution": f"lit-sb3-{name}",
        "algo_name": "ppo",
        "algo_kwargs": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
        "learn_steps": 64,
        "stop_kwargs": {"calls": 1},
    }
    return type(f"Test_{name}", (CallbackConformance,), {**defaults, **attributes})()


def register_callback(kit: KitPlugins, name: str, target: str) -> None:
    kit.add(name, f'registry.add("{name}", "EXTRAS:{target}")', hook="lit_sb3_register_callbacks")


def test_a_conforming_callback_plugin_passes_every_check(kit: KitPlugins, tmp_path: Path) -> None:
    register_callback(kit, "kit_stop_after", "StopAfter")
    checks = callback_kit("kit_stop_after")
    for name in CallbackConformance.check_names():
        method = getattr(checks, name)
        method(tmp_path) if "tmp_path" in method.__code__.co_varnames else method()


def test_broken_callback_plugins_are_caught(kit: KitPlugins, tmp_path: Path) -> None:
    register_callback(kit, "kit_ignores_stop", "IgnoresStop")
    register_callback(kit, "kit_not_callback", "NotACallback")
    with pytest.raises(AssertionError, match="did not stop learn"):
        callback_kit("kit_ignores_stop").test_returning_false_stops_training(tmp_path)
    with pytest.raises(AssertionError, match="not a Lightning Callback"):
        callback_kit("kit_not_callback").test_make_callback_builds_a_lightning_callback()
    with pytest.raises(AssertionError, match=r"set Test_kit_ignores_stop\.stop_kwargs .* or skip this check"):
        callback_kit("kit_ignores_stop", stop_kwargs=None).test_returning_false_stops_training(tmp_path)
