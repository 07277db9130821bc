"""What an off-policy loop stores when its training env is wrapped in SB3's ``VecNormalize``: the originals.

SB3's off-policy algorithms keep the *original* (unnormalized) observations and rewards in the replay
buffer and normalize them when they sample (``replay_buffer.sample(batch_size, env=VecNormalize)``), so
old transitions are normalized with the current statistics, and HER relabels goals and computes rewards on
original goals. The policy still acts on what the env returned (normalized).

``OriginalTransitions`` reads the originals from the wrapper after each step: ``get_original_obs()`` and
``get_original_reward()``, and, where an episode ended, the final observation before normalization.
lit-sb3's ``VecNormalize`` keeps those (``get_original_terminal_obs()``); another ``VecNormalize`` (SB3's own)
gives them back through ``unnormalize_obs``, as SB3 does (exact unless clipping cut the value).
Only numpy: the wrapper is duck-typed, so this module needs neither the facade nor SB3.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["OriginalTransitions"]


class OriginalTransitions:
    """The original observations and rewards of each step of a ``VecNormalize`` env, for the replay buffer.

    Args:
        vec_normalize: the ``VecNormalize`` of the training env.
        last_obs: the (normalized) observation the loop acts on next; its original is read from the
            wrapper, or, when the wrapper has none yet, unnormalized from it.
    """

    def __init__(self, vec_normalize: Any, last_obs: Any) -> None:
        self.vec_normalize = vec_normalize
        original = vec_normalize.get_original_obs()
        self.last_obs: Any = original if original is not None else vec_normalize.unnormalize_obs(last_obs)
        self._terminal = getattr(vec_normalize, "get_original_terminal_obs", None)

    def step(self, dones: np.ndarray, final_obs: Any) -> tuple[Any, Any, np.ndarray]:
        """``(obs, next_obs, rewards)`` to store for the step just taken, all original.

        ``dones``: which envs' episodes ended; ``final_obs``: gymnasium's ``infos["final_obs"]`` (the
        normalized final observations), read only where the wrapper kept no original.
        """
        wrapper = self.vec_normalize
        new_obs = wrapper.get_original_obs()
        rewards = np.asarray(wrapper.get_original_reward())
        next_obs = new_obs
        ended = np.flatnonzero(dones)
        if ended.size:
            kept = self._terminal() if self._terminal is not None else {}
            next_obs = _copy(new_obs)  # new_obs stays the next step's obs: its reset rows must not change
            for i in ended:
                original = kept.get(int(i))
                if original is None:
                    original = wrapper.unnormalize_obs(final_obs[i])
                _set_row(next_obs, int(i), original)
        obs, self.last_obs = self.last_obs, new_obs
        return obs, next_obs, rewards


def _copy(obs: Any) -> Any:
    if isinstance(obs, dict):
        return {key: np.array(value, copy=True) for key, value in obs.items()}
    return np.array(obs, copy=True)


def _set_row(obs: Any, index: int, value: Any) -> None:
    if isinstance(obs, dict):
        for key, array in obs.items():
            array[index] = value[key]
    else:
        obs[index] = value
