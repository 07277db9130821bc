"""How each library is called: build a model for a case, train it, predict with it.

``Sb3Run``, ``SbxRun`` and ``LitRun`` have the same surface (``learn``, ``num_timesteps``, ``predict``), so the
worker treats them alike. Each imports its own library only when constructed, so a run's process holds
one library. A case's hyperparameters are written in lit-sb3's plain-JSON notation; ``sb3_hyperparams``
turns the parts SB3 takes as objects into those objects.
"""

from __future__ import annotations

import copy
import functools
import importlib
from typing import Any

import gymnasium as gym
import numpy as np

from suite.cases import Case
from suite.measure import eval_seed, make_env

__all__ = [
    "LIBRARIES",
    "SBX_DEFAULTS_OF_SB3",
    "LitRun",
    "Sb3Run",
    "SbxRun",
    "sb3_action_noise",
    "sb3_hyperparams",
    "sbx_hyperparams",
]

# Where SBX's defaults differ from SB3's / sb3-contrib's, SB3's value, so that the three libraries train the
# same networks with the same settings when a case leaves the setting at its default. The rest of SBX's
# defaults (learning rates, batch sizes, buffer, tau, train_freq, gradient_steps, policy_delay, exploration,
# TQC's quantiles, CrossQ's batch-renorm momentum 0.99 = sb3-contrib's 0.01 in Flax's convention) are SB3's.
SBX_DEFAULTS_OF_SB3: dict[str, dict[str, Any]] = {
    "td3": {"net_arch": [400, 300]},  # SBX: [256, 256]
    "ddpg": {"net_arch": [400, 300]},  # SBX: [256, 256]
    "dqn": {"net_arch": [64, 64]},  # SBX: 256 units
    "ppo": {"ortho_init": True},  # SBX: False
}


def sb3_action_noise(spec: dict[str, Any], action_dim: int) -> Any:
    """An action-noise spec (``{"type": "normal", "sigma": 0.1}``) as an SB3 noise object."""
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise

    kind = str(spec.get("type", "")).lower().replace("-", "_")
    mean = np.full(action_dim, spec.get("mean", 0.0), dtype=np.float64)
    sigma = np.full(action_dim, spec["sigma"], dtype=np.float64)
    if kind in ("normal", "gaussian"):
        return NormalActionNoise(mean=mean, sigma=sigma)
    if kind in ("ornstein_uhlenbeck", "ou"):
        return OrnsteinUhlenbeckActionNoise(
            mean=mean, sigma=sigma, theta=spec.get("theta", 0.15), dt=spec.get("dt", 1e-2)
        )
    raise ValueError(f"Unknown action noise type {spec.get('type')!r}: use 'normal' or 'ornstein_uhlenbeck'.")


def sb3_hyperparams(hyperparams: dict[str, Any], action_space: Any) -> dict[str, Any]:
    """SB3's form of a case's hyperparameters: ``"lin_x"`` becomes a linear schedule from ``x`` to 0
    (rl-zoo3's meaning), an action-noise spec becomes a noise object, an ``activation_fn`` name in
    ``policy_kwargs`` the ``torch.nn`` class; everything else is copied."""
    from stable_baselines3.common.utils import LinearSchedule
    from torch import nn

    out = copy.deepcopy(hyperparams)
    for key, value in out.items():
        if isinstance(value, str) and value.startswith("lin_"):
            out[key] = LinearSchedule(float(value[len("lin_") :]), 0.0, 1.0)
        elif key == "action_noise" and isinstance(value, dict):
            out[key] = sb3_action_noise(value, int(np.prod(action_space.shape)))
    activation = out.get("policy_kwargs", {}).get("activation_fn")
    if isinstance(activation, str):
        classes = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU}
        out["policy_kwargs"]["activation_fn"] = classes[activation.lower()]
    if out.get("policy_kwargs", {}).get("optimizer_class") == "rmsprop_tf_like":
        from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike

        out["policy_kwargs"]["optimizer_class"] = RMSpropTFLike
    return out


