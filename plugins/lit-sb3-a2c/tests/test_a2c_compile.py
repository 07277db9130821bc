"""``A2C(compile=True)``: each update (evaluation of the rollout, loss, gradients, clipping, RMSprop) as one
compiled program, learning what the eager update learns.

The equivalence run compiles with inductor (a C++ build: a minute of a loaded CPU cold), so it is marked
slow; the argument checks run by default. Inductor's caches go to a temporary folder, not the user's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from lit_sb3_a2c import A2C
from lit_sb3_core.errors import ConfigurationError

torch.set_num_threads(1)


def test_compile_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        A2C("MlpPolicy", "CartPole-v1", compile="yes")


def test_an_optimizer_it_cannot_compile_is_refused_before_training() -> None:
    model = A2C(
        "MlpPolicy", "CartPole-v1", compile=True, policy_kwargs={"optimizer_class": "rmsprop_tf_like"}
    )
    with pytest.raises(ConfigurationError, match="Adam, AdamW and RMSprop"):
        model.learn(16)


def _trained(compiled: bool, steps: int, **overrides: Any) -> A2C:
    # Built and trained one after the other: both start from the same global RNG state.
    model = A2C(
        "MlpPolicy",
        "CartPole-v1",
        learning_rate="lin_7e-4",
        ent_coef=0.01,
        seed=0,
        device="cpu",
        compile=compiled,
        **overrides,
    )
    model.learn(steps)
    return model


@pytest.mark.slow
def test_a_compiled_a2c_learns_the_weights_the_eager_one_learns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SB3's defaults (RMSprop, clipping at 0.5), a decaying learning rate, 100 updates of 5 steps: the same
    weights, RMSprop state, logged losses and Lightning step count within float rounding, so the same
    rollouts too."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _trained(False, 500)
    compiled = _trained(True, 500)
    assert compiled.n_updates == eager.n_updates == 100
    assert compiled.trainer.global_step == eager.trainer.global_step == 100
    torch.testing.assert_close(compiled.rollout_buffer.observations, eager.rollout_buffer.observations)
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    ours_state = compiled.optimizers().optimizer.state_dict()["state"]
    theirs_state = eager.optimizers().optimizer.state_dict()["state"]
    assert ours_state.keys() == theirs_state.keys()
    for index, state in theirs_state.items():
        assert set(ours_state[index]) == {"step", "square_avg"} == set(state)
        torch.testing.assert_close(ours_state[index]["square_avg"], state["square_avg"], rtol=1e-3, atol=1e-9)
        assert float(ours_state[index]["step"]) == float(state["step"]) == 100
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key
