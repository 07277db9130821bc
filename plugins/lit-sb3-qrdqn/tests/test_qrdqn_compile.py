"""QRDQN(compile=True): DQN's compiled gradient step with the quantile loss (``td_loss``), learning what the
eager run learns within float rounding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from lit_sb3 import QRDQN
from lit_sb3_core.errors import ConfigurationError


def _qrdqn(compile: bool) -> QRDQN:
    return QRDQN(
        "MlpPolicy",
        "CartPole-v1",
        learning_starts=100,
        buffer_size=2_000,
        train_freq=4,
        target_update_interval=100,
        learning_rate=1e-3,
        max_grad_norm=10,
        # Tanh: see ``_sac`` in tests/sdk/test_update_program.py (ReLU put a gradient-carrying preactivation
        # 1.4e-6 from its kink in this run, where the two runs' preactivations end 4.8e-7 apart).
        policy_kwargs={"n_quantiles": 11, "net_arch": [32], "activation_fn": torch.nn.Tanh},
        seed=0,
        device="cpu",
        compile=compile,
    )


def test_compile_builds_dqns_step_over_the_quantile_loss() -> None:
    model = _qrdqn(True)
    step = model.compiled_step()
    assert step.network is model.policy.q_net and step.loss == model.td_loss and step.clips_at(10)
    with pytest.raises(ConfigurationError, match="compile"):
        QRDQN("MlpPolicy", compile="yes")


@pytest.mark.slow
def test_a_compiled_qrdqn_learns_the_weights_the_eager_one_learns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Same seed, 600 steps (125 gradient steps, clipping, target updates): the same weights within float
    rounding (the compiled loss is the fused form, which sums in another order), and the same greedy actions."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _qrdqn(False)
    eager.learn(600)
    compiled = _qrdqn(True)
    compiled.learn(600)
    assert compiled.n_updates == eager.n_updates == 125
    assert compiled.trainer.global_step == eager.trainer.global_step == 125
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    observations = np.random.default_rng(0).uniform(-0.2, 0.2, size=(64, 4)).astype(np.float32)
    np.testing.assert_array_equal(
        compiled.predict(observations, deterministic=True)[0],
        eager.predict(observations, deterministic=True)[0],
    )