class Sb3Run:
    """A case in Stable-Baselines3 / sb3-contrib: ``make_vec_env`` (DummyVecEnv) over the case's envs,
    ``VecNormalize`` for observation normalization."""

    def __init__(self, case: Case, seed: int) -> None:
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import VecNormalize

        module, name = case.sb3.split(":")
        algorithm = getattr(importlib.import_module(module), name)
        factory = functools.partial(make_env, case, record=True)
        self.case, self.seed = case, seed
        if case.atari:  # SB3's make_atari_env: Monitor on the game, then AtariWrapper; VecFrameStack(4)
            env = _sb3_atari_env(factory, case.n_envs, seed)
        else:
            env = make_vec_env(factory, n_envs=case.n_envs, seed=seed)
        self.normalizer: VecNormalize | None = None
        if case.normalize_obs:
            gamma = float(case.hyperparams.get("gamma", 0.99))
            env = self.normalizer = VecNormalize(
                env, norm_obs=True, norm_reward=case.normalize_reward, gamma=gamma
            )
        kwargs = sb3_hyperparams(case.hyperparams, env.action_space)
        self.model = algorithm(policy=case.policy, env=env, seed=seed, device="cpu", **kwargs)

    def learn(self, steps: int) -> None:
        self.model.learn(total_timesteps=steps)

    @property
    def num_timesteps(self) -> int:
        return int(self.model.num_timesteps)

    def evaluate_games(self, n_games: int, deterministic: bool = True) -> list[float]:
        """Atari: whole games with unclipped scores, on SB3's own Atari stack (Monitor's episodes), with the
        policy's mode (``deterministic``) or sampled actions."""
        from stable_baselines3.common.evaluation import evaluate_policy

        env = _sb3_atari_env(functools.partial(make_env, self.case), 1, eval_seed(self.seed))
        rewards, _ = evaluate_policy(
            self.model, env, n_eval_episodes=n_games, deterministic=deterministic, return_episode_rewards=True
        )
        env.close()
        return [float(r) for r in rewards]

    def predict(self, observation: Any, **kwargs: Any) -> tuple[Any, Any]:
        # SB3 normalizes inside VecNormalize, not in predict: apply the (frozen) training statistics here.
        if self.normalizer is not None:
            observation = self.normalizer.normalize_obs(observation)
        return self.model.predict(observation, **kwargs)


def sbx_hyperparams(case: Case, action_space: Any) -> dict[str, Any]:
    """SBX's form of a case's hyperparameters: SB3's objects (``sb3_hyperparams``), SB3's defaults where
    SBX's differ (``SBX_DEFAULTS_OF_SB3``), and the two policy settings SBX spells differently: DQN's
    ``net_arch`` is one width for both hidden layers (``[64, 64]`` -> ``[64]``), activations are JAX
    functions."""
    out = sb3_hyperparams({k: v for k, v in case.hyperparams.items() if k != "policy_kwargs"}, action_space)
    policy_kwargs = dict(SBX_DEFAULTS_OF_SB3.get(case.algo, {}))
    policy_kwargs.update(copy.deepcopy(case.hyperparams.get("policy_kwargs", {})))
    if case.algo == "dqn":
        widths = list(policy_kwargs.get("net_arch", []))
        if len(widths) != 2 or widths[0] != widths[1]:
            raise ValueError(f"SBX's DQN has two hidden layers of one width; {case.name} asks for {widths}.")
        policy_kwargs["net_arch"] = widths[:1]
    activation = policy_kwargs.get("activation_fn")
    if isinstance(activation, str):
        import flax.linen as nn

        policy_kwargs["activation_fn"] = {"relu": nn.relu, "tanh": nn.tanh, "elu": nn.elu}[activation.lower()]
    if case.hyperparams.get("target_update_interval", 1) != 1 and case.algo in ("sac", "tqc"):
        raise ValueError(
            f"SBX's {case.algo.upper()} updates its targets every step; {case.name} asks otherwise."
        )
    if policy_kwargs:
        out["policy_kwargs"] = policy_kwargs
    return out


