"""SAC with generalized State-Dependent Exploration: when the noise is drawn, warm-up, learning, files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_core import evaluate_policy, load, tuned_hyperparameters
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.testing import AlgorithmConformance
from lit_sb3_sac import SAC


def seeded_env(env_id: str, seed: int = 0) -> gym.vector.VectorEnv:
    """An evaluation env with a fixed random stream: returns depend on the start states."""
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make(env_id)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=seed)
    return env


SMALL = {
    "use_sde": True,
    "buffer_size": 2000,
    "batch_size": 32,
    "policy_kwargs": {"net_arch": [32, 32]},
    "seed": 0,
}


class TestSACgSDEConformance(AlgorithmConformance):
    """The whole kit (model files, checkpoint resume, DDP, ...) with gSDE on."""

    algo_name = "sac"
    distribution = "lit-sb3-sac"
    env_ids = ("Pendulum-v1",)
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "use_sde": True,
        "sde_sample_freq": 4,
        "train_freq": 8,
        "gradient_steps": 8,
        "learning_starts": 50,
        "buffer_size": 1000,
        "batch_size": 64,
        "policy_kwargs": {"net_arch": [32, 32], "log_std_init": -2.0},
    }
    learn_steps = 256


def record_draws(model: SAC) -> list[tuple[int, bool, torch.Tensor]]:
    """(num_timesteps, drawn while collecting, shared matrix) for every redraw of the actor's noise."""
    actor = model.policy.actor
    draws: list[tuple[int, bool, torch.Tensor]] = []
    original = actor.reset_noise

    def reset_noise(batch_size: int = 1) -> None:
        original(batch_size)
        draws.append(
            (model.num_timesteps, torch.is_inference_mode_enabled(), actor.sde_noise.exploration_mat.clone())
        )

    actor.reset_noise = reset_noise
    return draws


def test_noise_is_drawn_per_chunk_and_every_sde_sample_freq_steps_and_warmup_uses_it() -> None:
    """No training (learning_starts beyond the budget): every action is the gSDE policy's, and each one is
    tanh(mu(s) + latent(s) @ W) for the W drawn last: at chunk starts (every 8 steps) and 3 steps apart. As
    SB3's collect_rollouts: at a chunk's start twice (once for the chunk, once for its step 0, a multiple of
    sde_sample_freq; the second is used), and not after the chunk's last step."""
    model = SAC(
        env="Pendulum-v1", train_freq=8, sde_sample_freq=3, learning_starts=10_000, use_sde_at_warmup=True,
        **{**SMALL, "policy_kwargs": {"net_arch": [32, 32], "log_std_init": -1.0}},
    )  # fmt: skip
    draws = record_draws(model)
    model.learn(40)
    assert all(collecting for _, collecting, _ in draws) and model.n_updates == 0
    drawn_at = [t for t, _, _ in draws]
    expected = []
    for t in range(40):
        expected += [t, t] if t % 8 == 0 else [t] if (t % 8) % 3 == 0 else []
    assert drawn_at == expected

    buffer, actor = model.replay_buffer, model.policy.actor
    observations = torch.as_tensor(buffer.observations[:40, 0])
    with torch.no_grad():
        latent = actor.latent_pi(observations)
        mean = actor.mu(latent)
    matrices = {t: mat for t, _, mat in draws}
    for step in range(40):
        matrix = matrices[max(t for t in drawn_at if t <= step)]
        expected = torch.tanh(mean[step] + latent[step] @ matrix)
        np.testing.assert_allclose(buffer.actions[step, 0], expected.numpy(), rtol=1e-5, atol=1e-6)


def test_warmup_is_uniform_without_use_sde_at_warmup() -> None:
    model = SAC(env="Pendulum-v1", learning_starts=10_000, **SMALL).learn(400)
    warmup_actions = model.replay_buffer.actions[:400, 0, 0]
    # gSDE's initial actions (log std -3, small mean) cluster near 0; uniform ones spread over [-1, 1].
    assert warmup_actions.std() > 0.5 and warmup_actions.min() < -0.9 and warmup_actions.max() > 0.9
    sde = SAC(env="Pendulum-v1", learning_starts=10_000, use_sde_at_warmup=True, **SMALL).learn(400)
    assert sde.replay_buffer.actions[:400, 0, 0].std() < 0.3


