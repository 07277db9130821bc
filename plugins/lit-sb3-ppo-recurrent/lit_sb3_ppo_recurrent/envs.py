"""Partially observed classic-control tasks: the velocities are removed from the observation.

Without velocities a memoryless policy cannot tell which way the pole (or the car) is moving; a recurrent
policy can infer it from successive observations. These are the standard benchmarks for recurrent PPO
(rl-zoo3's ``CartPoleNoVel-v1``, ``PendulumNoVel-v1``, ...).

Importing this module registers ``CartPoleNoVel-v1``, ``PendulumNoVel-v1``, ``MountainCarNoVel-v0`` and
``MountainCarContinuousNoVel-v0`` with gymnasium (ids already registered, e.g. by rl-zoo3, are left alone).
``lit_sb3_ppo_recurrent`` imports it with ``RecurrentPPO``; ``gymnasium.make(
"lit_sb3_ppo_recurrent.envs:CartPoleNoVel-v1")`` works in any process. rl-zoo3 zeroes the velocities
instead of removing them: the same information, so its tuned hyperparameters apply to both.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import WrapperSpec

from lit_sb3_core.errors import ConfigurationError

__all__ = ["NO_VELOCITY_IDS", "VELOCITY_INDICES", "MaskVelocityWrapper"]

# Observation entries that are velocities, per env id.
VELOCITY_INDICES: dict[str, tuple[int, ...]] = {
    "CartPole-v1": (1, 3),  # [x, x_dot, theta, theta_dot] -> [x, theta]
    "Pendulum-v1": (2,),  # [cos, sin, theta_dot] -> [cos, sin]
    "MountainCar-v0": (1,),  # [position, velocity] -> [position]
    "MountainCarContinuous-v0": (1,),
}


def _no_velocity_id(env_id: str) -> str:
    name, version = env_id.rsplit("-v", 1)
    return f"{name}NoVel-v{version}"


# "CartPoleNoVel-v1" -> "CartPole-v1", ...
NO_VELOCITY_IDS: dict[str, str] = {_no_velocity_id(env_id): env_id for env_id in VELOCITY_INDICES}


class MaskVelocityWrapper(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Drop the velocity entries of a Box observation (CartPole: ``[x, theta]``).

    Args:
        env: the environment to wrap.
        velocity_indices: entries to drop; by default those of ``VELOCITY_INDICES[env.spec.id]``.
    """

    def __init__(self, env: gym.Env, velocity_indices: Sequence[int] | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, velocity_indices=velocity_indices)
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        if not (isinstance(space, spaces.Box) and len(space.shape) == 1):
            raise ConfigurationError(f"MaskVelocityWrapper needs a 1-D Box observation space, got {space}.")
        if velocity_indices is None:
            env_id = env.spec.id if env.spec is not None else None
            if env_id not in VELOCITY_INDICES:
                raise ConfigurationError(
                    f"MaskVelocityWrapper does not know the velocity entries of {env_id!r}: pass "
                    f"velocity_indices=..., or use one of {sorted(VELOCITY_INDICES)}."
                )
            velocity_indices = VELOCITY_INDICES[env_id]
        size = space.shape[0]
        bad = [i for i in velocity_indices if not 0 <= i < size]
        if bad:
            raise ConfigurationError(
                f"velocity_indices {bad} are out of range for an observation of size {size}."
            )
        self._keep = np.array([i for i in range(size) if i not in set(velocity_indices)], dtype=np.intp)
        self.observation_space = spaces.Box(space.low[self._keep], space.high[self._keep], dtype=space.dtype)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation[self._keep]


def _register() -> None:
    """Each ``<Name>NoVel-v<N>`` is ``<Name>-v<N>`` (same entry point, time limit and kwargs) plus the wrapper."""
    for no_velocity_id, env_id in NO_VELOCITY_IDS.items():
        if no_velocity_id in gym.registry:
            continue
        base = gym.spec(env_id)
        mask = WrapperSpec(
            "MaskVelocityWrapper",
            f"{__name__}:MaskVelocityWrapper",
            {"velocity_indices": VELOCITY_INDICES[env_id]},
        )
        gym.register(
            no_velocity_id,
            entry_point=base.entry_point,
            reward_threshold=base.reward_threshold,
            max_episode_steps=base.max_episode_steps,
            additional_wrappers=(mask,),
            kwargs=dict(base.kwargs),
        )


_register()
