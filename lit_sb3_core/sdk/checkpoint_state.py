"""What a Lightning checkpoint carries besides the weights: counters, spaces, normalization, RNG states
and the recent episode statistics, so a resumed run continues where it stopped. RLAlgorithm's checkpoint
hooks (``on_save_checkpoint``, ``on_load_checkpoint``) call these functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lit_sb3_core.engine.file_checks import check_checkpoint_fits
from lit_sb3_core.envs.episodes import EpisodeStatistics
from lit_sb3_core.errors import ModelFileError
from lit_sb3_core.foundation.rng import capture_rng_state, restore_rng_state
from lit_sb3_core.foundation.spaces import space_from_json, space_to_json

if TYPE_CHECKING:
    from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["read_checkpoint_state", "write_checkpoint_state"]


def write_checkpoint_state(algorithm: AlgorithmPart, checkpoint: dict[str, Any]) -> None:
    """Add the algorithm's state besides its weights to a checkpoint Lightning is writing."""
    assert algorithm.observation_space is not None and algorithm.action_space is not None
    checkpoint["lit_sb3"] = {
        "algo": algorithm.algo_name,
        "num_timesteps": algorithm.num_timesteps,
        "iterations": algorithm.iterations,
        "n_updates": algorithm.n_updates,
        "observation_space": space_to_json(algorithm.observation_space),
        "action_space": space_to_json(algorithm.action_space),
        "normalization": algorithm.normalization,
        "rng": capture_rng_state(),
        "episode_returns": EpisodeStatistics(algorithm.vector_env).returns,
        "episode_lengths": EpisodeStatistics(algorithm.vector_env).lengths,
    }


def read_checkpoint_state(algorithm: AlgorithmPart, checkpoint: dict[str, Any]) -> None:
    """Take the algorithm's state back from a checkpoint (building the policy first if needed)."""
    state = checkpoint.get("lit_sb3")
    if state is None:
        raise ModelFileError(
            "This checkpoint was not written by a lit-sb3 algorithm (no 'lit_sb3' entry): load plain "
            "Lightning checkpoints with their own LightningModule class."
        )
    if algorithm.algo_name and state.get("algo") not in (None, algorithm.algo_name):
        raise ModelFileError(
            f"This checkpoint holds a {state['algo']!r} model, not {algorithm.algo_name!r}: load it with that "
            "algorithm's class (lit_sb3.get_algo_class(name).load_from_checkpoint(path))."
        )
    observation_space = space_from_json(state["observation_space"])
    action_space = space_from_json(state["action_space"])
    if algorithm.policy is None:
        algorithm.build_policy(observation_space, action_space)
    algorithm.configure_normalization(state.get("normalization"))
    check_checkpoint_fits(algorithm, checkpoint, observation_space, action_space)
    algorithm.num_timesteps = int(state["num_timesteps"])
    algorithm.iterations = int(state["iterations"])
    algorithm.n_updates = int(state["n_updates"])
    if "rng" in state:
        restore_rng_state(state["rng"])
    algorithm._restored_episode_stats = (state.get("episode_returns", []), state.get("episode_lengths", []))
