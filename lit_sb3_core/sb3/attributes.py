"""Attributes SB3 code reads on a model, as views over what lit-sb3 keeps elsewhere.

``learning_rate``, ``policy_kwargs`` and ``tensorboard_log`` are the constructor's values (kept in
``hparams`` as plain JSON); ``ep_info_buffer`` is the recent training episodes (the training env's episode
statistics) as SB3's deque of ``{"r", "l", "t"}`` dicts; ``ep_success_buffer`` the ``is_success`` of the
recent episodes; ``get_vec_normalize_env()`` the ``VecNormalize`` wrapper of the training env, if any.

SB3's algorithms also name their networks on the model (``model.actor``, ``model.critic``,
``model.critic_target``, TD3's ``model.actor_target``, DQN's ``model.q_net``/``q_net_target``, QR-DQN's
``quantile_net``/``quantile_net_target``): here they are the policy's modules of those names, looked up on each
access, so they can never go stale after ``set_parameters`` or ``load``. A model whose policy has no such module
raises ``AttributeError`` as SB3's does.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

__all__ = ["SB3Attributes"]


def _policy_module(name: str) -> property:
    """SB3's ``model.<name>``: the policy's ``<name>`` (``AttributeError`` when it has none)."""

    def get(self: Any) -> Any:
        policy = self.__dict__.get("_modules", {}).get("policy")
        if policy is None or not hasattr(policy, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(policy, name)

    get.__doc__ = f"The policy's ``{name}`` (SB3's ``model.{name}``)."
    return property(get)


class SB3Attributes:
    """SB3's model attributes (a base of ``RLAlgorithm``)."""

    _success_window: deque[bool] | None = None

    actor = _policy_module("actor")
    actor_target = _policy_module("actor_target")
    critic = _policy_module("critic")
    critic_target = _policy_module("critic_target")
    q_net = _policy_module("q_net")
    q_net_target = _policy_module("q_net_target")
    quantile_net = _policy_module("quantile_net")
    quantile_net_target = _policy_module("quantile_net_target")

    @property
    def device(self) -> Any:
        """The device the model computes on (Lightning's, which moves with the module)."""
        device = self.__dict__.get("_device")
        if device is None or device.type == "cpu" or device.index is not None:
            return device
        import torch

        return torch.device(f"cuda:{torch.cuda.current_device()}") if torch.cuda.is_available() else device

    @device.setter
    def device(self, value: Any) -> None:
        """SB3 code assigns ``model.device``: it names where new buffers go (``load_replay_buffer``); the
        weights move only with ``model.to(device)``, as in SB3."""
        import torch

        self.__dict__["_device"] = torch.device(value)

    @property
    def _last_obs(self) -> Any:
        """SB3's name for the training envs' current observations (``last_obs``)."""
        return self.last_obs  # type: ignore[attr-defined]

    @property
    def learning_rate(self) -> Any:
        """The learning rate (a number, ``"lin_<start>"`` or a schedule) the model was built with."""
        from lit_sb3_core.foundation.schedules import is_saved_schedule

        value = self.hparams.get("learning_rate")  # type: ignore[attr-defined]
        if is_saved_schedule(value):  # a callable, kept in hparams as JSON: the callable itself
            return getattr(self.lr_schedule, "value_schedule", self.lr_schedule)
        return value

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        from lit_sb3_core.foundation.schedules import Schedule, make_schedule

        self.lr_schedule: Schedule = make_schedule(value, "learning_rate")
        self.hparams["learning_rate"] = value  # type: ignore[attr-defined]

    @property
    def stats_window_size(self) -> int:
        """Episodes that ``rollout/ep_rew_mean``, ``ep_info_buffer`` and ``ep_success_buffer`` cover (SB3's)."""
        from lit_sb3_core.foundation.checks import check_positive_int

        return check_positive_int("stats_window_size", self.hparams.get("stats_window_size", 100))  # type: ignore[attr-defined]

    @property
    def policy_kwargs(self) -> dict[str, Any]:
        """The policy's keyword arguments (classes as the import strings they are stored as)."""
        return dict(self.hparams.get("policy_kwargs") or {})  # type: ignore[attr-defined]

    @property
    def tensorboard_log(self) -> str | None:
        return self.hparams.get("tensorboard_log")  # type: ignore[attr-defined]

    @property
    def ep_info_buffer(self) -> deque[dict[str, float]]:
        """The recent training episodes, newest last: ``{"r": return, "l": length, "t": seconds}``."""
        from lit_sb3_core.envs.episodes import EpisodeStatistics

        return EpisodeStatistics(getattr(self, "vector_env", None), self.stats_window_size).infos()

    @property
    def ep_success_buffer(self) -> deque[bool]:
        """``is_success`` of the recent training episodes whose final info had one."""
        if self._success_window is None:
            object.__setattr__(self, "_success_window", deque(maxlen=self.stats_window_size))
        return self._success_window  # type: ignore[return-value]

    def _clear_success_window(self) -> None:
        """Forget the recent ``is_success`` values (a new run, ``learn(reset_num_timesteps=True)``, as SB3)."""
        object.__setattr__(self, "_success_window", None)

    def _record_episode_ends(self, infos: dict[str, Any]) -> None:
        """Collect ``is_success`` from the final infos of episodes that just ended (the loops call it when
        ``"final_info" in infos``, which gymnasium sets only on such steps)."""
        final = infos.get("final_info")
        if not isinstance(final, dict) or "is_success" not in final:
            return
        mask = final.get("_is_success", np.ones(len(final["is_success"]), dtype=bool))
        window = self.ep_success_buffer
        for index in np.flatnonzero(mask):
            window.append(bool(final["is_success"][index]))

    def get_vec_normalize_env(self) -> Any:
        """The ``VecNormalize`` wrapper of the training env (``None`` without one)."""
        from gymnasium.vector import VectorEnv

        from lit_sb3_core.sb3.vec_env_views import as_sb3_vec_env, find_vec_wrapper

        env = self.get_env()  # type: ignore[attr-defined]
        if isinstance(env, VectorEnv):
            env = as_sb3_vec_env(env)  # the user's VecEnv when the training env was built from one
        return find_vec_wrapper(env, "VecNormalize") if env is not None else None

    @property
    def _vec_normalize_env(self) -> Any:
        """SB3's attribute: ``get_vec_normalize_env()``, which SB3 code passes to ``replay_buffer.sample(...,
        env=...)`` (the buffer holds original values, normalized when sampled)."""
        return self.get_vec_normalize_env()
