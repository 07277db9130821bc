"""envpool as a vectorization backend: its C++ env pool behind gymnasium's SAME_STEP vector API.

``RLEnvDataModule(vectorization="envpool")`` builds the training env here. envpool resets an env on the
*next* step after its episode ended (that step ignores its action and returns the first observation).
To keep the semantics of the gymnasium path, the step that ends an episode is followed at once by that
reset step for the finished envs only (envpool steps a subset of envs by id), so the caller gets the next
episode's first observation, and the true final observation in ``info["final_obs"]``: truncated episodes
bootstrap from it exactly as with ``SyncVectorEnv``.

Atari games need ``atari=True`` (envpool always preprocesses them, in C++): ``AtariWrapper``'s options map
onto envpool's (no-op reset, frame skip with max-pooling, episodic life, FIRE on reset, 84×84 grayscale,
reward clipping, frame stack). Whole games are recorded from envpool's ``info["reward"]`` (unclipped) and
``info["terminated"]`` (game over) and reported as ``info["final_info"]["episode"]``, as the gymnasium
path's recorder does; their lengths are agent steps × ``frame_skip`` (frames, without the reset no-ops).

``RLEnvDataModule(step_timeout=)`` does not wrap this env: envpool's simulators are its own C++ code, run
in its own threads (no user Python that could hang, no worker process that could die unseen); the
gymnasium evaluation envs beside it keep the timeout.

This module imports envpool only when an env is built (the ``envpool`` extra).
"""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_positive_int

__all__ = ["EnvpoolVectorEnv", "envpool_task"]

_INSTALL_HINT = "pip install 'lit-sb3-core[envpool]'"


def _envpool() -> Any:
    try:
        import envpool
    except ImportError as exc:
        raise ConfigurationError(
            f"vectorization='envpool' needs envpool, which is not installed: {_INSTALL_HINT}, or use "
            "vectorization='sync' or 'async'."
        ) from exc
    return envpool


def _atari_game(env_id: str) -> tuple[str, float] | None:
    """``("Pong", sticky probability)`` for ``ALE/Pong-v5`` (0.25) and ``PongNoFrameskip-v4`` (0.0)."""
    if env_id.startswith("ALE/") and env_id.endswith("-v5"):
        return env_id[len("ALE/") : -len("-v5")], 0.25
    if env_id.endswith("NoFrameskip-v4"):
        return env_id[: -len("NoFrameskip-v4")], 0.0
    return None


