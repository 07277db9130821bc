"""Evaluation through Lightning's validation and test loops: episodes on the datamodule's eval envs.

RLTrainer sets ``evaluation_options`` (episodes, deterministic, render, masking) before a loop runs and
reads ``last_evaluation`` and ``last_evaluation_episodes`` afterwards (see ``engine/protocol.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from lit_sb3_core.sdk.part import AlgorithmPart

if TYPE_CHECKING:
    from lit_sb3_core.engine.datamodule import Stage
    from lit_sb3_core.engine.protocol import EvaluationOptions

__all__ = ["EvaluationSteps"]


class EvaluationSteps(AlgorithmPart):
    """RLAlgorithm's ``validation_step`` and ``test_step`` (a part of RLAlgorithm)."""

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self._evaluation_step("val", "validate")

    def test_step(self, batch: Any, batch_idx: int) -> None:
        self._evaluation_step("test", "test")

    def _evaluation_step(self, prefix: str, stage: Stage) -> None:
        from lit_sb3_core.engine.evaluation import evaluate_policy

        env = self.datamodule.get_env(stage)
        if env is None:
            raise ValueError(
                f"The datamodule has no environment for {stage}: pass {stage[:4]}_env=... to it."
            )
        options: EvaluationOptions = self.evaluation_options or {}
        if env not in self._seeded_eval_envs:
            # Seed each evaluation env once; later evaluations continue its random stream.
            env.reset(seed=self.datamodule.env_seed(stage, self.seed))
            self._seeded_eval_envs.append(env)
        rewards, lengths = evaluate_policy(
            self,
            env,
            n_eval_episodes=options.get("n_eval_episodes", 10),
            deterministic=options.get("deterministic", True),
            render=options.get("render", False),
            return_episode_rewards=True,
            use_masking=options.get("use_masking", False),
            warn=False,  # the datamodule's evaluation envs are built (and Atari's recorded) by lit-sb3
            # The progress bar counts episodes, not Lightning batches (one batch runs them all).
            episode_callback=getattr(self.trainer.progress_bar_callback, "episode_finished", None),
        )
        self.last_evaluation_episodes = (rewards, lengths)
        stats = torch.tensor(
            [np.mean(rewards), np.std(rewards), np.mean(lengths), np.std(lengths)], dtype=torch.float64
        )
        # Under DDP each rank evaluates its own episodes; the ranks agree on the averaged result, so that
        # ModelCheckpoint and EarlyStopping take the same decision everywhere.
        mean_reward, std_reward, mean_length, std_length = self.all_reduce(stats, "mean").tolist()
        self.last_evaluation = results = {
            f"{prefix}/mean_reward": mean_reward,
            f"{prefix}/std_reward": std_reward,
            f"{prefix}/mean_episode_length": mean_length,
            f"{prefix}/std_episode_length": std_length,
            f"{prefix}/n_eval_episodes": float(len(rewards) * self.world_size),
        }
        # Through Lightning (callback metrics for ModelCheckpoint/EarlyStopping and the returned results),
        # but written to the loggers here, against environment steps rather than optimizer steps.
        self.log_dict(results, batch_size=1, logger=False)
        for logger in self.loggers:
            logger.log_metrics(results, step=self.num_timesteps)
