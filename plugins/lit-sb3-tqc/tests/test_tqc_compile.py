"""``TQC(compile=True)``: SAC's compiled gradient step with TQC's quantile critic loss learns what the
eager TQC learns (slow: inductor compiles the program, a minute or more of CPU cold)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from lit_sb3_tqc import TQC


def _tqc(compile: bool) -> TQC:
    return TQC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=100,
        buffer_size=2_000,
        batch_size=64,
        learning_rate="lin_1e-3",
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32, 32], "n_quantiles": 5, "n_critics": 2},
        compile=compile,
    )


@pytest.mark.slow
def test_a_compiled_tqc_learns_what_the_eager_one_learns(monkeypatch: Any, tmp_path: Path) -> None:
    """``learn(130)`` (30 gradient steps), then 60 more from the same buffer: the same weights and Adam
    states within float rounding (each model built right before its run: building seeds torch)."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _tqc(False)
    eager.learn(130)
    compiled = _tqc(True)
    compiled.learn(130)
    assert compiled.trainer.global_step == eager.trainer.global_step == 3 * 30
    for model in (eager, compiled):
        torch.manual_seed(1)
        model.train(gradient_steps=60)
    assert compiled.n_updates == eager.n_updates == 90
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    for ours_optimizer, theirs_optimizer in zip(compiled.optimizers(), eager.optimizers(), strict=True):
        ours_state = ours_optimizer.optimizer.state_dict()["state"]
        for index, state in theirs_optimizer.optimizer.state_dict()["state"].items():
            assert float(ours_state[index]["step"]) == float(state["step"]) == 90
            torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-6)
