"""What a Lightning checkpoint carries besides the weights: counters, spaces, normalization, RNG states
and the recent episode statistics, so a resumed run continues where it stopped."""

from __future__ import annotations

from typing import Any

import torch

from lit_sb3_core.engine.file_checks import check_checkpoint_fits
from lit_sb3_core.envs.episodes import EpisodeStatistics
from lit_sb3_core.errors import ModelFileError
from lit_sb3_core.foundation.rng import capture_rng_state, restore_rng_state
from lit_sb3_core.foundation.spaces import space_from_json, space_to_json
from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["CheckpointState"]


class CheckpointState(AlgorithmPart):
    """RLAlgorithm's checkpoint hooks and run counters (a part of RLAlgorithm)."""

    _restored_episode_stats: tuple[list[float], list[int]]

    @classmethod
    def load_from_checkpoint(
        cls,
        checkpoint_path: Any,
        map_location: Any = None,
        hparams_file: Any = None,
        strict: bool | None = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        """Lightning's ``load_from_checkpoint``, reading through lit-sb3's checkpoint reader: local or remote,
        always ``weights_only=True`` unless you pass ``False`` for a file you trust; an unsafe, damaged or
        tampered checkpoint raises ``ModelFileError`` naming the file and the field."""
        from lit_sb3_core.engine.checkpoint_io import load_algorithm_checkpoint

        return load_algorithm_checkpoint(
            cls, checkpoint_path, map_location, hparams_file, strict, weights_only=weights_only, **kwargs
        )

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        assert self.observation_space is not None and self.action_space is not None
        checkpoint["lit_sb3"] = {
            "algo": self.algo_name,
            "num_timesteps": self.num_timesteps,
            "iterations": self.iterations,
            "n_updates": self.n_updates,
            "observation_space": space_to_json(self.observation_space),
            "action_space": space_to_json(self.action_space),
            "normalization": self.normalization,
            "rng": capture_rng_state(),
            "episode_returns": EpisodeStatistics(self.vector_env).returns,
            "episode_lengths": EpisodeStatistics(self.vector_env).lengths,
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        state = checkpoint.get("lit_sb3")
        if state is None:
            raise ModelFileError(
                "This checkpoint was not written by a lit-sb3 algorithm (no 'lit_sb3' entry): load plain "
                "Lightning checkpoints with their own LightningModule class."
            )
        if self.algo_name and state.get("algo") not in (None, self.algo_name):
            raise ModelFileError(
                f"This checkpoint holds a {state['algo']!r} model, not {self.algo_name!r}: load it with that "
                "algorithm's class (lit_sb3.get_algo_class(name).load_from_checkpoint(path))."
            )
        observation_space = space_from_json(state["observation_space"])
        action_space = space_from_json(state["action_space"])
        if self.policy is None:
            self.build_policy(observation_space, action_space)
        self.configure_normalization(state.get("normalization"))
        check_checkpoint_fits(self, checkpoint, observation_space, action_space)
        self.num_timesteps = int(state["num_timesteps"])
        self.iterations = int(state["iterations"])
        self.n_updates = int(state["n_updates"])
        if "rng" in state:
            restore_rng_state(state["rng"])
        self._restored_episode_stats = (state.get("episode_returns", []), state.get("episode_lengths", []))

    def on_train_end(self) -> None:
        self.run_counters.copy_(torch.tensor([self.num_timesteps, self.iterations, self.n_updates]))

    def sync_counters_from_state(self) -> None:
        """Take the counters from ``run_counters`` when a process that trained wrote them there."""
        num_timesteps, iterations, n_updates = (int(v) for v in self.run_counters.tolist())
        if num_timesteps > self.num_timesteps:
            self.num_timesteps, self.iterations, self.n_updates = num_timesteps, iterations, n_updates
