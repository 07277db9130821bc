"""Monitor's misuse errors read as SB3's (code matches on their text) and reset_keywords log reset()'s own
keywords as SB3's Monitor does, besides keys of options."""

from __future__ import annotations

import gymnasium as gym
import pytest

from lit_sb3.common.monitor import Monitor, load_results


def test_early_reset_and_step_before_reset_raise_sb3s_runtime_errors() -> None:
    strict = Monitor(gym.make("CartPole-v1"), allow_early_resets=False)
    with pytest.raises(RuntimeError, match="Tried to step environment that needs reset"):
        strict.step(strict.action_space.sample())
    strict.reset(seed=0)
    strict.step(strict.action_space.sample())
    with pytest.raises(
        RuntimeError, match=r"Tried to reset an environment before done.*allow_early_resets=True"
    ):
        strict.reset()


def test_reset_keywords_name_what_is_missing_and_how_to_pass_it() -> None:
    monitor = Monitor(gym.make("CartPole-v1"), reset_keywords=("level",))
    with pytest.raises(
        ValueError, match=r"Expected you to pass keyword argument level into reset.*options=\{'level'"
    ):
        monitor.reset()
    seeded = Monitor(gym.make("CartPole-v1"), reset_keywords=("seed",))
    with pytest.raises(ValueError, match=r"reset\(seed=\.\.\.\)"):
        seeded.reset()


def test_reset_keywords_log_options_seed_and_option_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = Monitor(gym.make("CartPole-v1"), str(tmp_path), reset_keywords=("seed", "options", "level"))
    env.reset(seed=3, options={"level": 2})
    assert env.current_reset_info == {"seed": 3, "options": {"level": 2}, "level": 2}
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    env.close()
    frame = load_results(str(tmp_path))
    assert list(frame["seed"]) == [3] and list(frame["level"]) == [2]
