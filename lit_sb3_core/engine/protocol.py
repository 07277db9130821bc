"""What the engine needs from an algorithm: the trainer, evaluation and model files talk to an algorithm
through this protocol only, so the engine never imports the SDK's base classes (which sit above it).

``lit_sb3_core.sdk.RLAlgorithm`` implements it (``tests/engine/test_protocol.py`` checks that it does, and mypy
checks the assignment at the end of ``sdk/algorithm.py``). Every member is public: an algorithm written
against another base class can be trained, evaluated and saved by the engine if it provides them.

The conversation, by topic:

* **Identity, spaces, counters** -- what a model file records and a resumed run continues; RLTrainer
  builds the policy from a datamodule before Lightning starts (``build_policy``,
  ``configure_normalization``), ``sync_counters_from_state`` takes the counters back from a ddp_spawn rank.
* **Environment source** -- ``env_source``: what ``learn`` trains on and what ``RLTrainer.validate/test``
  falls back to when given no environment (an id, Env, factory, VectorEnv or RLEnvDataModule).
* **Evaluation** -- before a validation or test loop RLTrainer sets ``evaluation_options``; the algorithm's
  ``validation_step``/``test_step`` run the episodes and leave ``last_evaluation`` (the logged metrics,
  ``val/mean_reward`` & co.) and ``last_evaluation_episodes`` (each episode's return and length).
* **Model files** -- ``save_model`` reads the weights, hyperparameters, spaces, counters and optimizer
  states; ``load_model`` builds the policy for the stored spaces and hands optimizer states over in
  ``pending_optimizer_states`` (applied when training starts and the optimizers exist).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypedDict, runtime_checkable

__all__ = ["EvaluationEpisodes", "EvaluationOptions", "RLModel"]


class EvaluationOptions(TypedDict, total=False):
    """How ``validation_step``/``test_step`` evaluate (``RLTrainer.validate(...)``'s arguments)."""

    n_eval_episodes: int  # episodes per rank (10 when absent)
    deterministic: bool  # deterministic actions (True when absent)
    render: bool  # render each step (False when absent)
    use_masking: bool  # pass the envs' action masks to predict (MaskablePPO; False when absent)


# (episode returns, episode lengths) of one evaluation, this rank's episodes in the order they ended.
EvaluationEpisodes = tuple[list[float], list[int]]


@runtime_checkable
class RLModel(Protocol):
    """An algorithm as the engine sees it."""

    # identity, spaces, policy, counters
    algo_name: ClassVar[str]
    observation_space: Any
    action_space: Any
    policy: Any  # the policy module, None until the spaces are known
    normalization: dict[str, Any] | None
    num_timesteps: int
    iterations: int
    n_updates: int
    last_obs: Any  # the training envs' current observations (checked when a run diverges)
    last_episode_starts: Any  # which of them start an episode (a bool array, one per env)
    # environment source
    env_source: Any
    # evaluation: options in, results out
    evaluation_options: EvaluationOptions | None
    last_evaluation: dict[str, float]
    last_evaluation_episodes: EvaluationEpisodes
    # model files
    pending_optimizer_states: list[dict[str, Any]]
    lr_schedule: Any  # a load's custom_objects may replace it (SB3's semantics)

    @property
    def hparams(self) -> Any:
        """The constructor arguments (plain JSON values): a model file rebuilds the model from them."""
        ...

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False
    ) -> tuple[Any, Any]:
        """Actions for ``observation`` (SB3's ``predict``)."""
        ...

    def env_steps_per_iteration(self, n_envs: int) -> int | None:
        """Environment steps one iteration takes with ``n_envs`` envs in total (``None``: it varies)."""
        ...

    def build_policy(self, observation_space: Any, action_space: Any) -> None:
        """Create the policy for these spaces."""
        ...

    def require_policy(self) -> Any:
        """The policy, or a clear error when it is not built yet."""
        ...

    def sync_counters_from_state(self) -> None:
        """Take the counters from the state dict when another process (a ddp_spawn rank) trained."""
        ...

    def configure_normalization(self, config: dict[str, Any] | None) -> None:
        """Attach the observation/reward normalizers a datamodule or model file asks for."""
        ...

    def extra_state(self) -> dict[str, Any]:
        """Algorithm state outside the tensors, as plain JSON values, for model files."""
        ...

    def load_extra_state(self, state: dict[str, Any]) -> None:
        """Take back what ``extra_state`` returned, after a model file is loaded."""
        ...

    def set_env(self, env: Any, force_reset: bool = True, *, episodes: tuple[Any, Any] | None = None) -> None:
        """Train on ``env`` from the next ``learn`` (a load's ``env=``); its spaces must match. ``episodes``
        (last observations, episode starts) are the env's episodes in flight (``load(force_reset=False)``)."""
        ...

    def get_parameters(self) -> dict[str, dict[str, Any]]:
        """State dicts by name: ``policy`` and each optimizer (``optimizer``, ``optimizer_1``, ...)."""
        ...

    def state_dict(self) -> Mapping[str, Any]:
        """Every tensor of the model (``nn.Module.state_dict``)."""
        ...

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> Any:
        """Load tensors written by ``state_dict`` (``nn.Module.load_state_dict``)."""
        ...
