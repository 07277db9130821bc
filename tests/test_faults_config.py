"""Bad configuration: refused up front (or at the first use of a user's schedule) with a ConfigurationError
that names the value and the fix. Cases already covered elsewhere: n_steps * n_envs < 2
(test_on_policy.py), a batch size that does not divide the rollout (lit-sb3-ppo's test_ppo.py), unsupported
spaces (test_ppo_spaces.py, test_dqn.py), unknown algorithms and callbacks (test_registry.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lit_sb3 import PPO, EvalCallback, RLEnvDataModule, RLTrainer, evaluate_policy
from lit_sb3_core.errors import ConfigurationError, LitSb3Error, UnknownNameError

SMALL = {"n_steps": 16, "batch_size": 16, "n_epochs": 1}


@pytest.fixture(scope="module")
def model() -> PPO:
    return PPO(env="CartPole-v1", **SMALL)


CASES: dict[str, tuple[Callable[[PPO], Any], str]] = {
    "learn(0)": (lambda m: m.learn(0), r"total_timesteps must be a positive integer, got 0"),
    "learn(-5)": (lambda m: m.learn(-5), r"total_timesteps must be a positive integer, got -5"),
    "learn(1.5)": (lambda m: m.learn(1.5), r"total_timesteps must be a positive integer, got 1.5"),
    "RLTrainer(max_steps=0)": (
        lambda m: RLTrainer(max_steps=0),
        r"max_steps.*environment steps.*positive integer",
    ),
    "RLTrainer(max_epochs=1)": (lambda m: RLTrainer(max_steps=10, max_epochs=1), r"does not take max_epochs"),
    "RLTrainer(n_eval_episodes=0)": (
        lambda m: RLTrainer(max_steps=10, n_eval_episodes=0),
        r"n_eval_episodes",
    ),
    "n_envs=0": (lambda m: RLEnvDataModule(train_env="CartPole-v1", n_envs=0), r"n_envs must be a positive"),
    "vectorization='threads'": (
        lambda m: RLEnvDataModule(vectorization="threads"),  # type: ignore[arg-type]
        r"'sync', 'async' or 'envpool'",
    ),
    "evaluate_policy(n_eval_episodes=0)": (
        lambda m: evaluate_policy(m, "CartPole-v1", n_eval_episodes=0),
        r"n_eval_episodes must be a positive",
    ),
    "validate(n_eval_episodes=0)": (
        lambda m: RLTrainer(max_steps=10, logger=False).validate(m, env="CartPole-v1", n_eval_episodes=0),
        r"n_eval_episodes must be a positive",
    ),
    "EvalCallback(n_eval_episodes=0)": (
        lambda m: EvalCallback("CartPole-v1", n_eval_episodes=0),
        r"n_eval_episodes must be a positive",
    ),
    "learning_rate=-1": (lambda m: PPO(learning_rate=-1.0), r"learning_rate must be a finite, non-negative"),
    "learning_rate=nan": (
        lambda m: PPO(learning_rate=float("nan")),
        r"learning_rate must be a finite, non-negative",
    ),
    "learning_rate='lin_abc'": (
        lambda m: PPO(learning_rate="lin_abc"),
        r"learning_rate='lin_abc' is not a valid schedule",
    ),
    "learning_rate=[1e-3]": (
        lambda m: PPO(learning_rate=[1e-3]),
        r"learning_rate must be a number, 'lin_<start>'",
    ),  # type: ignore[arg-type]
    "clip_range='fast'": (lambda m: PPO(clip_range="fast"), r"clip_range='fast' is not a valid schedule"),
    "n_steps=0": (lambda m: PPO(n_steps=0), r"n_steps must be a positive integer"),
    "gamma=1.5": (lambda m: PPO(gamma=1.5), r"gamma must be a number in \[0, 1\]"),
    "batch_size=1": (lambda m: PPO(batch_size=1), r"batch_size must be an integer > 1"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_configuration_is_a_configuration_error(case: str, model: PPO) -> None:
    call, message = CASES[case]
    with pytest.raises(ConfigurationError, match=message) as info:
        call(model)
    assert isinstance(info.value, LitSb3Error) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("schedule", "shown"),
    [
        (lambda progress: -1.0, "-1.0"),
        (lambda progress: float("nan"), "nan"),
        (lambda progress: "fast", "'fast'"),
    ],
    ids=["negative", "nan", "not-a-number"],
)
def test_a_user_schedule_returning_a_bad_value_is_named_at_first_use(schedule: Any, shown: str) -> None:
    # SB3 lets torch say "Invalid learning rate: -1.0" (or trains on NaN).
    model = PPO(learning_rate=schedule, **SMALL)
    with pytest.raises(
        ConfigurationError,
        match=rf"The learning_rate schedule .* returned {shown} at "
        r"progress_remaining=1; a schedule must return finite, non-negative",
    ):
        model.learn(32, env="CartPole-v1")


def test_a_valid_user_schedule_is_used_as_given() -> None:
    seen: list[float] = []

    def schedule(progress: float) -> float:
        seen.append(progress)
        return 1e-3 * progress

    model = PPO(learning_rate=schedule, **SMALL).learn(32, env="CartPole-v1")
    assert seen[0] == 1.0 and min(seen) < 1.0
    assert model.trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(1e-3 * model.progress_remaining)


@pytest.mark.parametrize("env", [None, "CartPole-v1"], ids=["no-env", "with-env"])
def test_an_unknown_policy_alias_is_refused_at_construction(env: str | None) -> None:
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown PPO policy 'MlpPolicyy'\. Did you mean 'MlpPolicy'\?\n"
        r"Available PPO policies: CnnPolicy, MlpPolicy, MultiInputPolicy\.",
    ):
        PPO("MlpPolicyy", env=env)
    with pytest.raises(KeyError):  # SB3 raises ValueError("Policy MlpPolicyy unknown"); ours is a KeyError
        PPO("MlpPolicyy", env=env)
