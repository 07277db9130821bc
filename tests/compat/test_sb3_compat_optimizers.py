"""SB3's optimizer names on lit-sb3 models: ``model.policy.optimizer`` (PPO, A2C, TRPO, DQN, QR-DQN, ...),
``model.actor.optimizer`` / ``model.critic.optimizer`` (SAC, TQC, CrossQ, TD3, DDPG) and
``model.ent_coef_optimizer``: they exist from construction, are the optimizers every ``learn`` steps, keep
their state from one ``learn`` to the next, and can be read, changed and replaced as in SB3."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import lit_sb3
from lit_sb3_core.errors import ConfigurationError

ON_POLICY = {"n_steps": 32, "seed": 0}
OFF_POLICY = {"learning_starts": 20, "batch_size": 16, "buffer_size": 1000, "seed": 0}
# (algorithm, env, kwargs, SB3 names of its optimizers, the SB3 library that has it)
CASES: list[tuple[str, str, dict[str, Any], tuple[str, ...], str]] = [
    ("PPO", "CartPole-v1", {**ON_POLICY, "batch_size": 32}, ("policy.optimizer",), "stable_baselines3"),
    ("A2C", "CartPole-v1", {"n_steps": 8, "seed": 0}, ("policy.optimizer",), "stable_baselines3"),
    ("TRPO", "Pendulum-v1", {**ON_POLICY, "batch_size": 32}, ("policy.optimizer",), "sb3_contrib"),
    ("DQN", "CartPole-v1", OFF_POLICY, ("policy.optimizer",), "stable_baselines3"),
    ("QRDQN", "CartPole-v1", OFF_POLICY, ("policy.optimizer",), "sb3_contrib"),
    (
        "SAC",
        "Pendulum-v1",
        OFF_POLICY,
        ("actor.optimizer", "critic.optimizer", "ent_coef_optimizer"),
        "stable_baselines3",
    ),
    (
        "TQC",
        "Pendulum-v1",
        OFF_POLICY,
        ("actor.optimizer", "critic.optimizer", "ent_coef_optimizer"),
        "sb3_contrib",
    ),
    (
        "CrossQ",
        "Pendulum-v1",
        OFF_POLICY,
        ("actor.optimizer", "critic.optimizer", "ent_coef_optimizer"),
        "sb3_contrib",
    ),
    ("TD3", "Pendulum-v1", OFF_POLICY, ("actor.optimizer", "critic.optimizer"), "stable_baselines3"),
    ("DDPG", "Pendulum-v1", OFF_POLICY, ("actor.optimizer", "critic.optimizer"), "stable_baselines3"),
]
IDS = [case[0] for case in CASES]


def named(model: Any, name: str) -> Any:
    value = model
    for part in name.split("."):
        value = getattr(value, part)
    return value


def make(algo: str, env: str, kwargs: dict[str, Any]) -> Any:
    return getattr(lit_sb3, algo)("MlpPolicy", env, **kwargs)


def trained_optimizers(model: Any) -> list[torch.optim.Optimizer]:
    """The optimizers the last ``learn`` stepped (Lightning's, unwrapped)."""
    optimizers = model.optimizers()
    wrapped = optimizers if isinstance(optimizers, list) else [optimizers]
    return [getattr(optimizer, "optimizer", optimizer) for optimizer in wrapped]


@pytest.mark.parametrize(("algo", "env", "kwargs", "names", "library"), CASES, ids=IDS)
def test_optimizers_exist_from_construction_as_sb3s(
    algo: str, env: str, kwargs: dict[str, Any], names: tuple[str, ...], library: str
) -> None:
    """Same names, classes, learning rates and parameter shapes as the SB3 model of the same arguments."""
    reference_library = pytest.importorskip(library)
    ours = make(algo, env, kwargs)
    theirs = getattr(reference_library, algo)("MlpPolicy", env, device="cpu", **kwargs)
    for name in names:
        mine, reference = named(ours, name), named(theirs, name)
        assert type(mine) is type(reference), name
        assert mine.param_groups[0]["lr"] == pytest.approx(reference.param_groups[0]["lr"]), name
        shapes = sorted(tuple(p.shape) for group in mine.param_groups for p in group["params"])
        expected = sorted(tuple(p.shape) for group in reference.param_groups for p in group["params"])
        assert shapes == expected, name
    if "ent_coef_optimizer" in names:
        fixed = make(algo, env, {**kwargs, "ent_coef": 0.1})
        assert fixed.ent_coef_optimizer is None


@pytest.mark.parametrize(("algo", "env", "kwargs", "names", "library"), CASES, ids=IDS)
def test_learn_steps_the_named_optimizers_and_keeps_their_state(
    algo: str, env: str, kwargs: dict[str, Any], names: tuple[str, ...], library: str
) -> None:
    model = make(algo, env, kwargs)
    before = [named(model, name) for name in names]
    model.learn(64)
    assert trained_optimizers(model) == before  # the same objects, in configure_optimizers' order
    steps = [_adam_steps(optimizer) for optimizer in before]
    model.learn(64, reset_num_timesteps=False)
    assert trained_optimizers(model) == before
    for optimizer, first in zip(before, steps):
        if first is not None:  # Adam's step count goes on from where the first learn left it, as in SB3
            assert _adam_steps(optimizer) > first > 0


def _adam_steps(optimizer: torch.optim.Optimizer) -> float | None:
    states = [state for state in optimizer.state.values() if "step" in state]
    return float(states[0]["step"]) if states else None


def test_a_learning_rate_set_by_hand_is_overwritten_by_the_schedule_at_the_next_update() -> None:
    """SB3 sets every optimizer's lr from the schedule before each update (_update_learning_rate)."""
    model = lit_sb3.PPO("MlpPolicy", "CartPole-v1", learning_rate=1e-3, **ON_POLICY)
    optimizer = model.policy.optimizer
    optimizer.param_groups[0]["lr"] = 0.5
    model.learn(64)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1e-3)


