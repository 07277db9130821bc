"""An algorithm given a space it does not take raises an AssertionError, as SB3's algorithms assert."""

from __future__ import annotations

import pytest

from lit_sb3 import DQN, SAC
from lit_sb3_core.errors import ConfigurationError, UnsupportedSpaceError


@pytest.mark.parametrize(
    ("algo", "env_id", "message"),
    [(SAC, "CartPole-v1", r"SAC does not support Discrete\(2\) actions"), (DQN, "Pendulum-v1", r"DQN .*Box")],
)
def test_unsupported_action_spaces_are_assertion_errors(algo: type, env_id: str, message: str) -> None:
    with pytest.raises(UnsupportedSpaceError, match=message) as caught:
        algo("MlpPolicy", env_id)
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, ConfigurationError)
