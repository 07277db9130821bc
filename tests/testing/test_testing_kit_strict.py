"""The kit fails the plugins it used to pass (issue 27): an unstepped second optimizer, a constructor that
changes its arguments in place, and hyperparameters that Lightning's loggers write but cannot rebuild.

As in ``test_testing_kit.py``, the plugins are real distributions (``*.dist-info`` with a ``lit_sb3`` entry
point) on a temporary ``sys.path`` entry, and a kit subclass's checks are called directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import test_testing_kit
from test_testing_kit import KitPlugins, algorithm_kit

kit = test_testing_kit.kit  # the fixture that installs plugin distributions, shared with the kit's tests

ALGORITHMS = """
import torch
import torch.nn.functional as F
from lit_sb3_ppo.ppo import PPO


class TwoPhases(PPO):
    # A PPG-like plugin: a policy phase and an auxiliary value phase, each with its own optimizer over the
    # same (shared) parameters, as SDK's two-optimizer recipe builds it.

    algo_name = "kit_two_phases"
    steps_auxiliary = True

    def configure_optimizers(self):
        return [self.make_optimizer(self.policy.parameters()), self.make_optimizer(self.policy.parameters())]

    def train_on_rollout(self):
        main, auxiliary = self.optimizers()
        self.update_learning_rate([main, auxiliary])
        for batch in self.rollout.minibatches(self.batch_size):
            values, log_prob, _ = self.policy.evaluate_actions(batch.observations, batch.actions)
            loss = -(log_prob * batch.advantages).mean() + F.mse_loss(values, batch.returns)
            self.optimizer_step(main, loss, self.max_grad_norm)
        for batch in self.rollout.minibatches(self.batch_size):
            auxiliary_loss = self.auxiliary_loss(batch)
            if self.steps_auxiliary:
                self.optimizer_step(auxiliary, auxiliary_loss, self.max_grad_norm)
        self.n_updates += 1
        return {"train/auxiliary_loss": auxiliary_loss.item()}

    def auxiliary_loss(self, batch):
        return F.mse_loss(self.policy.predict_values(batch.observations), batch.returns)


class PhaseSpecific(TwoPhases):
    # The auxiliary phase trains a head of its own, which the policy phase's loss leaves out: under DDP
    # that needs average_gradients_per_step.

    algo_name = "kit_phase_specific"
    average_gradients_per_step = True

    def setup_model(self):
        super().setup_model()
        self.policy.aux_value_net = torch.nn.Linear(self.policy.mlp_extractor.latent_dim_pi, 1)

    def configure_optimizers(self):
        heads = [p for name, p in self.policy.named_parameters() if not name.startswith("aux_value_net")]
        return [self.make_optimizer(heads), self.make_optimizer(self.policy.parameters())]

    def auxiliary_loss(self, batch):
        latent_pi, _ = self.policy.latents(batch.observations)
        return F.mse_loss(self.policy.aux_value_net(latent_pi).squeeze(-1), batch.returns)


class PhaseSpecificOldSwitch(PhaseSpecific):
    algo_name = "kit_phase_specific_old_switch"
    average_gradients_per_step = False
    average_gradients_itself = True  # the 0.2 private name still works


class PhaseSpecificWithoutSwitch(PhaseSpecific):
    algo_name = "kit_phase_specific_without_switch"
    average_gradients_per_step = False


class SkipsAuxiliaryStep(TwoPhases):
    # Computes the auxiliary loss and never steps its optimizer: the main optimizer's steps still move
    # every shared parameter, so "some parameters of every optimizer changed" holds.

    algo_name = "kit_skips_auxiliary_step"
    steps_auxiliary = False


class AuxiliaryHead(PPO):
    def setup_model(self):
        super().setup_model()
        self.policy.auxiliary_head = torch.nn.Linear(self.policy.mlp_extractor.latent_dim_vf, self.auxiliary_width)


class PopsPolicyKwarg(AuxiliaryHead):
    # Takes its setting out of the caller's policy_kwargs in place: the saved policy_kwargs lose it.

    algo_name = "kit_pops_policy_kwarg"

    def __init__(self, policy="MlpPolicy", env=None, policy_kwargs=None, **kwargs):
        self.auxiliary_width = (policy_kwargs or {}).pop("auxiliary_width", 8)
        super().__init__(policy=policy, env=env, policy_kwargs=policy_kwargs, **kwargs)


class CopiesPolicyKwargs(AuxiliaryHead):
    # The fix the kit names: copy first, and save the setting as an argument of its own.

    algo_name = "kit_copies_policy_kwargs"

    def __init__(self, policy="MlpPolicy", env=None, auxiliary_width=8, policy_kwargs=None, **kwargs):
        self.auxiliary_width = auxiliary_width
        policy_kwargs = dict(policy_kwargs or {})
        super().__init__(policy=policy, env=env, policy_kwargs=policy_kwargs, **kwargs)


class KeepsTuple(PPO):
    # Saves a tuple: model.hparams and the model file's JSON rebuild it, hparams.yaml is not plain YAML.

    algo_name = "kit_keeps_tuple"

    def __init__(self, widths=(16,), **kwargs):
        super().__init__(policy_kwargs={"net_arch": list(widths)}, **kwargs)
        self.hparams.pop("policy_kwargs")


class SavesInSetup(PPO):
    # Changes self.hparams when fit sets it up: the file Lightning writes names a key no constructor takes.

    algo_name = "kit_saves_in_setup"

    def setup(self, stage):
        super().setup(stage)
        self.hparams["fitted_on"] = "CartPole-v1"
