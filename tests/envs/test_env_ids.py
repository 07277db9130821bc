"""Unknown env ids keep gymnasium's error class (code catches DeprecatedEnv to fall back to the new
version, VersionNotFound/NameNotFound to explain) and gain lit-sb3's close-match hint."""

from __future__ import annotations

import gymnasium as gym
import pytest

from lit_sb3_core.envs.make import make_env_by_id


def test_a_deprecated_id_raises_gymnasiums_deprecated_env() -> None:
    deprecated = next(
        (env_id for env_id in ("Taxi-v3", "CliffWalking-v0") if env_id not in gym.registry), None
    )
    if deprecated is None:
        pytest.skip("this gymnasium deprecates neither Taxi-v3 nor CliffWalking-v0")
    with pytest.raises(gym.error.DeprecatedEnv, match="deprecated"):
        make_env_by_id(deprecated, {})


@pytest.mark.parametrize(
    ("env_id", "error"),
    [("CartPole-v9", gym.error.VersionNotFound), ("CartPol-v1", gym.error.NameNotFound)],
)
def test_unknown_ids_keep_their_class_and_name_close_matches(env_id: str, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"Unknown environment id .*Did you mean 'CartPole-v1'"):
        make_env_by_id(env_id, {})
