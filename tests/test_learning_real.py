"""Learning from pixels at a CI-sized budget: CnnPolicy on uint8 frames, scaled once on the device."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lit_sb3_core import RLEnvDataModule, RLTrainer, evaluate_policy, make_algo


class LeftOrRight(gym.Env):
    """A 36×36 uint8 frame with a bright bar on the left or the right; pick that side (reward 1).

    One-step episodes: the smallest pixel task NatureCNN accepts, so a CnnPolicy learns it in seconds.
    """

    observation_space = spaces.Box(0, 255, (1, 36, 36), np.uint8)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.side = int(self.np_random.integers(2))
        frame = np.zeros((1, 36, 36), np.uint8)
        frame[0, 8:28, (4 if self.side == 0 else 26) : (10 if self.side == 0 else 32)] = 255
        return frame, {}

    def step(self, action):
        reward = 1.0 if int(action) == self.side else 0.0
        return np.zeros((1, 36, 36), np.uint8), reward, True, False, {}


def _fit(model, dm, steps: int) -> None:
    RLTrainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    ).fit(model, datamodule=dm)


def test_ppo_cnn_policy_learns_from_uint8_pixels() -> None:
    dm = RLEnvDataModule(train_env=LeftOrRight, test_env=LeftOrRight, n_envs=4, seed=0)
    model = make_algo(
        "ppo", policy="CnnPolicy", n_steps=32, batch_size=64, n_epochs=4, learning_rate=1e-3, seed=0
    )
    _fit(model, dm, 1_536)
    assert str(model.rollout.observations.dtype) == "torch.uint8"
    mean, _ = evaluate_policy(model, dm.get_env("test"), n_eval_episodes=40)
    assert mean >= 0.95  # chance is 0.5
    dm.close()
