"""``NatureCNN(bf16=True)``: the CNN trunk under bfloat16 autocast, float32 features, through SB3's
``learn()`` (``policy_kwargs={"features_extractor_kwargs": {"bf16": True}}``), saved and loaded as any
policy keyword.

The PPO run trains the same seeded CnnPolicy twice at a CI budget, float32 and bf16: both must learn the
pixel task (tests/engine/test_bf16_parity.py's ``BarSide``, chance 0.5).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

import lit_sb3
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.nets.torch_layers import NatureCNN

_SPACE = spaces.Box(0, 255, (4, 84, 84), np.uint8)


def test_bf16_features_are_float32_and_close_to_float32_ones() -> None:
    torch.manual_seed(0)
    fp32 = NatureCNN(_SPACE)
    bf16 = NatureCNN(_SPACE, bf16=True)
    bf16.load_state_dict(fp32.state_dict())
    obs = torch.randint(0, 256, (8, 4, 84, 84)).float() / 255.0
    exact, approx = fp32(obs), bf16(obs)
    assert approx.dtype == torch.float32 and all(p.dtype == torch.float32 for p in bf16.parameters())
    assert not torch.equal(exact, approx), "the trunk really ran in bf16"
    scale = float(exact.abs().max())
    assert scale > 0 and float((exact - approx).abs().max()) <= 0.05 * scale
    approx.square().mean().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in bf16.parameters())


def test_bf16_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match=r"bf16=\.\.\.\) must be True or False"):
        NatureCNN(_SPACE, bf16="yes")  # type: ignore[arg-type]


class _BarSide(gym.Env):
    """A 36x36 uint8 frame with a bright bar on the left or the right; reward 1 for naming the side."""

    observation_space = spaces.Box(0, 255, (1, 36, 36), np.uint8)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: object = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.side = int(self.np_random.integers(2))
        frame = np.zeros((1, 36, 36), np.uint8)
        frame[0, 8:28, slice(4, 10) if self.side == 0 else slice(26, 32)] = 255
        return frame, {}

    def step(self, action: object) -> tuple[np.ndarray, float, bool, bool, dict]:
        reward = 1.0 if int(action) == self.side else 0.0  # type: ignore[call-overload]
        return np.zeros((1, 36, 36), np.uint8), reward, True, False, {}


def test_ppo_cnn_policy_learns_the_same_with_a_bf16_trunk(tmp_path: object) -> None:
    scores = {}
    for bf16 in (False, True):
        model = lit_sb3.PPO(
            "CnnPolicy", _BarSide, n_steps=32, batch_size=64, n_epochs=4, learning_rate=1e-3, seed=0,
            policy_kwargs={"features_extractor_kwargs": {"bf16": bf16}},
        )  # fmt: skip
        model.learn(1_536, n_envs=4)
        assert model.policy.features_extractor.bf16 is bf16
        scores[bf16], _ = lit_sb3.evaluate_policy(model, _BarSide(), n_eval_episodes=40)
        if bf16:
            path = f"{tmp_path}/bf16.zip"
            model.save(path)
            loaded = lit_sb3.PPO.load(path)
            assert loaded.policy.features_extractor.bf16 is True
            obs = np.stack([_BarSide().reset(seed=i)[0] for i in range(8)])
            np.testing.assert_array_equal(
                loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
            )
    assert scores[False] >= 0.95 and scores[True] >= 0.95, scores  # chance is 0.5


@pytest.mark.parametrize("native", [False, True])
def test_bf16_trunk_warns_once_where_the_cpu_emulates_bf16(
    native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without avx512_bf16 or AMX torch emulates bf16 and the trunk is slower than float32: say so, once;
    say nothing where bf16 is native, nor for the float32 trunk."""
    import warnings

    from lit_sb3_core.nets import torch_layers

    monkeypatch.setattr(torch_layers, "_cpu_has_native_bf16", lambda: native)
    torch_layers._warn_if_bf16_is_emulated.cache_clear()
    obs = torch.rand(2, 4, 84, 84)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        NatureCNN(_SPACE)(obs)
        bf16 = NatureCNN(_SPACE, bf16=True)
        bf16(obs)
        bf16(obs)
    torch_layers._warn_if_bf16_is_emulated.cache_clear()  # the next caller probes the real CPU again
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    if native:
        assert messages == []
    else:
        assert len(messages) == 1 and "CPU without native bf16" in messages[0]
        assert "features_extractor_kwargs={'bf16': True}" in messages[0]