class SbxRun(Sb3Run):
    """A case in SBX (SB3 in JAX, ``sbx-rl``): SB3's envs, buffers and loop, JAX/Flax networks and updates
    compiled with ``jax.jit`` (compilation happens during the first updates, inside ``learn``)."""

    def __init__(self, case: Case, seed: int) -> None:
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import VecNormalize

        if case.sbx is None:
            raise ValueError(f"SBX has no counterpart of {case.name} ({case.algo}, {case.policy}).")
        module, name = case.sbx.split(":")
        algorithm = getattr(importlib.import_module(module), name)
        factory = functools.partial(make_env, case, record=True)
        self.case, self.seed = case, seed
        env = make_vec_env(factory, n_envs=case.n_envs, seed=seed)
        self.normalizer: VecNormalize | None = None
        if case.normalize_obs:
            gamma = float(case.hyperparams.get("gamma", 0.99))
            env = self.normalizer = VecNormalize(
                env, norm_obs=True, norm_reward=case.normalize_reward, gamma=gamma
            )
        kwargs = sbx_hyperparams(case, env.action_space)
        self.model = algorithm(policy=case.policy, env=env, seed=seed, **kwargs)


class LitRun:
    """A case in lit-sb3: the algorithm from the registry, an ``RLEnvDataModule`` over the case's envs.

    lit-sb3 builds its envs (and its networks, once it has seen the spaces) inside ``learn``; SB3 does
    both before. Both are milliseconds for these envs, well inside the noise of the timing.
    """

    def __init__(self, case: Case, seed: int) -> None:
        import lit_sb3

        algorithm = lit_sb3.get_algo_class(case.algo)
        self.datamodule = lit_sb3.RLEnvDataModule(
            train_env=functools.partial(make_env, case, record=True),
            n_envs=case.n_envs,
            seed=seed,
            normalize=(True if case.normalize_reward else "observation") if case.normalize_obs else False,
            atari=case.atari,
        )
        self.case, self.seed = case, seed
        kwargs = {**copy.deepcopy(case.hyperparams), **copy.deepcopy(case.lit_hyperparams)}
        self.model = algorithm(policy=case.policy, seed=seed, device="cpu", **kwargs)
        self.trainer_kwargs = dict(case.lit_trainer)

    def learn(self, steps: int) -> None:
        if not self.trainer_kwargs:
            self.model.learn(total_timesteps=steps, env=self.datamodule)
            return
        import lit_sb3

        trainer = lit_sb3.RLTrainer(
            max_steps=steps,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            **self.trainer_kwargs,
        )
        trainer.fit(self.model, datamodule=self.datamodule)

    @property
    def num_timesteps(self) -> int:
        return int(self.model.num_timesteps)

    def evaluate_games(self, n_games: int, deterministic: bool = True) -> list[float]:
        """Atari: whole games with unclipped scores, on lit-sb3's own Atari stack (the inner recorder's),
        with the policy's mode (``deterministic``) or sampled actions."""
        import lit_sb3

        datamodule = lit_sb3.RLEnvDataModule(
            test_env=functools.partial(make_env, self.case), seed=eval_seed(self.seed), atari=True
        )
        env = _SeededFirstReset(datamodule.get_env("test"), eval_seed(self.seed))
        rewards, _ = lit_sb3.evaluate_policy(
            self.model, env, n_eval_episodes=n_games, deterministic=deterministic, return_episode_rewards=True
        )
        datamodule.close()
        return [float(r) for r in rewards]

    def predict(self, observation: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self.model.predict(observation, **kwargs)  # applies its own normalization statistics


class _SeededFirstReset(gym.vector.VectorWrapper):
    """Seeds the first reset, which ``evaluate_policy`` makes unseeded, as SB3's ``VecEnv.seed`` does: the
    first game starts from the seed's no-op draw in both libraries, so their evaluations play the same games
    with the same weights (a seeded reset before ``evaluate_policy`` is followed by its own, which starts the
    first game from the next draw)."""

    def __init__(self, env: Any, seed: int) -> None:
        super().__init__(env)
        self.first_seed: int | None = seed

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        seed, self.first_seed = (self.first_seed if seed is None else seed), None
        return self.env.reset(seed=seed, options=options)


def _sb3_atari_env(factory: Any, n_envs: int, seed: int) -> Any:
    from stable_baselines3.common.atari_wrappers import AtariWrapper
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecFrameStack

    return VecFrameStack(
        make_vec_env(factory, n_envs=n_envs, seed=seed, wrapper_class=AtariWrapper), n_stack=4
    )


LIBRARIES: dict[str, type[Sb3Run | LitRun]] = {"sb3": Sb3Run, "sbx": SbxRun, "lit": LitRun}