def test_noise_is_redrawn_with_gradients_before_every_gradient_step() -> None:
    model = SAC(env="Pendulum-v1", learning_starts=50, **SMALL)
    log_std_before = model.policy.actor.log_std.detach().clone()
    draws = record_draws(model)
    model.learn(120)
    training_draws = [mat for _, collecting, mat in draws if not collecting]
    assert len(training_draws) == model.n_updates == 70
    assert len([d for d in draws if d[1]]) == 120  # train_freq=1: one chunk, one draw, per step
    # The actor loss reaches log std through the reparameterised draw and the log-likelihood.
    assert not torch.equal(model.policy.actor.log_std.detach(), log_std_before)
    std = model.last_metrics["train/std"]
    assert std == pytest.approx(model.policy.actor.get_std().mean().item())


def test_predict_explores_with_fixed_noise_until_reset() -> None:
    model = SAC(env="Pendulum-v1", **SMALL)
    obs = np.random.default_rng(0).uniform(-1, 1, (5, 3)).astype(np.float32)
    first, _ = model.predict(obs)
    np.testing.assert_array_equal(model.predict(obs)[0], first)
    assert not np.array_equal(model.predict(obs, deterministic=True)[0], first)
    model.reset_actor_noise()
    assert not np.allclose(model.predict(obs)[0], first)


def test_model_file_round_trip_redraws_noise_from_the_learned_log_std(tmp_path: Path) -> None:
    model = SAC(env="Pendulum-v1", learning_starts=50, **SMALL).learn(150)
    with torch.no_grad():
        model.policy.actor.log_std.fill_(-12.0)
    model.save(tmp_path / "model.zip")
    loaded = load(tmp_path / "model.zip")
    assert loaded.use_sde and loaded.hparams["use_sde"] is True
    torch.testing.assert_close(loaded.policy.actor.log_std, model.policy.actor.log_std)
    assert loaded.policy.actor.sde_noise.exploration_mat.abs().max() < 1e-3  # std e^-12, not e^-3


def test_learns_pendulum_with_gsde() -> None:
    """Far better than random (about -1200) in a small budget (seeds 0-2 reach about -170)."""
    model = SAC(
        env="Pendulum-v1",
        use_sde=True,
        learning_rate=1e-3,
        batch_size=128,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
    )
    model.learn(4000)
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    assert mean_reward > -400, mean_reward


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_gsde_reaches_rl_zoo_level_on_pendulum(seed: int) -> None:
    """rl-zoo3's SAC Pendulum-v1 entry (20k steps, learning rate 1e-3) with use_sde=True."""
    hyperparameters = dict(SAC.tuned_hyperparameters["Pendulum-v1"])
    steps = hyperparameters.pop("n_timesteps")
    model = SAC(use_sde=True, seed=seed, **hyperparameters).learn(steps, env="Pendulum-v1")
    mean_reward, std_reward = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    print(f"SAC gSDE Pendulum-v1 seed {seed}: {mean_reward:.1f} +/- {std_reward:.1f}")
    assert mean_reward >= -200, mean_reward


def test_tuned_mountain_car_entry_builds_a_gsde_model() -> None:
    hp = tuned_hyperparameters("sac", "MountainCarContinuous-v0")
    assert hp["trainer"] == {"max_steps": 50_000} and hp["data"] == {}
    model = SAC(env="MountainCarContinuous-v0", **hp["model"])
    assert model.use_sde and model.train_freq == (32, "step")
    torch.testing.assert_close(model.policy.actor.log_std, torch.full((64, 1), -3.67))


@pytest.mark.slow
def test_gsde_reaches_rl_zoo_level_on_mountain_car() -> None:
    """rl-zoo3's tuned gSDE entry; seeds 0 and 1 score about 94 (the car reaches the flag every episode)."""
    hp = tuned_hyperparameters("sac", "MountainCarContinuous-v0")
    model = SAC(seed=0, **hp["model"]).learn(hp["trainer"]["max_steps"], env="MountainCarContinuous-v0")
    mean_reward, _ = evaluate_policy(model, seeded_env("MountainCarContinuous-v0"), n_eval_episodes=10)
    assert mean_reward >= 90, mean_reward


def test_bad_gsde_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="needs use_sde=True"):
        SAC(use_sde_at_warmup=True)
    with pytest.raises(ConfigurationError, match="sde_sample_freq must be an integer"):
        SAC(use_sde=True, sde_sample_freq=2.5)
    with pytest.raises(ConfigurationError, match="True or False"):
        SAC(use_sde="yes")
    # As SB3, a use_sde in policy_kwargs is overridden by the algorithm's.
    assert SAC(env="Pendulum-v1", policy_kwargs={"use_sde": True}).policy.actor.sde_noise is None
    with pytest.raises(ConfigurationError, match="clip_mean"):
        SAC(env="Pendulum-v1", use_sde=True, policy_kwargs={"clip_mean": None})
    assert SAC(
        env="Pendulum-v1", use_sde=True, policy_kwargs={"full_std": False}
    ).policy.actor.log_std.shape == (
        256,
        1,
    )
