"""``evaluation_mode``: predict computes as in eval mode, switches only the modules that read the flag, and
leaves every flag as it found it (a policy in training mode stays there; target networks stay in eval)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.nets.torch_layers import BaseFeaturesExtractor, evaluation_mode, reads_training_mode


class DropoutExtractor(BaseFeaturesExtractor):
    """A trunk whose output depends on the mode: predict must run it in eval mode."""

    def __init__(self, observation_space: spaces.Space, features_dim: int = 32) -> None:
        super().__init__(observation_space, features_dim)
        self.net = nn.Sequential(
            nn.Linear(int(np.prod(observation_space.shape)), features_dim), nn.Dropout(0.5)
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations.flatten(1))


def _flags(module: nn.Module) -> dict[str, bool]:
    return {name: m.training for name, m in module.named_modules()}


def test_only_mode_readers_switch_and_every_flag_comes_back() -> None:
    dropout, linear = nn.Dropout(0.5), nn.Linear(4, 4)
    target = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).train(False)
    root = nn.ModuleDict({"online": nn.Sequential(linear, dropout), "target": target})
    before = _flags(root)
    assert before["online.1"] and not before["target.1"]
    x = torch.ones(3, 4)
    with evaluation_mode(root):
        assert not dropout.training and linear.training, "a mode-free Linear is not touched"
        assert torch.equal(root["online"](x), root["online"](x)), "dropout is off inside the block"
    assert _flags(root) == before
    with pytest.raises(RuntimeError, match="boom"), evaluation_mode(root):
        raise RuntimeError("boom")
    assert _flags(root) == before, "flags come back when the block raises"
    assert reads_training_mode(dropout) and reads_training_mode(target[1]) and not reads_training_mode(linear)


def test_ppo_predict_runs_a_dropout_trunk_in_eval_mode_and_leaves_training_mode_on() -> None:
    import lit_sb3

    model = lit_sb3.PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=0,
        policy_kwargs={"features_extractor_class": DropoutExtractor},
    )
    model.learn(64)
    policy = model.policy
    policy.train(True)
    before = _flags(policy)
    obs = np.stack([gym.make("CartPole-v1").reset(seed=s)[0] for s in range(64)])
    first, _ = model.predict(obs, deterministic=True)
    second, _ = model.predict(obs, deterministic=True)
    assert np.array_equal(first, second), "dropout was on inside predict"
    assert _flags(policy) == before, "predict changed a module's training flag"
    policy.train(False)
    with torch.no_grad():
        expected = policy.predict_actions(torch.as_tensor(obs), True).numpy()
    assert np.array_equal(first, expected), "predict differs from the eval-mode policy"


def test_sac_predict_keeps_the_target_critic_in_eval_mode() -> None:
    import lit_sb3

    model = lit_sb3.SAC("MlpPolicy", "Pendulum-v1", learning_starts=32, batch_size=32, seed=0)
    model.learn(64)
    policy = model.policy
    policy.train(True)
    before = _flags(policy)
    assert not policy.critic_target.training and policy.actor.training
    model.predict(np.zeros(3, dtype=np.float32), deterministic=True)
    assert _flags(policy) == before
