"""``NatureCNN(channels_last=True)``, the default: on the CPU the float32 trunk runs its convolutions on
channels-last memory (oneDNN's faster kernels: benchmarks/learning/bench_cnn_precision.py), which changes
only the rounding; ``channels_last=False`` keeps SB3's contiguous layout, which the DQN test of
tests/compat/test_sb3_update_parity.py needs to be SB3's run bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

import lit_sb3
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.nets.torch_layers import NatureCNN

_SPACE = spaces.Box(0, 255, (4, 84, 84), np.uint8)


def _conv_input_layouts(cnn: NatureCNN, obs: torch.Tensor) -> tuple[torch.Tensor, list[bool]]:
    """The features for ``obs`` and, for each convolution, whether its input was channels-last."""
    seen: list[bool] = []
    hooks = [
        layer.register_forward_pre_hook(
            lambda _, args: seen.append(args[0].is_contiguous(memory_format=torch.channels_last))
        )
        for layer in cnn.cnn
        if isinstance(layer, torch.nn.Conv2d)
    ]
    try:
        return cnn(obs), seen
    finally:
        for hook in hooks:
            hook.remove()


def test_the_float32_trunk_runs_channels_last_and_computes_what_the_contiguous_one_does() -> None:
    torch.manual_seed(0)
    fast = NatureCNN(_SPACE)
    sb3_layout = NatureCNN(_SPACE, channels_last=False)
    sb3_layout.load_state_dict(fast.state_dict())
    obs = torch.randint(0, 256, (16, 4, 84, 84)).float() / 255.0
    fast_features, fast_layouts = _conv_input_layouts(fast, obs)
    exact, sb3_layouts = _conv_input_layouts(sb3_layout, obs)
    assert fast_layouts == [True, True, True], "every convolution got channels-last memory"
    assert sb3_layouts == [False, False, False], "channels_last=False leaves SB3's contiguous frames"
    assert fast_features.is_contiguous() and fast_features.shape == (16, 512)
    torch.testing.assert_close(fast_features, exact, rtol=0, atol=1e-5)
    fast_features.square().mean().backward()
    exact.square().mean().backward()
    for (name, mine), theirs in zip(fast.named_parameters(), sb3_layout.parameters()):
        assert mine.grad is not None and theirs.grad is not None
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-6, msg=f"{name}'s gradient")


def test_the_bf16_trunk_keeps_the_contiguous_layout() -> None:
    """channels-last added nothing to the bf16 trunk where it was measured (bench_cnn_precision.py)."""
    obs = torch.randint(0, 256, (2, 4, 84, 84)).float() / 255.0
    _, layouts = _conv_input_layouts(NatureCNN(_SPACE, bf16=True), obs)
    assert layouts == [False, False, False]


def test_channels_last_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match=r"channels_last=\.\.\.\) must be True or False"):
        NatureCNN(_SPACE, channels_last="yes")  # type: ignore[arg-type]


def test_the_layout_is_a_policy_keyword_saved_with_the_model(tmp_path: object) -> None:
    """Through SB3-style ``learn()`` on Breakout frames, saved and loaded: the loaded model keeps the layout
    and acts as the trained one does."""
    pytest.importorskip("ale_py")
    model = lit_sb3.DQN(
        "CnnPolicy", buffer_size=500, learning_starts=50, batch_size=8, seed=0,
        policy_kwargs={"features_extractor_kwargs": {"channels_last": False}},
    )  # fmt: skip
    model.learn(120, env=lit_sb3.RLEnvDataModule(train_env="BreakoutNoFrameskip-v4", atari=True, seed=0))
    assert model.policy.q_net.features_extractor.channels_last is False
    path = f"{tmp_path}/dqn.zip"
    model.save(path)
    loaded = lit_sb3.DQN.load(path)
    assert loaded.policy.q_net.features_extractor.channels_last is False
    obs = np.random.default_rng(0).integers(0, 256, (8, 4, 84, 84), dtype=np.uint8)
    np.testing.assert_array_equal(
        loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )
