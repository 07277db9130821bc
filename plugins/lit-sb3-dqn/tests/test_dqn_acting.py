"""DQN's acting pass: the greedy action of each env step without the policy's module calls.

Eager runs act through ``TorchMlp`` (torch's operators, called directly): the same run, bit for bit, as
acting through ``policy(obs)``. ``compile=True`` acts through ``NumpyMlp`` (within float rounding). Hooks
on the network, or a policy that acts differently, keep ``policy(obs)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from lit_sb3_core.sdk import NumpyMlp, TorchMlp
from lit_sb3_dqn import DQN
from lit_sb3_dqn.policies import DQNPolicy

SETTINGS: dict[str, Any] = {
    "learning_starts": 200,
    "buffer_size": 5_000,
    "target_update_interval": 100,
    "exploration_fraction": 0.2,
    "seed": 0,
    "device": "cpu",
}


class _PolicyPath(DQN):
    """DQN acting through ``policy(obs)`` on every step (the reference)."""

    def _direct_q_values(self) -> None:  # type: ignore[override]
        return None


def _stored(model: DQN, steps: int) -> tuple[np.ndarray, np.ndarray]:
    buffer = model.replay_buffer
    assert buffer is not None
    return np.array(buffer.actions[:steps]), np.array(buffer.observations[:steps])


def test_an_eager_run_acting_directly_is_the_policy_paths_run_bit_for_bit() -> None:
    steps = 3_000
    reference = _PolicyPath("MlpPolicy", "CartPole-v1", **SETTINGS)
    reference.learn(steps)
    model = DQN("MlpPolicy", "CartPole-v1", **SETTINGS)
    model.learn(steps)
    assert isinstance(model._acting[-1], TorchMlp)  # type: ignore[index]
    for ours, theirs in zip(_stored(model, steps), _stored(reference, steps), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    for (name, ours_weights), (_, theirs_weights) in zip(
        model.policy.state_dict().items(), reference.policy.state_dict().items(), strict=True
    ):
        assert torch.equal(ours_weights, theirs_weights), name


def test_hooks_on_the_q_network_keep_the_policy_path() -> None:
    model = DQN("MlpPolicy", "CartPole-v1", **{**SETTINGS, "learning_starts": 20})
    model.learn(40)  # builds the policy
    acting_calls: list[int] = []  # calls on one observation (the gradient steps pass minibatches of 32)

    def hook(module: Any, inputs: Any, output: Any) -> None:
        if inputs[0].shape[0] == 1:
            acting_calls.append(1)

    model.policy.q_net.register_forward_hook(hook)
    model.exploration_initial_eps = model.exploration_final_eps = model.exploration_rate = 0.0  # all greedy
    model.learn(200, reset_num_timesteps=False)
    assert len(acting_calls) == 200
    assert model._acting is not None and isinstance(model._acting[-1], TorchMlp)  # built, but not used


class _ActsDifferently(DQNPolicy):
    def forward(self, obs: Any, deterministic: bool = True) -> torch.Tensor:
        return torch.zeros(len(obs), dtype=torch.long)


def test_a_policy_that_acts_differently_keeps_its_forward() -> None:
    model = DQN(
        _ActsDifferently, "CartPole-v1", **{**SETTINGS, "learning_starts": 0, "exploration_fraction": 0.01}
    )
    model.exploration_final_eps = model.exploration_initial_eps = 0.0
    model.learn(300)
    assert model._acting is not None and model._acting[-1] is None
    actions, _ = _stored(model, 300)
    assert not actions.any()


@pytest.mark.slow
def test_a_compiled_dqn_acts_through_numpy_with_the_policys_greedy_actions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    model = DQN("MlpPolicy", "CartPole-v1", compile=True, **SETTINGS)
    model.learn(1_000)
    direct = model._acting[-1]  # type: ignore[index]
    assert isinstance(direct, NumpyMlp)
    _, observations = _stored(model, 1_000)
    observations = observations.reshape(1_000, -1)
    with torch.inference_mode():
        q_values = model.policy.q_values(torch.from_numpy(observations)).numpy()
    np.testing.assert_allclose(direct(observations), q_values, rtol=1e-5, atol=1e-6)
    separated = np.abs(q_values[:, 0] - q_values[:, 1]) > 1e-5
    assert separated.mean() > 0.9
    np.testing.assert_array_equal(direct.argmax(observations)[separated], q_values.argmax(axis=1)[separated])
