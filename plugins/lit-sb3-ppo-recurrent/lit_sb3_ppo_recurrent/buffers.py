"""A rollout buffer that also keeps the LSTM states, and serves minibatches of whole sequences.

Minibatching follows sb3-contrib: the rollout is walked env by env (each env's steps in time order),
rotated by a random offset each epoch, and cut into consecutive minibatches of ``batch_size`` samples.
Inside a minibatch, samples form sequences that end where an episode ends, where the walk moves to the
next env, or at the minibatch's edge; each sequence starts from the LSTM state stored at its first step.
sb3-contrib pads the sequences and masks the padding in the losses; here the LSTM runs on the padded
grid and only the real samples come back out (``Sequences``), which gives the same means without masks.

The sequence layout of a whole epoch is computed once, in numpy, from the episode starts, and moved to
the device in one transfer: no per-minibatch host work beyond slicing.

A compiled update (``RecurrentPPO(compile=True)``) needs the same shapes in every minibatch, which the
sequences' count and length do not have. ``segment_minibatches`` serves the same samples in the same order,
cut only where the walk moves to the next env or at the minibatch's edge (``Segments``): episode starts
inside a segment reset the LSTM state there instead of starting a new sequence, which is the same
computation, and the grid ``segment_grid`` gives is the largest such a cut can need.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.sdk import RolloutBuffer
from lit_sb3_ppo_recurrent.policies import RNNStates, Segments, Sequences

__all__ = [
    "RecurrentRolloutBatch",
    "RecurrentRolloutBuffer",
    "SequenceLayout",
    "segment_grid",
    "sequence_layout",
]


class RecurrentRolloutBatch(NamedTuple):
    """A minibatch of whole sequences: per-sample tensors, plus one LSTM state and start flag per sequence."""

    observations: Any
    actions: torch.Tensor
    old_values: torch.Tensor
    old_log_prob: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    lstm_states: RNNStates
    episode_starts: torch.Tensor
    sequences: Sequences | Segments


class SequenceLayout(NamedTuple):
    """One epoch's minibatches as sequences; ``flat`` indices address the rollout flattened time-major.

    Attributes:
        order: (total,) flat index of each sample, minibatch after minibatch.
        positions: (total,) each sample's cell in its minibatch's ``(max_len, n_seq)`` grid.
        sequence_starts: flat index of the first sample of every sequence, minibatch after minibatch.
        n_seq: sequences per minibatch.
        max_len: longest sequence per minibatch.
    """

    order: np.ndarray
    positions: np.ndarray
    sequence_starts: np.ndarray
    n_seq: np.ndarray
    max_len: np.ndarray


def _gather(storage: Any, idx: torch.Tensor) -> Any:
    """Rows ``idx`` of ``(n_steps, n_envs, ...)`` storage (or a dict of them) flattened time-major."""
    if isinstance(storage, dict):
        return {key: _gather(sub, idx) for key, sub in storage.items()}
    return storage.reshape(-1, *storage.shape[2:])[idx]


def sequence_layout(episode_starts: np.ndarray, batch_size: int, split: int) -> SequenceLayout:
    """Cut a ``(n_steps, n_envs)`` rollout into minibatches of sequences (see the module docstring).

    Args:
        episode_starts: 1 where the observation of that step began a new episode.
        batch_size: samples per minibatch (the last one may be smaller).
        split: rotation of the env-by-env walk, in ``[0, n_steps * n_envs)``.
    """
    n_steps, n_envs = episode_starts.shape
    total = n_steps * n_envs
    walk = np.arange(total).reshape(n_steps, n_envs).T.reshape(-1)  # env 0's steps, then env 1's, ...
    order = np.roll(walk, -split)
    # A sequence starts at an episode start, at an env's first step (the walk changed env), or a minibatch edge.
    new_sequence = (episode_starts.reshape(-1)[order] > 0) | (order < n_envs)
    new_sequence[::batch_size] = True
    sequence_of = np.cumsum(new_sequence) - 1
    first_sample = np.flatnonzero(new_sequence)
    step_in_sequence = np.arange(total) - first_sample[sequence_of]
    lengths = np.diff(np.append(first_sample, total))
    first_sequence = sequence_of[::batch_size]  # sequences never cross a minibatch edge
    n_seq = np.diff(np.append(first_sequence, len(first_sample)))
    max_len = np.maximum.reduceat(lengths, first_sequence)
    batch_of = np.arange(total) // batch_size
    positions = step_in_sequence * n_seq[batch_of] + (sequence_of - first_sequence[batch_of])
    return SequenceLayout(order, positions, order[first_sample], n_seq, max_len)


def segment_grid(n_steps: int, n_envs: int, size: int) -> tuple[int, int]:
    """``(steps, columns)`` of the segment grid of a minibatch of ``size`` consecutive samples of the walk.

    A segment is at most one env's ``n_steps`` steps and at most ``size`` samples; ``size`` consecutive
    samples of the (rotated, wrapping) walk touch at most ``(n_steps + size - 2) // n_steps + 1`` envs' runs,
    and the whole rollout, rotated, ``n_envs + 1`` (the env it was split in, twice).
    """
    return min(size, n_steps), min((n_steps + size - 2) // n_steps + 1, n_envs + 1)


class RecurrentRolloutBuffer(RolloutBuffer):
    """``RolloutBuffer`` plus the actor's and critic's LSTM states at the start of every step.

    Args:
        n_steps / n_envs / observation_space / action_space / device / gamma / gae_lambda: as
            ``lit_sb3_core.sdk.RolloutBuffer``.
        lstm_state_shape: ``(n_lstm_layers, lstm_hidden_size)`` of one env's hidden (or cell) state.
    """

    def __init__(
        self,
        n_steps: int,
        n_envs: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lstm_state_shape: tuple[int, int],
        device: torch.device | str = "cpu",
        gamma: float = 0.99,
        gae_lambda: float = 1.0,
    ) -> None:
        super().__init__(n_steps, n_envs, observation_space, action_space, device, gamma, gae_lambda)
        self.lstm_state_shape = tuple(lstm_state_shape)
        # (n_steps, n_envs, n_layers, hidden): flattening the first two axes matches the other storage.
        shape = (n_steps, n_envs, *self.lstm_state_shape)
        self.lstm_storage = torch.zeros((4, *shape), dtype=torch.float32, device=self.device)

    def add_lstm_states(self, lstm_states: RNNStates) -> None:
        """Store the states the policy starts the current step from; call before ``add`` for that step."""
        if self.pos >= self.n_steps:
            raise RuntimeError("RecurrentRolloutBuffer is full: call reset() before adding more steps.")
        stacked = torch.stack((*lstm_states.pi, *lstm_states.vf))  # (4, n_layers, n_envs, hidden)
        self.lstm_storage[:, self.pos].copy_(stacked.transpose(1, 2))

    def random_split(self) -> int:
        """Where this epoch's env-by-env walk starts (sb3-contrib's "shuffle a bit" rotation), drawn as
        sb3-contrib draws it: ``np.random.randint`` on numpy's global generator. The same seed then gives
        sb3-contrib's minibatches, and torch's generator, which samples the next rollout's actions, is
        left where sb3-contrib leaves it."""
        return int(np.random.randint(self.n_steps * self.n_envs))

    def sequence_minibatches(self, batch_size: int | None) -> Iterator[RecurrentRolloutBatch]:
        """One epoch of minibatches of whole sequences (see the module docstring)."""
        total = self.n_steps * self.n_envs
        batch_size = total if batch_size is None else batch_size
        layout = sequence_layout(self.episode_starts, batch_size, self.random_split())
        index = torch.from_numpy(np.concatenate((layout.order, layout.positions, layout.sequence_starts)))
        index = index.to(self.device)
        order, positions, sequence_starts = index[:total], index[total : 2 * total], index[2 * total :]
        starts = torch.from_numpy(self.episode_starts.reshape(-1)[layout.sequence_starts]).to(self.device)
        flat_states = self.lstm_storage.reshape(4, total, *self.lstm_state_shape)
        seq_offset = 0
        for batch, (n_seq, max_len) in enumerate(zip(layout.n_seq.tolist(), layout.max_len.tolist())):
            rows = slice(batch * batch_size, min((batch + 1) * batch_size, total))
            idx = order[rows]
            first = sequence_starts[seq_offset : seq_offset + n_seq]
            # (4, n_seq, n_layers, hidden) -> four (n_layers, n_seq, hidden) states
            states = flat_states[:, first].transpose(1, 2).contiguous()
            yield self._batch(
                idx,
                states,
                starts[seq_offset : seq_offset + n_seq],
                Sequences(positions[rows], n_seq, max_len),
            )
            seq_offset += n_seq

    def segment_minibatches(self, batch_size: int | None) -> Iterator[RecurrentRolloutBatch]:
        """One epoch of minibatches as ``sequence_minibatches`` serves them (the same samples in the same
        order, drawing the same rotation), laid out as ``Segments`` of a fixed grid: for compiled updates."""
        total = self.n_steps * self.n_envs
        batch_size = total if batch_size is None else min(batch_size, total)
        starts = self.episode_starts.reshape(-1)
        # Segments are the sequences of a rollout without episode starts.
        layout = sequence_layout(np.zeros_like(self.episode_starts), batch_size, self.random_split())
        batch_of = np.arange(total) // batch_size
        step_in_segment = layout.positions // layout.n_seq[batch_of]
        segment = layout.positions % layout.n_seq[batch_of]
        grids = [segment_grid(self.n_steps, self.n_envs, batch_size)]
        if total % batch_size:
            grids.append(segment_grid(self.n_steps, self.n_envs, total % batch_size))
        columns = np.where(batch_of == batch_of[-1], grids[-1][1], grids[0][1])
        positions = step_in_segment * columns + segment
        keep = (1.0 - starts[layout.order]).astype(np.float32)
        index = torch.from_numpy(np.concatenate((layout.order, positions, layout.sequence_starts)))
        index = index.to(self.device)
        order, positions_t, segment_starts = index[:total], index[total : 2 * total], index[2 * total :]
        keep_t = torch.from_numpy(keep).to(self.device)
        first_starts = torch.from_numpy(starts[layout.sequence_starts]).to(self.device)
        flat_states = self.lstm_storage.reshape(4, total, *self.lstm_state_shape)
        seg_offset = 0
        n_batches = len(layout.n_seq)
        for batch, (n_seg, max_len) in enumerate(zip(layout.n_seq.tolist(), layout.max_len.tolist())):
            steps, n_columns = grids[-1 if batch == n_batches - 1 else 0]
            assert n_seg <= n_columns and max_len <= steps, "segment_grid is too small"
            rows = slice(batch * batch_size, min((batch + 1) * batch_size, total))
            idx = order[rows]
            first = segment_starts[seg_offset : seg_offset + n_seg]
            # (4, n_seg, n_layers, hidden) -> (4, n_layers, n_columns, hidden): padding columns start at zero
            states = flat_states.new_zeros((4, self.lstm_state_shape[0], n_columns, self.lstm_state_shape[1]))
            states[:, :, :n_seg] = flat_states[:, first].transpose(1, 2)
            episode_starts = first_starts.new_zeros(n_columns)
            episode_starts[:n_seg] = first_starts[seg_offset : seg_offset + n_seg]
            yield self._batch(
                idx, states, episode_starts, Segments(positions_t[rows], keep_t[rows], steps, n_columns)
            )
            seg_offset += n_seg

    def _batch(
        self, idx: torch.Tensor, states: torch.Tensor, starts: torch.Tensor, layout: Sequences | Segments
    ) -> RecurrentRolloutBatch:
        """The samples ``idx`` (flat positions in the rollout), with the LSTM states (4, layers, columns,
        hidden) and episode starts their sequences or segments begin from."""
        total = self.n_steps * self.n_envs
        return RecurrentRolloutBatch(
            _gather(self.observations, idx),
            self.actions.reshape(total, *self.actions.shape[2:])[idx],
            self.values.reshape(-1)[idx],
            self.log_probs.reshape(-1)[idx],
            self.advantages.reshape(-1)[idx],
            self.returns.reshape(-1)[idx],
            RNNStates((states[0], states[1]), (states[2], states[3])),
            starts,
            layout,
        )
