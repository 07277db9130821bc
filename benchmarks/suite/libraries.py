"""How each library is called: build a model for a case, train it, predict with it.

``Sb3Run`` and ``LitRun`` have the same surface (``learn``, ``num_timesteps``, ``predict``), so the
worker treats them alike. Each imports its own library only when constructed, so a run's process holds
one library. A case's hyperparameters are written in lit-sb3's plain-JSON notation; ``sb3_hyperparams``
turns the parts SB3 takes as objects into those objects.
"""

from __future__ import annotations

import copy
import functools
import importlib
from typing import Any

import numpy as np

from suite.cases import Case
from suite.measure import eval_seed, make_env

__all__ = ["LIBRARIES", "LitRun", "Sb3Run", "sb3_action_noise", "sb3_hyperparams"]


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

    def evaluate_games(self, n_games: int) -> list[float]:
        """Atari: whole games with unclipped scores, on SB3's own Atari stack (Monitor's episodes)."""
        from stable_baselines3.common.evaluation import evaluate_policy

        env = _sb3_atari_env(functools.partial(make_env, self.case), 1, eval_seed(self.seed))
        rewards, _ = evaluate_policy(self.model, env, n_eval_episodes=n_games, return_episode_rewards=True)
        env.close()
        return [float(r) for r in rewards]

    def predict(self, observation: Any, **kwargs: Any) -> tuple[Any, Any]:
        # SB3 normalizes inside VecNormalize, not in predict: apply the (frozen) training statistics here.
        if self.normalizer is not None:
            observation = self.normalizer.normalize_obs(observation)
        return self.model.predict(observation, **kwargs)


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
        kwargs = copy.deepcopy(case.hyperparams)
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

    def evaluate_games(self, n_games: int) -> list[float]:
        """Atari: whole games with unclipped scores, on lit-sb3's own Atari stack (the inner recorder's)."""
        import lit_sb3

        datamodule = lit_sb3.RLEnvDataModule(
            test_env=functools.partial(make_env, self.case), seed=eval_seed(self.seed), atari=True
        )
        env = datamodule.get_env("test")
        env.reset(seed=eval_seed(self.seed))
        rewards, _ = lit_sb3.evaluate_policy(
            self.model, env, n_eval_episodes=n_games, return_episode_rewards=True
        )
        datamodule.close()
        return [float(r) for r in rewards]

    def predict(self, observation: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self.model.predict(observation, **kwargs)  # applies its own normalization statistics


def _sb3_atari_env(factory: Any, n_envs: int, seed: int) -> Any:
    from stable_baselines3.common.atari_wrappers import AtariWrapper
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecFrameStack

    return VecFrameStack(
        make_vec_env(factory, n_envs=n_envs, seed=seed, wrapper_class=AtariWrapper), n_stack=4
    )


LIBRARIES: dict[str, type[Sb3Run | LitRun]] = {"sb3": Sb3Run, "lit": LitRun}
