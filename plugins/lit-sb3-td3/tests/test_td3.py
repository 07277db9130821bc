"""TD3 specifics: learning on Pendulum, delayed policy updates, exploration noise, bad input."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_core import evaluate_policy
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_td3 import TD3


def seeded_env(env_id: str, seed: int = 0) -> gym.vector.VectorEnv:
    """An evaluation env with a fixed random stream: Pendulum's returns depend on the start states."""
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make(env_id)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=seed)
    return env


SMALL = {
    "learning_starts": 50,
    "buffer_size": 2000,
    "batch_size": 32,
    "policy_kwargs": {"net_arch": [32, 32]},
    "seed": 0,
}


def test_learns_pendulum() -> None:
    """Smaller networks than the default, rl-zoo3's noise and discount: far better than random in 7k steps."""
    model = TD3(
        learning_rate=1e-3,
        batch_size=128,
        gamma=0.98,
        learning_starts=1000,
        policy_kwargs={"net_arch": [64, 64]},
        action_noise={"type": "normal", "sigma": 0.1},
        seed=0,
    )
    model.learn(7000, env="Pendulum-v1")
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    assert mean_reward > -400, mean_reward


@pytest.mark.slow
def test_reaches_rl_zoo_level_with_tuned_hyperparameters() -> None:
    hyperparameters = dict(TD3.tuned_hyperparameters["Pendulum-v1"])
    steps = hyperparameters.pop("n_timesteps")
    model = TD3(seed=0, **hyperparameters).learn(steps, env="Pendulum-v1")
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    assert mean_reward >= -200, mean_reward


def test_policy_and_targets_update_every_policy_delay_steps() -> None:
    model = TD3(env="Pendulum-v1", policy_delay=3, **SMALL)
    counts: Counter[str] = Counter()
    record = model.record

    def counting(name: str, value: torch.Tensor) -> None:
        counts[name] += 1
        record(name, value)

    model.record = counting  # type: ignore[method-assign]
    actor_target = [p.clone() for p in model.policy.actor_target.parameters()]
    model.learn(80)  # 30 gradient steps
    assert counts == {"critic_loss": 30, "actor_loss": 10}
    assert model.n_updates == 30
    assert not any(torch.equal(a, b) for a, b in zip(actor_target, model.policy.actor_target.parameters()))
    assert {"train/actor_loss", "train/critic_loss", "train/n_updates"} <= set(model.last_metrics)


def test_exploration_is_the_deterministic_action_plus_noise() -> None:
    quiet = TD3(env="Pendulum-v1", gradient_steps=0, **{**SMALL, "learning_starts": 0}).learn(20)
    buffer, policy = quiet.replay_buffer, quiet.policy
    with torch.no_grad():
        # Without action_noise TD3 acts deterministically, as in SB3: every stored action is mu(s).
        expected = policy(torch.as_tensor(buffer.observations[:20, 0])).numpy()
    np.testing.assert_allclose(buffer.actions[:20, 0], expected, atol=1e-6)
    noisy = TD3(
        env="Pendulum-v1", action_noise={"type": "normal", "sigma": 0.3}, **{**SMALL, "learning_starts": 0}
    )
    noisy.learn(20)
    assert noisy.hparams["action_noise"] == {"type": "normal", "sigma": 0.3}  # the spec as given: plain JSON
    assert np.abs(noisy.replay_buffer.actions[:20]).max() <= 1.0


def test_tuned_entry_matches_rl_zoo() -> None:
    tuned = TD3.tuned_hyperparameters["Pendulum-v1"]
    assert tuned["action_noise"] == {"type": "normal", "sigma": 0.1}
    assert tuned["policy_kwargs"] == {"net_arch": [400, 300]} and tuned["gamma"] == 0.98
    model = TD3(**{k: v for k, v in tuned.items() if k != "n_timesteps"}, env="Pendulum-v1")
    assert model.policy.actor.mu[0].out_features == 400


def test_unsupported_spaces_and_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="does not support Discrete"):
        TD3(env="CartPole-v1")
    with pytest.raises(ConfigurationError, match="policy_delay"):
        TD3(policy_delay=0)
    with pytest.raises(ConfigurationError, match="target_noise_clip"):
        TD3(target_noise_clip=-0.1)
    with pytest.raises(ConfigurationError, match="action_noise"):
        TD3(action_noise="normal")
