"""A2C and PPO take Stable-Baselines3's gradient steps: from one seed, on one env, lit-sb3's weights after
real training equal SB3's to float rounding.

The only thing the two libraries draw differently is PPO's minibatch order (SB3: numpy's global RNG over an
env-major flattening of the rollout; lit-sb3: ``torch.randperm`` over a step-major one), so the PPO test
hands lit-sb3 SB3's order. Everything else (initial weights, sampled actions, the env's resets, the
rollout, advantages, losses, clipping, optimizer) is the libraries' own. This is why the learning ledger's
A2C curves are the same in both libraries and its PPO curves are two samples of one distribution.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("stable_baselines3")
pytest.importorskip("lit_sb3_a2c")
pytest.importorskip("lit_sb3_ppo")

ENV_ID, N_ENVS, SEED = "CartPole-v1", 2, 3


def _sb3(algo: str, steps: int, **kwargs: Any) -> dict[str, torch.Tensor]:
    import stable_baselines3
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(ENV_ID, n_envs=N_ENVS, seed=SEED)
    model = getattr(stable_baselines3, algo)("MlpPolicy", env, seed=SEED, device="cpu", **kwargs)
    model.learn(total_timesteps=steps)
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


def _lit(algo: str, steps: int, **kwargs: Any) -> dict[str, torch.Tensor]:
    import lit_sb3

    model = lit_sb3.get_algo_class(algo.lower())(policy="MlpPolicy", seed=SEED, device="cpu", **kwargs)
    model.learn(
        total_timesteps=steps, env=lit_sb3.RLEnvDataModule(train_env=ENV_ID, n_envs=N_ENVS, seed=SEED)
    )
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


def _assert_same_weights(sb3: dict[str, torch.Tensor], lit: dict[str, torch.Tensor]) -> None:
    assert lit, "lit-sb3's policy has weights"
    for name, weight in lit.items():
        assert name in sb3, f"SB3's policy has no {name}"
        torch.testing.assert_close(weight, sb3[name], rtol=0, atol=1e-6, msg=f"{name} differs from SB3's")


def test_a2c_weights_after_training_equal_sb3s() -> None:
    kwargs = {"n_steps": 8, "ent_coef": 0.01}
    sb3, lit = _sb3("A2C", 480, **kwargs), _lit("A2C", 480, **kwargs)  # 30 updates
    moved = _sb3("A2C", 16, **kwargs)
    assert max(float((sb3[k] - moved[k]).abs().max()) for k in lit) > 1e-3, "the updates moved the weights"
    _assert_same_weights(sb3, lit)


def test_ppo_weights_after_training_equal_sb3s_given_sb3s_minibatch_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import lit_sb3_core.data.rollout_buffer as rollout_buffer

    n_steps = 32
    kwargs = {"n_steps": n_steps, "batch_size": 16, "n_epochs": 3}

    def sb3_order(total: int, **_: Any) -> torch.Tensor:
        order = np.random.permutation(total)  # SB3's RolloutBuffer.get: indices of the env-major flattening
        return torch.as_tensor((order % n_steps) * N_ENVS + order // n_steps)  # as step-major indices

    sb3 = _sb3("PPO", 4 * n_steps * N_ENVS, **kwargs)  # 4 rollouts, 3 epochs of 4 minibatches each
    monkeypatch.setattr(rollout_buffer.torch, "randperm", sb3_order)
    lit = _lit("PPO", 4 * n_steps * N_ENVS, **kwargs)
    monkeypatch.undo()
    _assert_same_weights(sb3, lit)
    own_order = _lit("PPO", 4 * n_steps * N_ENVS, **kwargs)  # lit-sb3's own order: another sample
    assert any(not torch.equal(own_order[k], lit[k]) for k in lit), "the minibatch order is what differs"