def test_other_param_group_settings_stay_and_change_the_updates() -> None:
    """Settings the schedule does not own (weight decay here) apply to every later update, as in SB3."""

    def trained(weight_decay: float) -> torch.Tensor:
        model = lit_sb3.DQN("MlpPolicy", "CartPole-v1", **OFF_POLICY)
        model.policy.optimizer.param_groups[0]["weight_decay"] = weight_decay
        model.learn(120)
        assert model.policy.optimizer.param_groups[0]["weight_decay"] == weight_decay
        return torch.nn.utils.parameters_to_vector(model.policy.q_net.parameters()).detach()

    plain, decayed = trained(0.0), trained(50.0)
    assert decayed.norm() < plain.norm()


def test_an_assigned_optimizer_replaces_the_one_it_names() -> None:
    model = lit_sb3.PPO("MlpPolicy", "CartPole-v1", **ON_POLICY)
    replacement = torch.optim.SGD(model.policy.parameters(), lr=0.1)
    model.policy.optimizer = replacement
    weights = torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach().clone()
    model.learn(64)
    assert trained_optimizers(model) == [replacement] and model.policy.optimizer is replacement
    assert not torch.equal(torch.nn.utils.parameters_to_vector(model.policy.parameters()), weights)
    sac = lit_sb3.SAC("MlpPolicy", "Pendulum-v1", **OFF_POLICY)
    actor = torch.optim.SGD(sac.actor.parameters(), lr=0.01)
    temperature = torch.optim.SGD([sac.log_ent_coef], lr=0.01)
    sac.actor.optimizer, sac.ent_coef_optimizer = actor, temperature
    sac.learn(60)
    assert trained_optimizers(sac) == [actor, sac.critic.optimizer, temperature]


def test_an_optimizer_assigned_during_learn_is_stepped_from_the_next_batch() -> None:
    from lit_sb3.common.callbacks import BaseCallback

    class Replace(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.replacement: torch.optim.Optimizer | None = None

        def _on_step(self) -> bool:
            if self.replacement is None and self.num_timesteps >= 64:
                self.replacement = torch.optim.SGD(self.model.policy.parameters(), lr=0.01)
                self.model.policy.optimizer = self.replacement
            return True

    model = lit_sb3.PPO("MlpPolicy", "CartPole-v1", **ON_POLICY)
    callback = Replace()
    model.learn(256, callback=callback)
    assert callback.replacement is not None and trained_optimizers(model) == [callback.replacement]


def test_something_else_than_an_optimizer_is_refused_naming_policy_kwargs() -> None:
    model = lit_sb3.PPO("MlpPolicy", "CartPole-v1", **ON_POLICY)
    model.policy.optimizer = None
    with pytest.raises(ConfigurationError, match=r"model\.policy\.optimizer is None.*optimizer_class"):
        model.learn(64)
    sac = lit_sb3.SAC("MlpPolicy", "Pendulum-v1", ent_coef=0.1, **OFF_POLICY)
    with pytest.raises(ConfigurationError, match="ent_coef='auto'"):
        sac.ent_coef_optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)


def test_saved_optimizer_states_come_back_and_a_mismatched_one_starts_fresh(tmp_path: Any) -> None:
    model = lit_sb3.DQN("MlpPolicy", "CartPole-v1", **OFF_POLICY).learn(100)
    model.save(tmp_path / "dqn.zip")
    loaded = lit_sb3.DQN.load(tmp_path / "dqn.zip", env="CartPole-v1")
    loaded.learn(40, reset_num_timesteps=False)
    assert _adam_steps(loaded.policy.optimizer) > _adam_steps(model.policy.optimizer)
    # SB3 < 2.4's DQN files: an optimizer over the target network too. SB3 warns and loads; so does lit-sb3.
    old = lit_sb3.DQN("MlpPolicy", "CartPole-v1", **OFF_POLICY)
    old.policy.optimizer = torch.optim.Adam(old.policy.parameters(), lr=0.001)
    old.save(tmp_path / "old.zip")
    with pytest.warns(UserWarning, match="fresh state"):
        lit_sb3.DQN.load(tmp_path / "old.zip", env="CartPole-v1").learn(40)
    saved = old.get_parameters()["optimizer"]["param_groups"][0]["params"]
    assert len(saved) == len(list(old.policy.parameters())) > len(list(old.policy.q_net.parameters()))
