"""DDPG specifics: learning on Pendulum, equivalence with TD3 without its tricks, SB3's defaults, bad input."""

from __future__ import annotations

import inspect
from collections import Counter

import gymnasium as gym
import pytest
import torch

from lit_sb3_core import evaluate_policy
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_ddpg import DDPG
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
    "action_noise": {"type": "normal", "sigma": 0.1},
    "seed": 0,
}


def test_learns_pendulum() -> None:
    """Smaller networks than the default, rl-zoo3's noise and discount: far better than random in 5k steps."""
    model = DDPG(
        batch_size=128,
        gamma=0.98,
        learning_starts=1000,
        policy_kwargs={"net_arch": [64, 64]},
        action_noise={"type": "normal", "sigma": 0.1},
        seed=0,
    )
    model.learn(5000, env="Pendulum-v1")
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    assert mean_reward > -300, mean_reward  # a random policy scores about -1200; seeds 0-2 reach about -175


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reaches_rl_zoo_level_with_tuned_hyperparameters(seed: int) -> None:
    hyperparameters = dict(DDPG.tuned_hyperparameters["Pendulum-v1"])
    steps = hyperparameters.pop("n_timesteps")
    model = DDPG(seed=seed, **hyperparameters).learn(steps, env="Pendulum-v1")
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    print(f"DDPG Pendulum-v1 seed {seed}: {mean_reward:.1f}")
    assert mean_reward >= -200, mean_reward


def test_is_td3_without_its_tricks() -> None:
    """Same seed, same data: DDPG trains exactly as TD3 with one critic, no delay and no smoothing noise.

    Each model is built and trained before the next is built: as in SB3, the seed is applied when the model
    is built, and minibatches come from numpy's global generator, which every run in the process shares."""
    ddpg = DDPG(env="Pendulum-v1", policy_kwargs={"net_arch": [32, 32]}, **SMALL)
    assert (ddpg.policy_delay, ddpg.target_policy_noise, ddpg.target_noise_clip) == (1, 0.0, 0.0)
    assert ddpg.policy.critic.n_critics == 1 and ddpg.policy.critic_target.n_critics == 1
    ddpg.learn(150)
    td3 = TD3(
        env="Pendulum-v1",
        policy_delay=1,
        target_policy_noise=0.0,
        target_noise_clip=0.0,
        policy_kwargs={"net_arch": [32, 32], "n_critics": 1},
        **SMALL,
    ).learn(150)
    ddpg_state, td3_state = ddpg.policy.state_dict(), td3.policy.state_dict()
    assert list(ddpg_state) == list(td3_state)
    for name, value in ddpg_state.items():
        assert torch.equal(value, td3_state[name]), name
    # TD3's own defaults (two critics, delayed actor, smoothed targets) train differently on the same data.
    default_td3 = TD3(env="Pendulum-v1", policy_kwargs={"net_arch": [32, 32]}, **SMALL).learn(150)
    actor = default_td3.policy.actor.state_dict()
    assert not all(torch.equal(v, ddpg.policy.actor.state_dict()[k]) for k, v in actor.items())


def test_actor_and_targets_update_every_step_and_n_critics_can_be_raised() -> None:
    model = DDPG(env="Pendulum-v1", policy_kwargs={"net_arch": [32, 32]}, **SMALL)
    counts: Counter[str] = Counter()
    record = model.record

    def counting(name: str, value: torch.Tensor) -> None:
        counts[name] += 1
        record(name, value)

    model.record = counting  # type: ignore[method-assign]
    model.learn(80)  # 30 gradient steps
    assert counts == {"critic_loss": 30, "actor_loss": 30}
    assert {"train/actor_loss", "train/critic_loss", "train/n_updates"} <= set(model.last_metrics)
    twin = DDPG(env="Pendulum-v1", policy_kwargs={"net_arch": [32, 32], "n_critics": 2}, **SMALL)
    assert twin.policy.critic.n_critics == 2
    assert model.hparams["policy_kwargs"] == {"net_arch": [32, 32]}  # the default is applied, not saved


def test_defaults_and_signature_are_sb3s() -> None:
    model = DDPG()
    assert model.lr_schedule(1.0) == 1e-3
    assert (model.buffer_size, model.learning_starts, model.batch_size) == (1_000_000, 100, 256)
    assert (model.tau, model.gamma, model.train_freq, model.gradient_steps) == (0.005, 0.99, (1, "step"), 1)
    assert model.hparams["action_noise"] is None
    # TD3's trick switches are fixed, so they are neither arguments nor saved hyperparameters.
    for name in ("policy_delay", "target_policy_noise", "target_noise_clip"):
        assert name not in model.hparams
    with pytest.raises(TypeError):
        DDPG(policy_delay=2)  # type: ignore[call-arg]
    sb3 = pytest.importorskip("stable_baselines3")
    ours = inspect.signature(DDPG).parameters
    theirs = inspect.signature(sb3.DDPG).parameters
    for name, parameter in theirs.items():
        if name in ("policy", "env", "_init_setup_model"):
            continue
        assert name in ours, name
        assert ours[name].default == parameter.default, name


def test_tuned_entry_matches_rl_zoo() -> None:
    tuned = DDPG.tuned_hyperparameters["Pendulum-v1"]
    assert tuned["action_noise"] == {"type": "normal", "sigma": 0.1}
    assert tuned["policy_kwargs"] == {"net_arch": [400, 300]} and tuned["gamma"] == 0.98
    assert (tuned["learning_starts"], tuned["buffer_size"], tuned["n_timesteps"]) == (10_000, 200_000, 20_000)
    model = DDPG(**{k: v for k, v in tuned.items() if k != "n_timesteps"}, env="Pendulum-v1")
    assert model.policy.actor.mu[0].out_features == 400 and model.policy.critic.n_critics == 1


def test_unsupported_spaces_and_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="does not support Discrete"):
        DDPG(env="CartPole-v1")
    with pytest.raises(ConfigurationError, match="action_noise"):
        DDPG(action_noise="normal")
    with pytest.raises(ConfigurationError, match="n_critics"):
        DDPG(env="Pendulum-v1", policy_kwargs={"n_critics": 0})
