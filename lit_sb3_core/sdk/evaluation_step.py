"""Evaluation through Lightning's validation and test loops: episodes on the datamodule's eval envs.

RLTrainer sets ``evaluation_options`` (episodes, deterministic, render, masking) before a loop runs and
reads ``last_evaluation`` and ``last_evaluation_episodes`` afterwards (see ``engine/protocol.py``).
:class:`Evaluation` is a helper the algorithm holds; its ``validation_step``/``test_step`` call it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from lit_sb3_core.engine.datamodule import Stage
    from lit_sb3_core.engine.protocol import EvaluationOptions
    from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["Evaluation"]


class Evaluation:
    """One algorithm's evaluation episodes in Lightning's validation and test loops."""

    def __init__(self, algorithm: AlgorithmPart) -> None:
        self.algorithm = algorithm
        self._seeded_envs: list[Any] = []  # evaluation envs seeded once; later runs continue their stream

    def run(self, prefix: str, stage: Stage) -> None:
        """Evaluate on the datamodule's ``stage`` envs; results under ``<prefix>/...``."""
        from lit_sb3_core.engine.evaluation import evaluate_policy

        algorithm = self.algorithm
        env = algorithm.datamodule.get_env(stage)
        if env is None:
            raise ValueError(
                f"The datamodule has no environment for {stage}: pass {stage[:4]}_env=... to it."
            )
        options: EvaluationOptions = algorithm.evaluation_options or {}
        if env not in self._seeded_envs:
            # Seed each evaluation env once; later evaluations continue its random stream.
            env.reset(seed=algorithm.datamodule.env_seed(stage, algorithm.seed))
            self._seeded_envs.append(env)
        rewards, lengths = evaluate_policy(
            algorithm,
            env,
            n_eval_episodes=options.get("n_eval_episodes", 10),
            deterministic=options.get("deterministic", True),
            render=options.get("render", False),
            return_episode_rewards=True,
            use_masking=options.get("use_masking", False),
            warn=False,  # the datamodule's evaluation envs are built (and Atari's recorded) by lit-sb3
            # The progress bar counts episodes, not Lightning batches (one batch runs them all).
            episode_callback=getattr(algorithm.trainer.progress_bar_callback, "episode_finished", None),
        )
        algorithm.last_evaluation_episodes = (rewards, lengths)
        stats = torch.tensor(
            [np.mean(rewards), np.std(rewards), np.mean(lengths), np.std(lengths)], dtype=torch.float64
        )
        # Under DDP each rank evaluates its own episodes; the ranks agree on the averaged result, so that
        # ModelCheckpoint and EarlyStopping take the same decision everywhere.
        mean_reward, std_reward, mean_length, std_length = algorithm.ranks.all_reduce(stats, "mean").tolist()
        algorithm.last_evaluation = results = {
            f"{prefix}/mean_reward": mean_reward,
            f"{prefix}/std_reward": std_reward,
            f"{prefix}/mean_episode_length": mean_length,
            f"{prefix}/std_episode_length": std_length,
            f"{prefix}/n_eval_episodes": float(len(rewards) * algorithm.world_size),
        }
        # Through Lightning (callback metrics for ModelCheckpoint/EarlyStopping and the returned results),
        # but written to the loggers here, against environment steps rather than optimizer steps.
        algorithm.log_dict(results, batch_size=1, logger=False)
        for logger in algorithm.loggers:
            logger.log_metrics(results, step=algorithm.num_timesteps)
