"""Hindsight Experience Replay: a replay buffer that also replays episodes with the goals they reached.

Andrychowicz et al., "Hindsight Experience Replay", NeurIPS 2017, https://arxiv.org/abs/1707.01495

In a goal-conditioned task with a sparse reward an agent fails almost every episode, so almost every
transition says "reward -1" and nothing is learned. HER notices that a failed episode is a successful one
for a different goal: the states it reached. Besides each real transition it therefore replays *virtual*
ones, the same (observation, action, next observation) with the desired goal replaced by a goal the episode
achieved, and the reward recomputed for that goal by the environment's ``compute_reward``.

``HerReplayBuffer`` is used through any off-policy algorithm's ``replay_buffer_class`` (``"her"`` by name),
on Dict observations with the keys ``achieved_goal`` and ``desired_goal`` (and usually ``observation``).
It follows Stable-Baselines3 2.9's ``HerReplayBuffer``:

* Episode bookkeeping per environment: every row stores where its episode starts (``ep_start``) and, once
  the episode has ended, its length (``ep_length``). Only transitions of *finished* episodes are sampled:
  an episode in progress has no known future to draw goals from. When the circular buffer overwrites the
  first row of a stored episode, the rest of that episode stops being sampled too.
* A minibatch of ``batch_size`` holds ``int(her_ratio * batch_size)`` virtual transitions, with
  ``her_ratio = 1 - 1 / (n_sampled_goal + 1)``: on average ``n_sampled_goal`` virtual replays per real one.
  The real transitions come first in the batch, the virtual ones last.
* A virtual transition takes as its new desired goal (in the observation and the next observation alike)
  the ``achieved_goal`` of a next observation of the same episode, chosen by ``goal_selection_strategy``:
  ``"future"`` a step at or after this one (inclusive, as in SB3), ``"final"`` the episode's last step,
  ``"episode"`` any of its steps. Its reward is ``compute_reward(next achieved_goal, new goal, infos)``,
  one batched call on the first environment of the vector env the algorithm trains on.
* ``dones`` stay the real ones; with ``handle_timeout_termination`` truncated episodes bootstrap.

* ``copy_info_dict=True`` keeps each transition's step info (SB3's per-env info dict, which the off-policy
  loop hands to ``add`` as ``infos=``) and gives ``compute_reward`` the infos of the relabelled
  transitions; with the default False it gets an empty dict per transition, as in SB3.

Not supported, each refused with an error: ``optimize_memory_usage`` (SB3 refuses it too) and n-step returns
(the rewards of a window would all need relabelling).

Saving (``save``/``load``, ``model.save_replay_buffer``) and Lightning checkpoints keep the episode
bookkeeping and the HER settings, without pickle, like every lit-sb3 buffer. Kept infos are saved as JSON
in the header: numpy arrays and scalars come back as lists and Python numbers; a value JSON cannot hold
(an object) is refused with an error naming its key.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import DictReplayBuffer, ReplaySamples, check_non_negative_int, describe_space

__all__ = ["GoalSelectionStrategy", "HerReplayBuffer"]

RewardFunction = Callable[[np.ndarray, np.ndarray, list[dict[str, Any]]], Any]


class GoalSelectionStrategy(Enum):
    """Which achieved goal of the episode replaces the desired goal of a virtual transition.

    SB3's type: a plain ``Enum`` numbered as SB3 numbers it. Every argument that takes a strategy also takes
    its lower-case name (``"future"``), case-insensitively; saved hyperparameters and replay buffer files
    hold that name (``strategy.key``), so they stay plain JSON.
    """

    FUTURE = 0  # a goal achieved at or after this step
    FINAL = 1  # the goal achieved at the end of the episode
    EPISODE = 2  # a goal achieved at any step of the episode

    @property
    def key(self) -> str:
        """The strategy's name as configs and files spell it (SB3's ``KEY_TO_GOAL_STRATEGY`` key)."""
        return self.name.lower()


def _parse_strategy(value: Any) -> GoalSelectionStrategy:
    if isinstance(value, GoalSelectionStrategy):
        return value
    if isinstance(value, str) and value.upper() in GoalSelectionStrategy.__members__:
        return GoalSelectionStrategy[value.upper()]
    names = ", ".join(repr(s.key) for s in GoalSelectionStrategy)
    raise ConfigurationError(
        f"goal_selection_strategy must be one of {names} (or a GoalSelectionStrategy), got {value!r}."
    )


def _reward_function_of(env: Any) -> tuple[RewardFunction, gym.Env | None]:
    """``compute_reward`` of ``env``'s first sub-environment, and a private env copy when one was needed.

    A ``SyncVectorEnv`` lends its first env directly. An ``AsyncVectorEnv``'s envs live in worker
    processes, and calling them all would compute the same batch once per worker, so the buffer builds
    one local copy from the vector env's first factory (as the vector env itself does to read the spaces).
    Other vector envs (an SB3 ``VecEnv`` with wrappers, such as ``VecNormalize``, seen as a gymnasium vector
    env) are asked through their base's ``call`` (wrappers such as the episode recorder do not forward it)
    and the first answer is kept.
    """
    owned: gym.Env | None = None
    target = env
    if not isinstance(env, (VectorEnv, gym.Env)) and callable(getattr(env, "env_method", None)):
        # An SB3-API VecEnv (DummyVecEnv, SubprocVecEnv, make_vec_env): its first env answers, as in SB3.
        def first_env(achieved: np.ndarray, desired: np.ndarray, infos: list[dict[str, Any]]) -> Any:
            return env.env_method("compute_reward", achieved, desired, infos, indices=[0])[0]

        if not env.has_attr("compute_reward"):
            raise ConfigurationError(
                "HerReplayBuffer needs an environment with a compute_reward(achieved_goal, desired_goal, "
                f"info) method to relabel transitions, and the envs of {type(env).__name__} have none. Use a "
                "goal-conditioned environment (gymnasium-robotics' GoalEnv, BitFlippingEnv) or add the method."
            )
        return first_env, None
    if isinstance(env, VectorEnv):
        base = env.unwrapped
        if isinstance(base, SyncVectorEnv):
            target = base.envs[0]
        elif isinstance(base, AsyncVectorEnv):
            target = owned = base.env_fns[0]()
        else:

            def first_answer(achieved: np.ndarray, desired: np.ndarray, infos: list[dict[str, Any]]) -> Any:
                # Vector envs have call(); the VectorEnv base class does not declare it
                return cast(Any, base).call("compute_reward", achieved, desired, infos)[0]

            return first_answer, None
    if isinstance(target, gym.Env):
        try:
            method = target.get_wrapper_attr("compute_reward")  # through the env's wrappers
        except AttributeError:
            method = None
    else:
        method = getattr(target, "compute_reward", None)
    if not callable(method):
        if owned is not None:
            owned.close()
        name = type(target.unwrapped if isinstance(target, gym.Env) else target).__name__
        raise ConfigurationError(
            f"HerReplayBuffer needs an environment with a compute_reward(achieved_goal, desired_goal, info) "
            f"method to relabel transitions, and {name} has none. Use a goal-conditioned "
            "environment (gymnasium-robotics' GoalEnv, lit_sb3_her.envs.BitFlippingEnv) or add the method."
        )
    return method, owned


class HerReplayBuffer(DictReplayBuffer):
    """Replay buffer that relabels goals in hindsight (HER); see the module docstring for the semantics.

    Args:
        buffer_size: transitions kept in total (divided among ``n_envs``).
        observation_space: a Dict space with ``achieved_goal`` and ``desired_goal`` of the same shape.
        action_space: the environment's action space.
        env: the (vector) environment whose ``compute_reward`` scores virtual transitions. Optional here:
            off-policy algorithms hand it over with ``set_env`` when training starts.
        device: where sampled tensors go.
        n_envs: parallel environments feeding the buffer.
        optimize_memory_usage: must be False (refused, as in SB3).
        handle_timeout_termination: truncated episodes bootstrap (``done`` is termination only).
        n_sampled_goal: virtual transitions per real one, on average (0 turns HER off). Default 4.
        goal_selection_strategy: ``"future"`` (default), ``"final"`` or ``"episode"``, or a
            ``GoalSelectionStrategy``.
        copy_info_dict: keep each transition's info dict and hand it to ``compute_reward`` (default False:
            it gets empty infos).
        n_steps: must be 1 (n-step returns are refused).
        gamma: discount (unused with one-step returns; accepted because algorithms pass it).
        seed: seed of the buffer's sampling generator (transitions and goals); None draws from numpy's
            global generator with SB3's calls, so a seeded model samples SB3's minibatches.
    """

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        env: Any = None,
        device: torch.device | str = "cpu",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
        n_sampled_goal: int = 4,
        goal_selection_strategy: GoalSelectionStrategy | str = "future",
        copy_info_dict: bool = False,
        n_steps: int = 1,
        gamma: float = 0.99,
        seed: int | None = None,
    ) -> None:
        _check_goal_space(observation_space)
        if optimize_memory_usage:
            raise ConfigurationError(
                "HerReplayBuffer does not support optimize_memory_usage=True (nor does SB3's): virtual "
                "transitions read goals from the stored next observations. Set optimize_memory_usage=False."
            )
        if n_steps != 1:
            raise ConfigurationError(
                f"HerReplayBuffer samples one-step transitions only, got n_steps={n_steps!r}: relabelling an "
                "n-step window would need every reward in it recomputed. Use n_steps=1 with HER."
            )
        check_non_negative_int("n_sampled_goal", n_sampled_goal)  # virtual transitions per real one
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device=device,
            n_envs=n_envs,
            optimize_memory_usage=False,
            handle_timeout_termination=handle_timeout_termination,
            n_steps=1,
            gamma=gamma,
            seed=seed,
        )
        self.n_sampled_goal = int(n_sampled_goal)
        self.goal_selection_strategy = _parse_strategy(goal_selection_strategy)
        size, n = self.buffer_size, self.n_envs
        self.copy_info_dict = bool(copy_info_dict)
        # infos[row, env]: the step info of that transition (only with copy_info_dict)
        self.infos: np.ndarray | None = _empty_infos(size, n) if self.copy_info_dict else None
        # Episode bookkeeping: ep_start[row, env] is the row where that transition's episode starts,
        # ep_length[row, env] its length once it has ended (0: not sampled: in progress or forgotten).
        self.ep_start = np.zeros((size, n), dtype=np.int64)
        self.ep_length = np.zeros((size, n), dtype=np.int64)
        self._flat_ep_start = self.ep_start.reshape(-1)
        self._flat_ep_length = self.ep_length.reshape(-1)
        self._valid: np.ndarray | None = None  # cache of _valid_transitions()
        # The episode each environment is in now: its first row and the steps stored so far.
        self._current_ep_start = np.zeros(n, dtype=np.int64)
        self._current_ep_len = np.zeros(n, dtype=np.int64)
        self.env: Any = None
        self._compute_reward: RewardFunction | None = None
        self._owned_env: gym.Env | None = None
        if env is not None:
            self.set_env(env)

    @property
    def her_ratio(self) -> float:
        """Fraction of each minibatch that is virtual: ``1 - 1 / (n_sampled_goal + 1)``."""
        return 1.0 - 1.0 / (self.n_sampled_goal + 1)

    def set_env(self, env: Any) -> None:
        """Use ``env``'s ``compute_reward`` (its first sub-environment's, for a vector env) from now on.

        Off-policy algorithms call this when training starts, with the environment they train on.
        """
        method, owned = _reward_function_of(env)
        if self._owned_env is not None:
            self._owned_env.close()
        self.env, self._compute_reward, self._owned_env = env, method, owned

    # writing --------------------------------------------------------------------------------------------
    def add(
        self,
        obs: Any,
        next_obs: Any,
        action: np.ndarray,
        reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray | Sequence[dict[str, Any]] | None = None,
        infos: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        """Store one vector step (see ``ReplayBuffer.add``) and keep track of each env's episode.

        ``infos``: the per-env info dicts of the step, kept with ``copy_info_dict`` (SB3's call, with infos
        in place of ``truncated``, gives them too).
        """
        pos = self.pos
        if self.full:
            self._forget_episodes_at(pos)
        self.ep_start[pos] = self._current_ep_start
        sb3_infos = isinstance(truncated, (list, tuple)) and all(isinstance(i, dict) for i in truncated)
        if self.infos is not None:
            given = infos if infos is not None else (truncated if sb3_infos else None)
            if given is not None and len(given) != self.n_envs:
                raise ConfigurationError(
                    f"HerReplayBuffer.add got {len(given)} info dicts for n_envs={self.n_envs}: pass one per env."
                )
            for index in range(self.n_envs):
                self.infos[pos, index] = copy.deepcopy(dict(given[index])) if given is not None else {}
        super().add(obs, next_obs, action, reward, terminated, truncated)
        self._current_ep_len += 1
        ended = np.asarray(terminated, dtype=bool).reshape(-1)
        if truncated is not None and not sb3_infos:  # with SB3's infos, done covers both endings
            ended = ended | np.asarray(truncated, dtype=bool)
        for env in np.flatnonzero(ended):
            self._end_episode(int(env))

    def _forget_episodes_at(self, row: int) -> None:
        """Row ``row`` is about to be overwritten: stop sampling the stored episodes it belongs to.

        The oldest row of a stored episode is always overwritten first, so ``row`` is that episode's start.
        """
        for env in np.flatnonzero(self.ep_length[row]):
            length = int(self.ep_length[row, env])
            self.ep_length[(row + np.arange(length)) % self.buffer_size, env] = 0
            self._valid = None

    def _end_episode(self, env: int) -> None:
        """The current episode of ``env`` ended with the newest row: make its transitions sampleable."""
        length = int(self._current_ep_len[env])
        if length <= self.buffer_size:  # a longer episode has overwritten its own beginning: not replayed
            rows = (int(self._current_ep_start[env]) + np.arange(length)) % self.buffer_size
            self.ep_length[rows, env] = length
            self._valid = None
        self._current_ep_start[env] = self.pos
        self._current_ep_len[env] = 0

    def truncate_last_transition(self) -> None:
        """End the episodes in progress as truncated (the envs are about to be reset); they become sampleable."""
        in_progress = np.flatnonzero(self._current_ep_len > 0)
        super().truncate_last_transition()
        for env in in_progress:
            self._end_episode(int(env))

    def truncate_last_trajectory(self) -> None:
        """SB3's name: end the episodes in progress as truncated, warning that they are cut short.

        Called before training resumes on freshly reset environments (``load_replay_buffer(...,
        truncate_last_traj=True)``): the stored episodes in progress will never see their end.
        """
        if (self._current_ep_len > 0).any():
            warnings.warn(
                "The last trajectory in the replay buffer will be truncated: the episodes in progress "
                "end here (as timeouts), and the environments should be reset before training continues.",
                stacklevel=2,
            )
        self.truncate_last_transition()
        self._current_ep_start[:] = self.pos

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles leave the environment out (it holds processes and locks), as SB3's buffer does;
        ``set_env`` gives the copy one again."""
        state = self.__dict__.copy()
        state.update(env=None, _compute_reward=None, _owned_env=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._flat_ep_start = self.ep_start.reshape(-1)  # views again: a copy made them separate arrays
        self._flat_ep_length = self.ep_length.reshape(-1)
        self._valid = None

    def reset(self) -> None:
        super().reset()
        self._valid = None
        self.ep_start[:] = 0
        self.ep_length[:] = 0
        self._current_ep_start[:] = 0
        self._current_ep_len[:] = 0
        if self.infos is not None:
            self.infos = _empty_infos(self.buffer_size, self.n_envs)

    # sampling -------------------------------------------------------------------------------------------
    def sample(self, batch_size: int, env: Any = None) -> ReplaySamples:
        """``batch_size`` transitions of finished episodes: real ones first, then ``her_ratio`` virtual ones
        (normalized by ``env``, a ``VecNormalize``, when given: off-policy algorithms pass their training
        env's, and store original observations and rewards)."""
        rows, envs = self._sample_transitions(batch_size)
        flat = rows * self.n_envs + envs
        assert self.flat_next_observations is not None  # optimize_memory_usage is refused
        observations = {key: array[flat] for key, array in self.flat_observations.items()}
        next_observations = {key: array[flat] for key, array in self.flat_next_observations.items()}
        rewards = self.flat_rewards[flat]
        n_real = batch_size - int(self.her_ratio * batch_size)
        if n_real < batch_size:
            goals = self._sample_goals(rows[n_real:], envs[n_real:], flat[n_real:])
            observations["desired_goal"][n_real:] = goals
            next_observations["desired_goal"][n_real:] = goals
            # r_t depends on s_{t+1}: score the goal the *next* observation achieved against the new goal.
            virtual_infos = self._infos_at(rows[n_real:], envs[n_real:])
            rewards[n_real:] = self._relabelled_rewards(
                next_observations["achieved_goal"][n_real:], goals, virtual_infos
            )
        dones = self.flat_dones[flat]
        if self.handle_timeout_termination:
            dones = dones - self.flat_timeouts[flat]  # timeouts are a subset of dones
        # The buffer holds original values: goals are relabelled and scored on them, then the whole batch,
        # relabelled rewards included, is normalized with env's current statistics (SB3's order).
        return self.samples_type(
            observations=self.observations_to_torch(self.normalize_observations(observations, env)),
            actions=self.to_torch(self.flat_actions[flat]),
            next_observations=self.observations_to_torch(self.normalize_observations(next_observations, env)),
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(self.normalize_rewards(rewards, env).reshape(-1, 1)),
        )

    def _sample_transitions(self, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows and envs of ``batch_size`` transitions drawn uniformly among finished episodes, real ones
        first.

        Drawn as SB3 draws them: ``batch_size`` picks among the valid transitions (flat index order), of
        which the first ``int(her_ratio * batch_size)`` are relabelled; with the buffer's generator on
        numpy's global one (``GlobalNumpyRng``), a seed gives SB3's minibatches.
        """
        if self.size() == 0:
            raise RuntimeError("Cannot sample from an empty replay buffer: add transitions first.")
        valid = self._valid_transitions()
        if valid.size == 0:
            raise ConfigurationError(
                "HerReplayBuffer holds no finished episode to sample from: goals come from finished "
                "episodes, and one longer than the buffer cannot be kept. Set learning_starts above the "
                "environment's longest episode, and buffer_size well above it."
            )
        flat = valid[self.rng.integers(0, valid.size, size=batch_size)]
        n_virtual = int(self.her_ratio * batch_size)
        flat = np.concatenate([flat[n_virtual:], flat[:n_virtual]])  # this batch's layout: real first
        return np.divmod(flat, self.n_envs)

    def _valid_transitions(self) -> np.ndarray:
        """Flat indices (``row * n_envs + env``) of the transitions of finished, kept episodes, ascending.

        Recomputed only after an episode ended or was forgotten, not for every minibatch.
        """
        if self._valid is None:
            self._valid = np.flatnonzero(self._flat_ep_length[: self.size() * self.n_envs])
        return self._valid

    def _sample_goals(self, rows: np.ndarray, envs: np.ndarray, flat: np.ndarray) -> np.ndarray:
        """New desired goals: achieved goals of the same episode, as ``goal_selection_strategy`` says.

        ``flat`` is ``rows * n_envs + envs``: one-axis indexing is the faster read.
        """
        starts = self._flat_ep_start[flat]
        lengths = self._flat_ep_length[flat]
        strategy = self.goal_selection_strategy
        if strategy is GoalSelectionStrategy.FINAL:
            steps = lengths - 1
        elif strategy is GoalSelectionStrategy.FUTURE:
            current = (rows - starts) % self.buffer_size  # this transition's step within its episode
            steps = self.rng.integers(current, lengths)
        else:
            steps = self.rng.integers(0, lengths)
        goal_rows = (starts + steps) % self.buffer_size
        assert self.flat_next_observations is not None
        return self.flat_next_observations["achieved_goal"][goal_rows * self.n_envs + envs]

    def _infos_at(self, rows: np.ndarray, envs: np.ndarray) -> list[dict[str, Any]]:
        """The kept infos of these transitions (empty dicts without ``copy_info_dict``)."""
        if self.infos is None:
            return [{} for _ in range(len(rows))]
        return list(self.infos[rows, envs])

    def _relabelled_rewards(
        self, achieved: np.ndarray, goals: np.ndarray, infos: list[dict[str, Any]]
    ) -> np.ndarray:
        if self._compute_reward is None:
            raise ConfigurationError(
                "HerReplayBuffer has no environment to compute the rewards of relabelled transitions: pass "
                "env= when creating it, call set_env(env), or let an off-policy algorithm train with it."
            )
        rewards = np.asarray(self._compute_reward(achieved, goals, infos), dtype=np.float32)
        if rewards.size != len(goals):
            raise ConfigurationError(
                f"compute_reward returned {rewards.size} reward(s) for a batch of {len(goals)} goals: "
                "HerReplayBuffer needs it vectorised over the leading axis of achieved_goal and desired_goal."
            )
        return rewards.reshape(len(goals))

    # persistence ----------------------------------------------------------------------------------------
    def storage_header(self) -> dict[str, Any]:
        header = super().storage_header()
        header["her"] = {
            "n_sampled_goal": self.n_sampled_goal,
            "goal_selection_strategy": self.goal_selection_strategy.key,
            "current_ep_start": self._current_ep_start.tolist(),
            "current_ep_len": self._current_ep_len.tolist(),
            "copy_info_dict": self.copy_info_dict,
        }
        if self.infos is not None:
            rows = self.size()
            header["her"]["infos"] = [
                [_jsonable(self.infos[row, env], "infos") for env in range(self.n_envs)]
                for row in range(rows)
            ]
        return header

    def storage_arrays(self) -> dict[str, np.ndarray]:
        arrays = super().storage_arrays()
        rows = self.size()
        arrays["ep_start"] = self.ep_start[:rows]
        arrays["ep_length"] = self.ep_length[:rows]
        return arrays

    def storage_targets(self) -> dict[str, np.ndarray]:
        return {**super().storage_targets(), "ep_start": self.ep_start, "ep_length": self.ep_length}

    def restore_storage(self, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        her = header.get("her")
        if her is None:
            raise ConfigurationError(
                f"This replay buffer was saved by {header.get('class', 'another buffer class')}, without "
                "HER's episode bookkeeping, so HerReplayBuffer cannot restore it. Load it with the class "
                "that saved it, or start the HER buffer empty."
            )
        super().restore_storage(header, arrays)  # resets the bookkeeping too
        self.n_sampled_goal = int(her["n_sampled_goal"])
        self.goal_selection_strategy = _parse_strategy(her["goal_selection_strategy"])
        rows = len(arrays["ep_start"])
        self.ep_start[:rows] = arrays["ep_start"]
        self.ep_length[:rows] = arrays["ep_length"]
        self._valid = None
        self._current_ep_start[:] = her["current_ep_start"]
        self._current_ep_len[:] = her["current_ep_len"]
        self.copy_info_dict = bool(her.get("copy_info_dict", False))
        self.infos = _empty_infos(self.buffer_size, self.n_envs) if self.copy_info_dict else None
        if self.infos is not None:
            saved = her.get("infos", [])
            if len(saved) > self.buffer_size or any(len(row) != self.n_envs for row in saved):
                raise ConfigurationError(
                    "The saved HER infos do not match the buffer's rows and n_envs; the file is damaged."
                )
            for row, entries in enumerate(saved):
                for env, info in enumerate(entries):
                    self.infos[row, env] = dict(info)

    def __repr__(self) -> str:
        return (
            f"HerReplayBuffer(size={len(self)}/{self.buffer_size * self.n_envs}, n_envs={self.n_envs}, "
            f"n_sampled_goal={self.n_sampled_goal}, goal_selection_strategy={self.goal_selection_strategy.key!r})"
        )


def _empty_infos(rows: int, n_envs: int) -> np.ndarray:
    infos = np.empty((rows, n_envs), dtype=object)
    for index in np.ndindex(infos.shape):
        infos[index] = {}
    return infos


def _jsonable(value: Any, where: str) -> Any:
    """``value`` as JSON can hold it (numpy to lists and numbers), or an error naming where it sits."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): _jsonable(item, f"{where}[{key!r}]") for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ConfigurationError(
        f"HerReplayBuffer cannot save the kept step info {where} of type {type(value).__name__}: replay "
        "buffer files hold JSON, not pickle. Keep infos to numbers, strings, arrays, lists and dicts, or "
        "create the buffer with copy_info_dict=False."
    )


def _check_goal_space(space: spaces.Space) -> None:
    if not isinstance(space, spaces.Dict):
        raise ConfigurationError(
            f"HerReplayBuffer needs Dict observations with 'achieved_goal' and 'desired_goal' keys, got "
            f"{describe_space(space)}. HER is for goal-conditioned environments."
        )
    missing = [key for key in ("achieved_goal", "desired_goal") if key not in space.spaces]
    if missing:
        raise ConfigurationError(
            f"HerReplayBuffer needs the observation keys 'achieved_goal' and 'desired_goal'; "
            f"{describe_space(space)} lacks {', '.join(repr(k) for k in missing)}."
        )
    achieved, desired = space["achieved_goal"], space["desired_goal"]
    if achieved.shape != desired.shape:
        raise ConfigurationError(
            f"HerReplayBuffer replaces desired goals with achieved ones, so they need the same shape; got "
            f"achieved_goal {describe_space(achieved)} and desired_goal {describe_space(desired)}."
        )
