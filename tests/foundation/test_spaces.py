"""Space helpers: image detection and layout, preprocessing of every observation space, JSON round trips."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3_core.foundation.spaces import (
    ObsPreprocessor,
    action_dim,
    channels_first_space,
    describe_space,
    flat_feature_dim,
    is_image_space,
    is_image_space_channels_first,
    obs_to_tensor,
    preprocess_obs,
    space_from_json,
    space_to_json,
    to_numpy,
)

torch.set_num_threads(1)

HWC = spaces.Box(0, 255, (36, 40, 3), np.uint8)
CHW = spaces.Box(0, 255, (3, 36, 40), np.uint8)


def test_image_detection_follows_sb3() -> None:
    assert is_image_space(HWC) and is_image_space(CHW)
    assert not is_image_space(spaces.Box(0, 1, (36, 36, 3), np.float32))  # not uint8
    assert not is_image_space(spaces.Box(0, 100, (36, 36, 3), np.uint8))  # bounds are not [0, 255]
    assert not is_image_space(spaces.Box(0, 255, (36, 36), np.uint8))  # not 3-D
    assert is_image_space(spaces.Box(0, 1, (3, 36, 36), np.float32), normalized_image=True)
    assert is_image_space(HWC, check_channels=True)
    assert not is_image_space(spaces.Box(0, 255, (36, 36, 5), np.uint8), check_channels=True)


def test_channel_order_is_the_smallest_axis() -> None:
    assert is_image_space_channels_first(CHW)
    assert not is_image_space_channels_first(HWC)
    with pytest.warns(UserWarning, match="second axis is the smallest"):
        assert not is_image_space_channels_first(spaces.Box(0, 255, (36, 2, 40), np.uint8))


def test_channels_first_space_transposes_channel_last_images_only() -> None:
    assert channels_first_space(HWC).shape == (3, 36, 40)
    assert channels_first_space(CHW) is CHW
    vector = spaces.Box(-1, 1, (4,))
    assert channels_first_space(vector) is vector
    nested = channels_first_space(spaces.Dict({"img": HWC, "vec": vector}))
    assert nested["img"].shape == (3, 36, 40) and nested["vec"] == vector


def test_images_are_scaled_and_transposed() -> None:
    obs = torch.as_tensor(np.stack([HWC.sample() for _ in range(2)]))
    out = preprocess_obs(obs, HWC)
    assert out.dtype == torch.float32 and out.shape == (2, 3, 36, 40)
    torch.testing.assert_close(out, obs.permute(0, 3, 1, 2).float() / 255.0)
    raw = preprocess_obs(obs, HWC, normalize_images=False)
    torch.testing.assert_close(raw, obs.permute(0, 3, 1, 2).float())
    first = torch.as_tensor(np.stack([CHW.sample() for _ in range(2)]))
    torch.testing.assert_close(preprocess_obs(first, CHW), first.float() / 255.0)


def test_discrete_one_hot_respects_start() -> None:
    space = spaces.Discrete(3, start=-1)
    out = preprocess_obs(torch.tensor([-1, 0, 1]), space)
    torch.testing.assert_close(out, torch.eye(3))


def test_multidiscrete_one_hot_respects_start_and_shape() -> None:
    space = spaces.MultiDiscrete([2, 3], start=[1, -1])
    out = preprocess_obs(torch.tensor([[1, -1], [2, 1]]), space)
    expected = torch.tensor([[1, 0, 1, 0, 0], [0, 1, 0, 0, 1]], dtype=torch.float32)
    torch.testing.assert_close(out, expected)
    grid = spaces.MultiDiscrete([[2, 2], [3, 3]])
    obs = torch.as_tensor(np.stack([grid.sample() for _ in range(4)]))
    assert preprocess_obs(obs, grid).shape == (4, flat_feature_dim(grid)) == (4, 10)


def test_multibinary_and_dict() -> None:
    space = spaces.Dict({"bits": spaces.MultiBinary([2, 3]), "d": spaces.Discrete(4), "img": HWC})
    batch = {
        key: torch.as_tensor(np.stack([sub.sample() for _ in range(5)])) for key, sub in space.spaces.items()
    }
    out = ObsPreprocessor(space)(batch)
    assert out["bits"].shape == (5, 2, 3) and out["bits"].dtype == torch.float32
    assert out["d"].shape == (5, 4)
    assert out["img"].shape == (5, 3, 36, 40)


def test_unsupported_observation_space_is_named() -> None:
    with pytest.raises(NotImplementedError, match=r"Tuple\(Discrete\(2\)"):
        ObsPreprocessor(spaces.Tuple((spaces.Discrete(2), spaces.Discrete(3))))


def test_action_dim_counts_flat_numbers() -> None:
    assert action_dim(spaces.Discrete(5)) == 1
    assert action_dim(spaces.Box(-1, 1, (2, 3))) == 6
    assert action_dim(spaces.MultiDiscrete([2, 3, 4])) == 3
    assert action_dim(spaces.MultiDiscrete([[2, 3], [4, 5]])) == 4
    assert action_dim(spaces.MultiBinary([2, 3])) == 6


@pytest.mark.parametrize(
    "space",
    [
        HWC,
        spaces.Box(low=np.array([-1.0, -2.0]), high=np.array([1.0, np.inf]), dtype=np.float64),
        spaces.Discrete(4, start=2),
        spaces.MultiDiscrete([2, 3], start=[0, 1]),
        spaces.MultiBinary([2, 3]),
        spaces.Dict({"img": CHW, "vec": spaces.Box(-1, 1, (3,)), "d": spaces.Discrete(2)}),
    ],
    ids=["image", "box", "discrete", "multidiscrete", "multibinary", "dict"],
)
def test_json_round_trip(space: spaces.Space) -> None:
    data = json.loads(json.dumps(space_to_json(space)))
    assert space_from_json(data) == space


def test_uniform_bounds_are_stored_as_one_number() -> None:
    data = space_to_json(HWC)
    assert data["low"] == 0 and data["high"] == 255


def test_describe_space() -> None:
    assert describe_space(HWC) == "Box(shape=(36, 40, 3), uint8)"
    assert describe_space(spaces.Tuple((spaces.Discrete(2),))) == "Tuple(Discrete(2))"


def test_action_rescaling_is_one_rule_for_numpy_and_torch() -> None:
    from lit_sb3_core.foundation.spaces import scale_action, unscale_action

    low, high = np.array([-2.0, 0.0], dtype=np.float32), np.array([2.0, 10.0], dtype=np.float32)
    actions = np.array([[-2.0, 0.0], [0.0, 5.0], [2.0, 10.0]], dtype=np.float32)
    scaled = scale_action(actions, low, high)
    np.testing.assert_allclose(scaled, [[-1, -1], [0, 0], [1, 1]])
    np.testing.assert_allclose(unscale_action(scaled, low, high), actions)
    as_tensor = unscale_action(torch.as_tensor(scaled), torch.as_tensor(low), torch.as_tensor(high))
    assert isinstance(as_tensor, torch.Tensor)
    np.testing.assert_allclose(as_tensor.numpy(), actions)


@pytest.mark.parametrize(
    "array",
    [
        np.zeros((8, 4), np.float32),
        np.arange(6.0).reshape(2, 3),
        np.arange(6).reshape(2, 3)[:, ::2],
        np.zeros((2, 2), np.uint8),
        np.zeros(3, bool),
        np.zeros(3, np.float32).view(np.ndarray)[::-1],
    ],
)
def test_obs_to_tensor_is_as_tensor(array: np.ndarray) -> None:
    """On the CPU an observation array becomes a tensor sharing its memory, as ``torch.as_tensor`` makes it
    (the loops write rollouts from it), whichever dtype, layout or device spelling."""
    if array.strides and min(array.strides) < 0:
        with pytest.raises(ValueError):  # as torch.as_tensor: negative strides are not supported
            obs_to_tensor(array, torch.device("cpu"))
        return
    for device in (torch.device("cpu"), "cpu"):
        tensor = obs_to_tensor(array, device)  # type: ignore[arg-type]
        expected = torch.as_tensor(array)
        assert tensor.dtype == expected.dtype and torch.equal(tensor, expected)
        assert tensor.data_ptr() == array.__array_interface__["data"][0]


def test_to_numpy_of_tensors_with_and_without_gradients() -> None:
    plain = torch.arange(3.0)
    assert to_numpy(plain).tolist() == [0.0, 1.0, 2.0]
    assert to_numpy(plain).__array_interface__["data"][0] == plain.data_ptr()  # no copy
    weights = torch.ones(2, requires_grad=True)
    assert to_numpy(weights * 2).tolist() == [2.0, 2.0]
    assert to_numpy(torch.ones(2, dtype=torch.bfloat16)).dtype == np.float32
