"""Action noise: vectorized draws, statistics, resets, JSON specs and reproducibility."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lit_sb3_core.data.noise import (
    NormalActionNoise,
    OrnsteinUhlenbeckActionNoise,
    make_action_noise,
    noise_to_spec,
)
from lit_sb3_core.errors import ConfigurationError


def test_normal_noise_shape_and_statistics() -> None:
    noise = NormalActionNoise(mean=[0.5, -0.5], sigma=[0.1, 0.3], n_envs=3, seed=0)
    draws = np.stack([noise() for _ in range(4000)])
    assert draws.shape == (4000, 3, 2) and draws.dtype == np.float32
    np.testing.assert_allclose(draws.mean(axis=(0, 1)), [0.5, -0.5], atol=0.02)
    np.testing.assert_allclose(draws.std(axis=(0, 1)), [0.1, 0.3], rtol=0.05)
    # Environments draw independently.
    assert abs(np.corrcoef(draws[:, 0, 1], draws[:, 1, 1])[0, 1]) < 0.1


def test_ornstein_uhlenbeck_is_correlated_and_resets_per_env() -> None:
    noise = OrnsteinUhlenbeckActionNoise(mean=0.0, sigma=0.5, theta=0.15, dt=0.01, n_envs=2, seed=1)
    noise.resize(1)
    draws = np.stack([noise()[:, 0] for _ in range(3000)])
    lag1 = np.corrcoef(draws[:-1, 0], draws[1:, 0])[0, 1]
    assert lag1 > 0.9  # Brownian motion with friction, unlike white noise
    noise.reset([1])
    assert noise.noise_prev[1, 0] == 0.0 and noise.noise_prev[0, 0] != 0.0
    start = OrnsteinUhlenbeckActionNoise(mean=0.0, sigma=0.1, initial_noise=[0.3], n_envs=2)
    start.resize(1)
    assert np.all(start.noise_prev == 0.3)


def test_same_seed_same_draws_and_state_round_trip() -> None:
    a = NormalActionNoise(0.0, 0.2, n_envs=2, seed=7)
    b = NormalActionNoise(0.0, 0.2, n_envs=2, seed=7)
    np.testing.assert_array_equal(a(), b())
    ou = OrnsteinUhlenbeckActionNoise(0.0, 0.3, seed=3)
    ou.resize(2)
    ou()
    state = json.loads(json.dumps(ou.state_dict()))  # checkpoints hold plain values
    expected = ou()
    restored = OrnsteinUhlenbeckActionNoise(0.0, 0.3)
    restored.resize(2)
    restored.load_state_dict(state)
    np.testing.assert_array_equal(restored(), expected)


def test_specs_build_and_round_trip() -> None:
    noise = make_action_noise({"type": "normal", "sigma": 0.1}, action_dim=3, n_envs=4, seed=0)
    assert isinstance(noise, NormalActionNoise) and noise().shape == (4, 3)
    np.testing.assert_array_equal(noise.sigma, [0.1, 0.1, 0.1])
    spec = noise_to_spec(noise)
    json.dumps(spec)
    rebuilt = make_action_noise(spec, action_dim=3)
    np.testing.assert_array_equal(rebuilt.sigma, noise.sigma)
    ou = make_action_noise({"type": "ou", "sigma": [0.2, 0.4], "theta": 0.2}, action_dim=2)
    assert isinstance(ou, OrnsteinUhlenbeckActionNoise) and ou.theta == 0.2
    assert noise_to_spec(ou)["type"] == "ornstein_uhlenbeck"
    assert make_action_noise(None, action_dim=2) is None


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"type": "pink", "sigma": 0.1}, "Unknown action noise type"),
        ({"type": "normal"}, 'needs "sigma"'),
        ({"type": "normal", "sigma": 0.1, "theta": 0.1}, "Unknown keys"),
        (
            {"type": "normal", "sigma": -0.1},
            "sigma must be a finite number or a list of finite numbers >= 0, got -0.1",
        ),
    ],
)
def test_bad_specs_are_refused(spec: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        make_action_noise(spec, action_dim=2)


def test_dimension_mismatch_and_wrong_types_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="has 2 dimensions but the actions have 3"):
        make_action_noise(NormalActionNoise([0.0, 0.0], [0.1, 0.1]), action_dim=3)
    with pytest.raises(ConfigurationError, match="action_noise must be None"):
        noise_to_spec(0.1)
