"""LSTM actor-critic policies: MlpLstmPolicy, CnnLstmPolicy and MultiInputLstmPolicy.

The core ``ActorCriticPolicy`` with an LSTM between the features extractor and the pi/vf MLPs:

    obs -> features extractor -> LSTM (actor) -> MLP pi -> action distribution
                              -> LSTM (critic) -> MLP vf -> value

The critic has its own LSTM by default (``enable_critic_lstm``); it can instead reuse the actor's LSTM
output without back-propagating through it (``shared_lstm``), or use a plain linear layer
(``enable_critic_lstm=False``). Given the same seed, a policy starts from the same weights as
sb3-contrib's.

Hidden states are passed explicitly as ``RNNStates`` (``(h, c)`` pairs of shape
``(n_lstm_layers, batch, lstm_hidden_size)`` for actor and critic); ``episode_starts`` marks the rows
whose state must be reset to zero before the step. Two layouts reach the LSTM:

* one step per row (rollouts and ``predict``): ``obs`` has one row per env;
* padded sequences (training): ``obs`` holds a minibatch's samples, ``sequences`` says where each sits in
  a ``(max_len, n_seq)`` time-major grid. Sequences never cross an episode boundary, so a reset can only
  happen at a sequence's first step, and the whole grid goes through ``nn.LSTM`` in one call;
* segments (compiled training, ``Segments``): the same samples in a grid of fixed shape whose columns are
  per-env runs that may span episodes (a reset mask zeroes the state where one starts), evaluated from the
  LSTM's weights step by step (``lstm_steps``), so every minibatch of a run has the same shapes.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError, ConflictingOptionsError
from lit_sb3_core.sdk import (
    ActorCriticPolicy,
    CombinedExtractor,
    Distribution,
    MlpExtractor,
    NatureCNN,
    NetArch,
    check_positive_int,
)
from lit_sb3_ppo_recurrent.lstm_steps import lstm_steps

__all__ = [
    "RECURRENT_ALIASES",
    "CnnLstmPolicy",
    "MlpLstmPolicy",
    "MultiInputLstmPolicy",
    "RNNStates",
    "RecurrentActorCriticCnnPolicy",
    "RecurrentActorCriticPolicy",
    "RecurrentMultiInputActorCriticPolicy",
    "Segments",
    "Sequences",
]

LSTMState = tuple[torch.Tensor, torch.Tensor]


class RNNStates(NamedTuple):
    """Hidden and cell states of the actor's (``pi``) and the critic's (``vf``) LSTM."""

    pi: LSTMState
    vf: LSTMState


class Sequences(NamedTuple):
    """Where a minibatch's samples sit in the padded, time-major ``(max_len, n_seq)`` grid of the LSTM.

    ``positions[i] = step_in_sequence * n_seq + sequence_index`` for sample ``i``; grid cells that hold no
    sample are padding, which the LSTM runs over after each sequence's end and the losses never see.
    """

    positions: torch.Tensor
    n_seq: int
    max_len: int


class Segments(NamedTuple):
    """Where a minibatch's samples sit in a ``(steps, columns)`` grid of fixed shape, for compiled updates.

    A column holds one env's consecutive steps, which may cross episode boundaries: ``keep`` is 0.0 for a
    sample that starts an episode (its state is zeroed before its step), 1.0 otherwise.
    ``positions[i] = step_in_column * columns + column`` for sample ``i``; the other cells are padding.
    The shape depends only on the rollout's size and ``batch_size`` (``RecurrentRolloutBuffer.segment_grid``),
    so a compiled update is traced once per minibatch size, not once per episode layout.
    """

    positions: torch.Tensor
    keep: torch.Tensor
    steps: int
    columns: int


_REFUSED_LSTM_KWARGS = {
    "batch_first": "the policy feeds time-major sequences",
    "bidirectional": "a policy must not see the future",
    "proj_size": "the MLPs expect lstm_hidden_size features",
    "input_size": "it is the features extractor's features_dim",
    "hidden_size": "pass lstm_hidden_size instead",
    "num_layers": "pass n_lstm_layers instead",
}


class RecurrentActorCriticPolicy(ActorCriticPolicy):
    """Actor-critic policy with LSTMs, for RecurrentPPO (sb3-contrib's ``MlpLstmPolicy``).

    Args:
        observation_space / action_space / net_arch / activation_fn / ortho_init / log_std_init /
        features_extractor_class / features_extractor_kwargs / share_features_extractor /
        normalize_images / optimizer_class / optimizer_kwargs / use_sde / full_std / use_expln /
        squash_output / learn_features: as ``lit_sb3_core.sdk.ActorCriticPolicy``; the MLPs sit on
            the LSTM output. ``ortho_init`` leaves the LSTMs with PyTorch's initialisation, as sb3-contrib.
        lstm_hidden_size: hidden units of each LSTM layer.
        n_lstm_layers: stacked LSTM layers.
        shared_lstm: the critic reads the actor's LSTM output, detached (only the actor's loss trains the
            LSTM). Needs ``enable_critic_lstm=False`` and a shared features extractor.
        enable_critic_lstm: give the critic its own LSTM. With neither option, the critic is a linear
            layer on the features (no memory).
        lstm_kwargs: extra ``nn.LSTM`` arguments (``dropout``, ``bias``).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: NetArch = None,
        activation_fn: Any = nn.Tanh,
        ortho_init: bool = True,
        log_std_init: float = 0.0,
        features_extractor_class: Any = None,
        features_extractor_kwargs: dict[str, Any] | None = None,
        share_features_extractor: bool = True,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
        use_sde: bool = False,
        full_std: bool = True,
        use_expln: bool = False,
        squash_output: bool = False,
        learn_features: bool = False,
        lstm_hidden_size: int = 256,
        n_lstm_layers: int = 1,
        shared_lstm: bool = False,
        enable_critic_lstm: bool = True,
        lstm_kwargs: dict[str, Any] | None = None,
    ) -> None:
        check_positive_int("lstm_hidden_size", lstm_hidden_size)
        check_positive_int("n_lstm_layers", n_lstm_layers)
        if shared_lstm and enable_critic_lstm:  # ConflictingOptionsError: an AssertionError, as sb3-contrib's
            raise ConflictingOptionsError(
                "shared_lstm=True and enable_critic_lstm=True both give the critic an LSTM: choose one, e.g. "
                "policy_kwargs=dict(shared_lstm=True, enable_critic_lstm=False)."
            )
        if shared_lstm and not share_features_extractor:
            raise ConflictingOptionsError(
                "shared_lstm=True needs share_features_extractor=True: the LSTM cannot be shared when actor and "
                "critic have different features."
            )
        lstm_kwargs = dict(lstm_kwargs or {})
        refused = {key: why for key, why in _REFUSED_LSTM_KWARGS.items() if key in lstm_kwargs}
        if refused:
            raise ConfigurationError(
                f"lstm_kwargs may not set {', '.join(f'{k} ({why})' for k, why in refused.items())}."
            )
        # Read by _build_mlp_extractor, which the base constructor calls.
        self.lstm_hidden_size = lstm_hidden_size
        super().__init__(
            observation_space,
            action_space,
            net_arch=net_arch,
            activation_fn=activation_fn,
            ortho_init=ortho_init,
            log_std_init=log_std_init,
            features_extractor_class=features_extractor_class,
            features_extractor_kwargs=features_extractor_kwargs,
            share_features_extractor=share_features_extractor,
            normalize_images=normalize_images,
            optimizer_class=optimizer_class,
            optimizer_kwargs=optimizer_kwargs,
            use_sde=use_sde,
            full_std=full_std,
            use_expln=use_expln,
            squash_output=squash_output,
            learn_features=learn_features,
        )
        self.n_lstm_layers = n_lstm_layers
        self.shared_lstm = shared_lstm
        self.enable_critic_lstm = enable_critic_lstm
        self.lstm_kwargs = lstm_kwargs
        features_dim = self.features_extractor.features_dim
        # Created after the base policy (and its orthogonal init), in sb3-contrib's order: same seed, same weights.
        self.lstm_actor = nn.LSTM(features_dim, lstm_hidden_size, num_layers=n_lstm_layers, **lstm_kwargs)
        self.critic: nn.Linear | None = None
        if not (shared_lstm or enable_critic_lstm):
            self.critic = nn.Linear(features_dim, lstm_hidden_size)
        self.lstm_critic: nn.LSTM | None = None
        if enable_critic_lstm:
            self.lstm_critic = nn.LSTM(
                features_dim, lstm_hidden_size, num_layers=n_lstm_layers, **lstm_kwargs
            )

    def build_mlp_extractor(self) -> MlpExtractor:
        return MlpExtractor(self.lstm_hidden_size, self.net_arch, self.activation_fn)

    # hidden states ------------------------------------------------------------------------------
    @property
    def lstm_state_shape(self) -> tuple[int, int]:
        """``(n_lstm_layers, lstm_hidden_size)``: one env's hidden (or cell) state."""
        return self.n_lstm_layers, self.lstm_hidden_size

    def initial_state(self, n_envs: int, device: torch.device | str | None = None) -> RNNStates:
        """Zero hidden and cell states for ``n_envs`` envs, for actor and critic."""
        device = device if device is not None else self.value_net.weight.device
        shape = (self.n_lstm_layers, n_envs, self.lstm_hidden_size)
        zeros = [torch.zeros(shape, device=device) for _ in range(4)]
        return RNNStates((zeros[0], zeros[1]), (zeros[2], zeros[3]))

    @staticmethod
    def _unroll(
        lstm: nn.LSTM,
        features: torch.Tensor,
        state: LSTMState,
        episode_starts: torch.Tensor,
        sequences: Sequences | Segments | None,
    ) -> tuple[torch.Tensor, LSTMState]:
        """Run ``lstm`` over one step per row, over padded sequences, or over segments; returns one output
        row per sample.

        ``episode_starts`` has one flag per row of ``state`` (per env, or per sequence): where set, the
        state is reset to zero before the first step (with segments, ``Segments.keep`` resets every step).
        """
        keep = (1.0 - episode_starts.float()).view(1, -1, 1)
        state = (state[0] * keep, state[1] * keep)
        if isinstance(sequences, Segments):
            n_cells = sequences.steps * sequences.columns
            positions = sequences.positions
            grid = features.new_zeros((n_cells, features.shape[-1])).index_copy(0, positions, features)
            resets = features.new_ones(n_cells).index_copy(0, positions, sequences.keep)
            output, state = lstm_steps(
                lstm,
                grid.view(sequences.steps, sequences.columns, -1),
                state,
                resets.view(sequences.steps, sequences.columns),
            )
            return output.reshape(n_cells, -1).index_select(0, positions), state
        if sequences is None:
            output, state = lstm(features.unsqueeze(0), state)
            return output.squeeze(0), state
        n_cells = sequences.max_len * sequences.n_seq
        grid = features.new_zeros((n_cells, features.shape[-1])).index_copy(0, sequences.positions, features)
        output, state = lstm(grid.view(sequences.max_len, sequences.n_seq, -1), state)
        return output.reshape(n_cells, -1).index_select(0, sequences.positions), state

    def _pi_features(self, obs: Any) -> torch.Tensor:
        return self.features_extractor(self.obs_preprocessor(obs))

    def _vf_features(self, obs: Any) -> torch.Tensor:
        return self.vf_features_extractor(self.obs_preprocessor(obs))  # features_extractor when shared

    def latents(  # type: ignore[override]
        self,
        obs: Any,
        lstm_states: RNNStates,
        episode_starts: torch.Tensor,
        sequences: Sequences | Segments | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, RNNStates]:
        pi_features, vf_features = self.extract_features(obs)
        latent_pi, state_pi = self._unroll(
            self.lstm_actor, pi_features, lstm_states.pi, episode_starts, sequences
        )
        if self.lstm_critic is not None:
            latent_vf, state_vf = self._unroll(
                self.lstm_critic, vf_features, lstm_states.vf, episode_starts, sequences
            )
        elif self.shared_lstm:
            # The critic reads the actor's memory but does not train it.
            latent_vf, state_vf = latent_pi.detach(), (state_pi[0].detach(), state_pi[1].detach())
        else:
            assert self.critic is not None
            latent_vf, state_vf = self.critic(vf_features), state_pi
        latent_pi = self.mlp_extractor.forward_actor(latent_pi)
        latent_vf = self.mlp_extractor.forward_critic(latent_vf)
        return latent_pi, latent_vf, RNNStates(state_pi, state_vf)

    # forward passes -----------------------------------------------------------------------------
    def forward(  # type: ignore[override]
        self, obs: Any, lstm_states: RNNStates, episode_starts: torch.Tensor, deterministic: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, RNNStates]:
        """One step for every env: ``(actions, values, log_prob, new lstm_states)``, as a rollout collects."""
        latent_pi, latent_vf, new_states = self.latents(obs, lstm_states, episode_starts)
        dist = self.distribution(latent_pi)
        actions = dist.get_actions(deterministic)
        return actions, self.value_net(latent_vf).squeeze(-1), dist.log_prob(actions), new_states

    def evaluate_actions(  # type: ignore[override]
        self,
        obs: Any,
        actions: torch.Tensor,
        lstm_states: RNNStates,
        episode_starts: torch.Tensor,
        sequences: Sequences | Segments | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-likelihood and entropy of ``actions``; with ``sequences``, over padded sequences
        (or segments) that start from ``lstm_states`` (one row per sequence, reset where ``episode_starts``)."""
        latent_pi, latent_vf, _ = self.latents(obs, lstm_states, episode_starts, sequences)
        dist = self.distribution(latent_pi)
        return self.value_net(latent_vf).squeeze(-1), dist.log_prob(actions), dist.entropy()

    def get_distribution(  # type: ignore[override]
        self, obs: Any, lstm_states: LSTMState, episode_starts: torch.Tensor
    ) -> tuple[Distribution, LSTMState]:
        """The action distribution of one step and the actor's new ``(h, c)``."""
        latent, state = self._unroll(
            self.lstm_actor, self._pi_features(obs), lstm_states, episode_starts, None
        )
        return self.distribution(self.mlp_extractor.forward_actor(latent)), state

    def predict_values(  # type: ignore[override]
        self, obs: Any, lstm_states: LSTMState, episode_starts: torch.Tensor
    ) -> torch.Tensor:
        """V(obs) for one step, from the critic's state ``lstm_states`` (the ``vf`` half of RNNStates)."""
        features = self._vf_features(obs)
        if self.lstm_critic is not None:
            latent, _ = self._unroll(self.lstm_critic, features, lstm_states, episode_starts, None)
        elif self.shared_lstm:
            latent, _ = self._unroll(self.lstm_actor, features, lstm_states, episode_starts, None)
            latent = latent.detach()
        else:
            assert self.critic is not None
            latent = self.critic(features)
        return self.value_net(self.mlp_extractor.forward_critic(latent)).squeeze(-1)

    def predict_actions(  # type: ignore[override]
        self, obs: Any, lstm_states: LSTMState, episode_starts: torch.Tensor, deterministic: bool = False
    ) -> tuple[torch.Tensor, LSTMState]:
        """Actions for one step and the actor's new ``(h, c)``: what ``model.predict`` needs."""
        dist, state = self.get_distribution(obs, lstm_states, episode_starts)
        return dist.get_actions(deterministic), state


class RecurrentActorCriticCnnPolicy(RecurrentActorCriticPolicy):
    """CnnLstmPolicy: NatureCNN features (512), then the LSTMs; no hidden layers after them by default."""

    default_features_extractor_class = NatureCNN


class RecurrentMultiInputActorCriticPolicy(RecurrentActorCriticPolicy):
    """MultiInputLstmPolicy: Dict observations through CombinedExtractor, then the LSTMs."""

    default_features_extractor_class = CombinedExtractor


MlpLstmPolicy = RecurrentActorCriticPolicy
CnnLstmPolicy = RecurrentActorCriticCnnPolicy
MultiInputLstmPolicy = RecurrentMultiInputActorCriticPolicy

RECURRENT_ALIASES: dict[str, Any] = {
    "MlpLstmPolicy": MlpLstmPolicy,
    "CnnLstmPolicy": CnnLstmPolicy,
    "MultiInputLstmPolicy": MultiInputLstmPolicy,
}


class RecurrentDeterministicPolicy(nn.Module):
    """One deterministic step with the LSTM state as tensors: what ``RecurrentPPO.export`` writes.

    ``forward(obs, lstm_hidden, lstm_cell, episode_start) -> (actions, lstm_hidden, lstm_cell)``, states
    ``(n_lstm_layers, batch, lstm_hidden_size)``, ``episode_start`` one float flag per row (1: reset first).
    """

    def __init__(self, policy: RecurrentActorCriticPolicy) -> None:
        super().__init__()
        self.policy = policy

    def forward(
        self, obs: Any, lstm_hidden: torch.Tensor, lstm_cell: torch.Tensor, episode_start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        actions, (hidden, cell) = self.policy.predict_actions(
            obs, (lstm_hidden, lstm_cell), episode_start, deterministic=True
        )
        return actions, hidden, cell