def envpool_task(env_id: str, atari: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """envpool's task id and config for a gymnasium id (and ``RLEnvDataModule``'s Atari options).

    Raises:
        ConfigurationError: envpool has no such env, or an Atari id without ``atari=True``.
    """
    envpool = _envpool()
    known = set(envpool.list_all_envs())
    game = _atari_game(env_id)
    if game is not None:
        task = f"{game[0]}-v5"
        if task not in known:
            raise ConfigurationError(f"envpool has no Atari game {game[0]!r} ({env_id!r}).")
        if atari is None:
            raise ConfigurationError(
                f"envpool always preprocesses Atari games: train {env_id!r} with RLEnvDataModule(atari=True) "
                "(or a dict of AtariWrapper options), or use vectorization='sync'."
            )
        check_positive_int(
            "atari['frame_stack']", atari["frame_stack"], hint="envpool stacks at least one frame (1: none)."
        )
        config = {
            "noop_max": atari["noop_max"],
            "frame_skip": atari["frame_skip"],
            "img_height": atari["screen_size"],
            "img_width": atari["screen_size"],
            "episodic_life": atari["terminal_on_life_loss"],
            "reward_clip": atari["clip_reward"],
            "repeat_action_probability": atari["action_repeat_probability"] or game[1],
            "stack_num": atari["frame_stack"],
            "use_fire_reset": True,
            "gray_scale": True,
            "max_episode_steps": 108_000 // atari["frame_skip"],  # ale-py's 108k-frame limit
        }
        return task, config
    if atari is not None:
        raise ConfigurationError(
            f"atari=True needs an Atari id ('PongNoFrameskip-v4', 'ALE/Pong-v5'), got {env_id!r}."
        )
    if env_id not in known:
        close = difflib.get_close_matches(env_id, sorted(known), n=3)
        hint = f" Close matches: {', '.join(map(repr, close))}." if close else ""
        raise ConfigurationError(
            f"envpool has no environment {env_id!r}.{hint} Its ids are listed by envpool.list_all_envs(); "
            "train this env with vectorization='sync' or 'async'."
        )
    return env_id, {}


class EnvpoolVectorEnv(VectorEnv):
    """An envpool pool of ``num_envs`` copies of ``env_id`` with gymnasium's SAME_STEP autoreset.

    Env ``i`` is seeded ``seed + i`` (envpool's rule, which is also the datamodule's per-env rule).
    ``reset(seed=s)`` with a new seed rebuilds the pool, as envpool fixes seeds at creation.

    Args:
        env_id: a gymnasium id envpool has (``"CartPole-v1"``, ``"HalfCheetah-v5"``, ``"PongNoFrameskip-v4"``).
        num_envs: envs in the pool.
        seed: base seed.
        atari: ``RLEnvDataModule``'s parsed Atari options, for Atari ids.
        env_kwargs: extra envpool config keys (``{"max_episode_steps": 200}``).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        seed: int = 0,
        atari: dict[str, Any] | None = None,
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.env_id = env_id
        self.task, config = envpool_task(env_id, atari)
        self.config = {**config, **dict(env_kwargs or {})}
        self.num_envs = int(num_envs)
        self.inner_episode_statistics = atari is not None
        self._frame_skip = int(atari["frame_skip"]) if atari is not None else 1
        self._seed = int(seed)
        self._pool = self._make_pool(self._seed)
        self.single_observation_space = self._pool.observation_space
        self.single_action_space = self._pool.action_space
        self._pool_action_dtype = self.single_action_space.dtype
        if isinstance(self.single_action_space, spaces.Box) and self.single_action_space.dtype == np.float64:
            # gymnasium's MuJoCo envs take float32 actions: the same space as the gymnasium path builds
            low, high = self.single_action_space.low, self.single_action_space.high
            self.single_action_space = spaces.Box(
                low.astype(np.float32), high.astype(np.float32), dtype=np.float32
            )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._reset_actions = np.zeros(
            (self.num_envs, *(self.single_action_space.shape or ())), self._pool_action_dtype
        )
        self._game_returns = np.zeros(self.num_envs)
        self._game_lengths = np.zeros(self.num_envs, dtype=np.int64)

    def _make_pool(self, seed: int) -> Any:
        envpool = _envpool()
        try:
            return envpool.make_gymnasium(self.task, num_envs=self.num_envs, seed=seed, **self.config)
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigurationError(
                f"envpool could not build {self.task!r} with {self.config}: {exc}. env_kwargs are envpool's "
                f"config keys here: {sorted(envpool.make_spec(self.task).config._fields)}."
            ) from exc

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if isinstance(seed, list):
            seed = seed[0]
        if seed is not None and int(seed) != self._seed:
            self._pool.close()
            self._seed = int(seed)
            self._pool = self._make_pool(self._seed)
        observations, info = self._pool.reset()
        self._game_returns[:] = 0.0
        self._game_lengths[:] = 0
        return self._in_order(observations, info.get("env_id")), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        observations, rewards, terminated, truncated, info = self._pool.step(
            np.asarray(actions, dtype=self._pool_action_dtype)
        )
        order = info["env_id"]
        observations = self._in_order(observations, order)
        rewards = self._in_order(rewards, order).astype(np.float64)
        terminated = self._in_order(terminated, order).astype(bool)
        truncated = self._in_order(truncated, order).astype(bool)
        infos: dict[str, Any] = {}
        game_over = None
        if self.inner_episode_statistics:
            self._game_returns += self._in_order(info["reward"], order)
            self._game_lengths += self._frame_skip
            game_over = self._in_order(info["terminated"], order).astype(bool) | truncated
        done = terminated | truncated
        if done.any():
            ids = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in ids:
                final_obs[i] = observations[i].copy()
            # envpool's reset step for the finished envs: their action is ignored.
            first_obs, *_, reset_info = self._pool.step(self._reset_actions[ids], ids.astype(np.int32))
            observations = observations.copy()
            observations[reset_info["env_id"]] = first_obs
            infos.update({"final_obs": final_obs, "_final_obs": done, "final_info": {}, "_final_info": done})
            if game_over is not None and (done & game_over).any():
                ended = done & game_over
                infos["final_info"] = {
                    "episode": {
                        "r": np.where(ended, self._game_returns, 0.0),
                        "l": np.where(ended, self._game_lengths, 0),
                        "t": np.zeros(self.num_envs),
                    },
                    "_episode": ended,
                }
                self._game_returns[ended] = 0.0
                self._game_lengths[ended] = 0
        return observations, rewards, terminated, truncated, infos

    def _in_order(self, values: np.ndarray, order: np.ndarray | None) -> np.ndarray:
        """envpool answers in completion order; sync pools keep env order, which is checked, not assumed."""
        if order is None or np.array_equal(order, np.arange(self.num_envs)):
            return values
        ordered = np.empty_like(values)
        ordered[order] = values
        return ordered

    def close_extras(self, **kwargs: Any) -> None:
        self._pool.close()

    def __repr__(self) -> str:
        return f"EnvpoolVectorEnv({self.env_id!r}, num_envs={self.num_envs}, task={self.task!r})"
