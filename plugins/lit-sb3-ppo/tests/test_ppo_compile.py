"""``PPO(compile=True)``: each minibatch update as one compiled program, learning what the eager update learns.

The equivalence runs compile with inductor (a C++ build: a minute or more of a loaded CPU), so it is marked
slow; the argument checks run by default. Inductor's caches go to a temporary folder, not the user's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_ppo import PPO

torch.set_num_threads(1)


def test_compile_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        PPO("MlpPolicy", "CartPole-v1", compile="yes")


def _halving(start: float) -> Any:
    """A schedule from ``start`` down to ``start / 2`` at the end of training."""
    return lambda progress_remaining: start * (0.5 + 0.5 * progress_remaining)


def _trained(compiled: bool, steps: int, **overrides: Any) -> PPO:
    # Built and trained one after the other: both start from the same global RNG state.
    # Schedules that end above 0: with lin_0.2 the last update clipped at 0, where the surrogate's gradient
    # for a sample depends on whether its ratio rounds to just above or below 1 (torch.min's tie, clamp's
    # edge): the last update's gradients then differed by rounding's draw (exp_avg 20x and 78x its
    # tolerance below, 1e-3 / 1e-6; clip fractions 0.06 vs 0.14 and 0.0 vs 0.18). Ending at half, exp_avg
    # is at 5e-4 of it and exp_avg_sq at 2e-4 of its own (was 0.14 and 0.48). The learning rate ends at half
    # too, so the last update moves the weights (lin_ ended at 0).
    model = PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=64,
        batch_size=48,  # 64 = 48 + a truncated minibatch of 16: two shapes, two programs
        n_epochs=2,
        learning_rate=_halving(1e-3),
        clip_range=_halving(0.2),
        ent_coef=0.01,
        seed=0,
        device="cpu",
        compile=compiled,
        **overrides,
    )
    model.learn(steps)
    return model


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [{}, {"target_kl": 1e-5}], ids=["plain", "target-kl"])
def test_a_compiled_ppo_learns_the_weights_the_eager_one_learns(
    overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same seed, 4 rollouts (16 minibatch updates, decaying learning rate and clip range; with target_kl,
    epochs cut short): the same weights, Adam state, logged metrics and Lightning step count within float
    rounding, so the same rollouts too."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _trained(False, 256, **overrides)
    compiled = _trained(True, 256, **overrides)
    assert compiled.n_updates == eager.n_updates
    assert compiled.trainer.global_step == eager.trainer.global_step
    if overrides:  # the early stop must have skipped updates, or this case tests nothing more
        assert eager.trainer.global_step < 4 * 2 * 2
    else:
        assert eager.trainer.global_step == 16
    torch.testing.assert_close(compiled.rollout_buffer.observations, eager.rollout_buffer.observations)
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    ours_state = compiled.optimizers().optimizer.state_dict()["state"]
    theirs_state = eager.optimizers().optimizer.state_dict()["state"]
    # Second moments on the scale of the largest one of any parameter: entries 1e-4 to 1e-7 of it (units whose
    # gradients are near-cancelling sums) carry the compiled and eager kernels' rounding; a wrong update rule
    # would be off by its own size.
    assert eager.last_metrics["train/clip_range"] == pytest.approx(0.1)
    scale = max(float(state["exp_avg_sq"].abs().max()) for state in theirs_state.values())
    for index, state in theirs_state.items():
        torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-6)
        torch.testing.assert_close(
            ours_state[index]["exp_avg_sq"], state["exp_avg_sq"], rtol=1e-3, atol=1e-4 * scale
        )
        assert float(ours_state[index]["step"]) == float(state["step"])
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            # The clip fraction counts samples past a threshold: a rounding-level difference in a ratio
            # on the threshold flips a sample (1/48 of a minibatch), so it is compared to that resolution.
            tolerance = 0.05 if key == "train/clip_fraction" else 1e-6
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-4, abs=tolerance), key
