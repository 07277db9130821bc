"""SB3's recommendation of the CPU for on-policy MLP policies (``_maybe_recommend_cpu``)."""

from __future__ import annotations

import warnings

import torch

from lit_sb3 import A2C, PPO
from lit_sb3.common.envs import FakeImageEnv


def test_an_mlp_policy_bound_for_a_gpu_gets_sb3s_recommendation_of_the_cpu() -> None:
    """SB3 warns when PPO/A2C with an MLP policy is to train on a GPU; a CNN policy is worth the GPU."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # on this CPU-only machine: no warning
        mlp = PPO("MlpPolicy", "Pendulum-v1", device="cpu")
        cnn = A2C("CnnPolicy", FakeImageEnv(screen_height=36, screen_width=36), device="cpu")
    for model, warns in ((mlp, True), (cnn, False)):
        model.device = torch.device("cuda")  # as if built on a GPU machine
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            model._maybe_recommend_cpu()
        messages = [str(w.message) for w in record]
        assert any("on the GPU" in m and "device='cpu'" in m for m in messages) == warns, messages
