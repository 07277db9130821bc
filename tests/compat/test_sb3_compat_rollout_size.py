"""SB3's ``rollout_buffer.size()``: steps stored per env, ``n_steps`` once the rollout is full."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3 import PPO
from lit_sb3.common.buffers import RolloutBuffer
from lit_sb3.common.callbacks import BaseCallback


def test_size_counts_added_steps() -> None:
    buffer = RolloutBuffer(4, spaces.Box(-1, 1, (3,)), spaces.Discrete(2), n_envs=2)
    assert buffer.size() == 0
    for step in range(4):
        buffer.add(
            np.zeros((2, 3), np.float32),
            torch.zeros(2),
            np.ones(2),
            np.zeros(2),
            torch.zeros(2),
            torch.zeros(2),
        )
        assert buffer.size() == step + 1
    assert buffer.full and buffer.size() == 4
    buffer.reset()
    assert buffer.size() == 0


class _RecordSize(BaseCallback):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.sizes.append(self.model.rollout_buffer.size())


def test_size_after_a_rollout_is_n_steps() -> None:
    callback = _RecordSize()
    PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=0).learn(
        32, callback=callback
    )
    assert callback.sizes == [16, 16]