"""


class Plugins:
    """Installs one-algorithm plugin distributions, through the kit tests' ``KitPlugins``, whose classes
    live in ``ALGORITHMS``."""

    def __init__(self, kit: KitPlugins) -> None:
        self.kit = kit
        self.algorithms = kit.module("kit_strict_algorithms", ALGORITHMS)

    def algorithm(self, name: str, cls: str) -> None:
        self.kit.add(name, f'registry.add("{name}", "{self.algorithms}:{cls}")')


@pytest.fixture
def plugins(kit: KitPlugins) -> Plugins:
    return Plugins(kit)


def test_an_auxiliary_optimizer_that_never_steps_is_caught(plugins: Plugins, tmp_path: Path) -> None:
    plugins.algorithm("kit_two_phases", "TwoPhases")
    plugins.algorithm("kit_skips_auxiliary_step", "SkipsAuxiliaryStep")
    algorithm_kit("kit_two_phases").test_learning_changes_the_weights(tmp_path / "good")
    with pytest.raises(
        AssertionError,
        match=r"(?s)64-step fit on CartPole-v1 never stepped optimizer 1 \(Adam over policy\..*\) of the 2 "
        r"that configure_optimizers returns \(steps per optimizer: \[2, 0\]\): every optimizer a plugin "
        r"returns must step\. Call self\.optimizer_step\(optimizer, loss\) for it.*or stop returning it",
    ):
        algorithm_kit("kit_skips_auxiliary_step").test_learning_changes_the_weights(tmp_path / "bad")


def test_a_constructor_that_pops_from_policy_kwargs_in_place_is_caught(
    plugins: Plugins, tmp_path: Path
) -> None:
    plugins.algorithm("kit_pops_policy_kwarg", "PopsPolicyKwarg")
    given = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "policy_kwargs": {"auxiliary_width": 16}}
    checks = algorithm_kit("kit_pops_policy_kwarg", algo_kwargs=given)
    message = (
        r"(?s)constructing PopsPolicyKwarg changed the arguments it was given \(policy_kwargs: given "
        r"\{'auxiliary_width': 16\}, left as \{\}\).*Copy before changing \(policy_kwargs = "
        r"dict\(policy_kwargs or \{\}\).*save what you took out as an argument of your own"
    )
    # Every check that builds a model fails, each on its own (the kit's dict is never handed out), so the
    # order the checks run in no longer decides whether the plugin passes.
    for check in (
        checks.test_hyperparameters_saved_as_plain_values,
        lambda: checks.test_save_load_round_trip(tmp_path / "a"),
        lambda: checks.test_hyperparameters_rebuild_the_model(tmp_path / "b"),
        lambda: checks.test_save_load_round_trip(tmp_path / "c"),
    ):
        with pytest.raises(AssertionError, match=message):
            check()
    assert checks.algo_kwargs["policy_kwargs"] == {"auxiliary_width": 16}


def test_the_fix_the_kit_names_passes(plugins: Plugins, tmp_path: Path) -> None:
    plugins.algorithm("kit_copies_policy_kwargs", "CopiesPolicyKwargs")
    given = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "auxiliary_width": 16, "policy_kwargs": {}}
    checks = algorithm_kit("kit_copies_policy_kwargs", algo_kwargs=given)
    checks.test_hyperparameters_saved_as_plain_values()
    checks.test_hyperparameters_rebuild_the_model(tmp_path / "a")
    checks.test_save_load_round_trip(tmp_path / "b")


def test_logged_hyperparameters_that_do_not_rebuild_are_caught(plugins: Plugins, tmp_path: Path) -> None:
    plugins.algorithm("kit_two_phases", "TwoPhases")
    plugins.algorithm("kit_keeps_tuple", "KeepsTuple")
    plugins.algorithm("kit_saves_in_setup", "SavesInSetup")
    algorithm_kit("kit_two_phases").test_logged_hyperparameters_rebuild_the_model(tmp_path / "good")
    keeps_tuple = algorithm_kit("kit_keeps_tuple", algo_kwargs={"n_steps": 32, "batch_size": 32})
    keeps_tuple.test_hyperparameters_rebuild_the_model(tmp_path / "model-file")  # JSON makes it a list
    with pytest.raises(
        AssertionError,
        match=r"(?s)CSVLogger's hparams.yaml is not plain YAML .*widths: !!python/tuple.*lists, not tuples",
    ):
        keeps_tuple.test_logged_hyperparameters_rebuild_the_model(tmp_path / "tuple")
    with pytest.raises(
        AssertionError,
        match=r"(?s)SavesInSetup\(\*\*hyperparameters\) with the hyperparameters from CSVLogger's "
        r"hparams.yaml failed.*Saved, but not arguments of SavesInSetup.__init__: \['fitted_on'\]",
    ):
        algorithm_kit("kit_saves_in_setup").test_logged_hyperparameters_rebuild_the_model(tmp_path / "setup")


def test_on_policy_ddp_with_phase_specific_parameters_needs_the_public_switch(
    plugins: Plugins, tmp_path: Path
) -> None:
    """Two CPU ranks (gloo) through the kit's DDP check: the auxiliary head only one phase trains."""
    for name, cls in (
        ("kit_phase_specific", "PhaseSpecific"),
        ("kit_phase_specific_old_switch", "PhaseSpecificOldSwitch"),
        ("kit_phase_specific_without_switch", "PhaseSpecificWithoutSwitch"),
    ):
        plugins.algorithm(name, cls)
    for folder in ("public", "old", "without"):
        (tmp_path / folder).mkdir()
    algorithm_kit("kit_phase_specific").test_distributed_training(tmp_path / "public")
    algorithm_kit("kit_phase_specific_old_switch").test_distributed_training(tmp_path / "old")
    with pytest.raises(
        AssertionError, match=r"(?s)training on 2 DDP processes failed.*parameters that were not used"
    ):
        algorithm_kit("kit_phase_specific_without_switch").test_distributed_training(tmp_path / "without")
