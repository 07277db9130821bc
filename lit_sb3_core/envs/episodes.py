"""Whose episodes count: the vector env's, or those of a recorder inside each sub-env.

SB3 reports the returns its ``Monitor`` saw. On Atari that wrapper sits on the raw game, below the
wrappers that end an episode at every lost life and clip rewards, so ``rollout/ep_rew_mean`` and
``evaluate_policy`` report whole games with their real scores. Gymnasium's single-env
``RecordEpisodeStatistics`` is that recorder here (``RLEnvDataModule(atari=True)`` puts one there); when
every sub-env carries one, training statistics and evaluations count its episodes, read from
``info["final_info"]["episode"]`` of the SAME_STEP vector env, and episodes that end without it (a lost
life) are not counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

__all__ = ["RecordInnerEpisodeStatistics", "finished_episodes", "records_episodes"]

# An attribute only gymnasium's single-env RecordEpisodeStatistics has (found through the wrapper chain).
_RECORDER_ATTRIBUTE = "length_queue"


def records_episodes(env: VectorEnv) -> bool:
    """True when every sub-env of ``env`` is wrapped in an episode recorder (sync and async envs alike)."""
    base = env.unwrapped
    flag = getattr(base, "inner_episode_statistics", None)  # vector envs that record games themselves
    if flag is not None:
        return bool(flag)
    call = getattr(base, "call", None)  # gymnasium's sync and async vector envs have it
    if call is None:  # a vector env that is not gymnasium's (its own episode logic counts)
        return False
    try:
        found = call("has_wrapper_attr", _RECORDER_ATTRIBUTE)
    except Exception:
        return False
    return len(found) > 0 and all(bool(f) for f in found)


def finished_episodes(infos: dict[str, Any]) -> dict[int, tuple[float, int]]:
    """``{env index: (return, length)}`` of the recorded episodes that ended in this step."""
    final = infos.get("final_info")
    if not isinstance(final, dict) or "episode" not in final:
        return {}
    episode, mask = final["episode"], final["_episode"]
    return {int(i): (float(episode["r"][i]), int(episode["l"][i])) for i in np.flatnonzero(mask)}


class RecordInnerEpisodeStatistics(RecordEpisodeStatistics):
    """Gymnasium's vector ``RecordEpisodeStatistics`` interface (``return_queue``, ``length_queue``,
    ``episode_count``), filled from the recorders inside the sub-envs instead of the vector env's own
    done flags. The infos are passed on untouched."""

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        finished = finished_episodes(infos)
        if finished:
            self.episode_count += len(finished)
            for episode_return, episode_length in finished.values():
                self.return_queue.append(
                    np.float64(episode_return)
                )  # the types gymnasium's own recorder queues
                self.length_queue.append(np.int_(episode_length))
        return observations, rewards, terminations, truncations, infos
