"""``MaskablePPO(compile=True)``: each minibatch update (the masked evaluation included) as one compiled
program, learning what the eager update learns, masks applied.

The equivalence compiles with inductor (a minute or more of a loaded CPU), so it is marked slow; the argument
check runs by default. Inductor's caches go to a temporary folder, not the user's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _ppo_mask_envs as envs
import pytest
import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_ppo_mask import MaskablePPO

torch.set_num_threads(1)


def test_compile_must_be_true_false_or_auto() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        MaskablePPO("MlpPolicy", envs.ARMS, compile="yes")


def _trained(compiled: bool, env_id: str, **overrides: Any) -> MaskablePPO:
    # Built and trained one after the other: both start from the same global RNG state.
    model = MaskablePPO(
        "MlpPolicy",
        env_id,
        n_steps=64,
        batch_size=48,  # 64 = 48 + a truncated minibatch of 16: two shapes, two programs
        n_epochs=2,
        learning_rate="lin_1e-3",
        clip_range="lin_0.2",
        ent_coef=0.01,
        seed=0,
        device="cpu",
        compile=compiled,
        policy_kwargs={"net_arch": [16]},
        **overrides,
    )
    model.learn(256)
    return model


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "overrides"),
    [(envs.ARMS, {}), (envs.MULTI_ARMS, {"clip_range_vf": 0.2, "target_kl": 1e-6})],
    ids=["discrete", "multidiscrete-clip-vf-target-kl"],
)
def test_a_compiled_maskable_ppo_learns_the_weights_the_eager_one_learns(
    env_id: str, overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same seed, 4 rollouts (16 minibatch updates under the stored masks, decaying learning rate and clip
    range): the same weights, Adam state, logged metrics and step count within float rounding, so the
    same rollouts too, and no invalid action taken."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    envs.MaskedChoicesEnv.invalid_actions = 0
    eager = _trained(False, env_id, **overrides)
    compiled = _trained(True, env_id, **overrides)
    assert envs.MaskedChoicesEnv.invalid_actions == 0
    assert not compiled.rollout.action_masks.all()  # the update scored actions under real masks
    assert compiled.n_updates == eager.n_updates
    assert compiled.trainer.global_step == eager.trainer.global_step
    if "target_kl" in overrides:  # the early stop must have skipped updates, or this case tests nothing more
        assert eager.trainer.global_step < 4 * 2 * 2
    torch.testing.assert_close(compiled.rollout.observations, eager.rollout.observations)
    torch.testing.assert_close(compiled.rollout.action_masks, eager.rollout.action_masks)
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    ours_state = compiled.optimizers().optimizer.state_dict()["state"]
    theirs_state = eager.optimizers().optimizer.state_dict()["state"]
    # Moments on the scale of the largest one of any parameter: a ratio that rounds to the other side of the
    # clip range flips one sample's share of a gradient (1/48 of a minibatch), and entries far below the scale
    # (near-cancelling gradient sums) carry the kernels' rounding; a wrong update would be off by its own size.
    scale = max(float(state["exp_avg_sq"].abs().max()) for state in theirs_state.values())
    first = max(float(state["exp_avg"].abs().max()) for state in theirs_state.values())
    for index, state in theirs_state.items():
        torch.testing.assert_close(
            ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-2 * first
        )
        torch.testing.assert_close(
            ours_state[index]["exp_avg_sq"], state["exp_avg_sq"], rtol=1e-3, atol=1e-3 * scale
        )
        assert float(ours_state[index]["step"]) == float(state["step"])
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            # The clip fraction counts samples past a threshold: a rounding-level difference in a ratio on
            # the threshold flips a sample (1/48 of a minibatch), so it is compared to that resolution.
            tolerance = 0.05 if key == "train/clip_fraction" else 1e-6
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-4, abs=tolerance), key
