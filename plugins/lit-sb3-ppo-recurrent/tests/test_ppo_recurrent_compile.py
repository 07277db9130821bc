"""``RecurrentPPO(compile=True)``: each minibatch update as one compiled program, learning what eager learns.

The compiled update sees minibatches as segments of a fixed grid (``segment_minibatches``) and evaluates the
LSTMs from their weights (``lstm_steps``); both run eagerly here, against ``nn.LSTM`` and the sequence
minibatches, in seconds. The equivalence of whole compiled runs compiles with inductor (minutes of a loaded
CPU), so it is marked slow; inductor's caches go to a temporary folder, not the user's.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from lit_sb3 import RLEnvDataModule, RLTrainer
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_ppo_recurrent import RecurrentPPO
from lit_sb3_ppo_recurrent.buffers import segment_grid
from lit_sb3_ppo_recurrent.lstm_steps import lstm_steps
from lit_sb3_ppo_recurrent.policies import Segments

torch.set_num_threads(1)


def test_compile_must_be_true_false_or_auto() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        RecurrentPPO("MlpLstmPolicy", "CartPoleNoVel-v1", compile="yes")


def test_lstm_dropout_is_refused_when_compiled() -> None:
    model = RecurrentPPO(
        "MlpLstmPolicy",
        "CartPoleNoVel-v1",
        n_steps=16,
        batch_size=32,
        compile=True,
        policy_kwargs={"lstm_hidden_size": 8, "n_lstm_layers": 2, "lstm_kwargs": {"dropout": 0.1}},
    )
    with pytest.raises(ConfigurationError, match="dropout"):
        model.compiled_step()


@pytest.mark.parametrize("layers_and_bias", [(1, True), (2, False)], ids=["one-layer", "two-layers-no-bias"])
def test_lstm_steps_computes_what_nn_lstm_computes(layers_and_bias: tuple[int, bool]) -> None:
    layers, bias = layers_and_bias
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 5, num_layers=layers, bias=bias)
    inputs = torch.randn(7, 4, 3)
    state = (torch.randn(layers, 4, 5), torch.randn(layers, 4, 5))
    keep = torch.ones(7, 4)
    ours, (h, c) = lstm_steps(lstm, inputs, state, keep)
    theirs, (h_ref, c_ref) = lstm(inputs, state)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h, h_ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(c, c_ref, rtol=1e-5, atol=1e-6)
    # A reset at step 3 of column 1: from there on, that column is a fresh run from zeros.
    keep[3, 1] = 0.0
    ours, _ = lstm_steps(lstm, inputs, state, keep)
    fresh, _ = lstm(inputs[3:, 1:2], (torch.zeros(layers, 1, 5), torch.zeros(layers, 1, 5)))
    torch.testing.assert_close(ours[3:, 1:2], fresh, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours[:, [0, 2, 3]], theirs[:, [0, 2, 3]], rtol=1e-5, atol=1e-6)


def test_segment_grid_holds_every_window_of_the_walk() -> None:
    """Every window of ``size`` consecutive samples of the rotated walk fits the grid, and some fill it."""
    for n_steps, n_envs in ((16, 3), (5, 4), (1, 3), (32, 1)):
        total = n_steps * n_envs
        walk_step = np.tile(np.arange(n_steps), n_envs)  # the walk goes env by env: a new env at step 0
        for size in sorted({1, 2, 7, n_steps, n_steps + 1, total - 1, total} & set(range(1, total + 1))):
            steps, columns = segment_grid(n_steps, n_envs, size)
            widest = longest = 0
            for start in range(total):
                new_env = walk_step[(start + np.arange(size)) % total][1:] == 0
                cuts = 1 + np.count_nonzero(new_env)
                runs = np.diff(np.flatnonzero(np.r_[True, new_env, True]))
                widest, longest = max(widest, cuts), max(longest, int(runs.max()))
            assert (widest, longest) == (columns, steps), (n_steps, n_envs, size)


def _fitted(policy_kwargs: dict[str, Any]) -> RecurrentPPO:
    # Learning rate 0: the policy after training is the one that collected the rollout.
    model = RecurrentPPO(
        n_steps=40,
        batch_size=32,
        n_epochs=1,
        learning_rate=0.0,
        seed=0,
        policy_kwargs={"lstm_hidden_size": 8, "ortho_init": False, **policy_kwargs},
    )
    RLTrainer(max_steps=240, logger=False, enable_progress_bar=False, enable_checkpointing=False).fit(
        model, datamodule=RLEnvDataModule(train_env="CartPoleNoVel-v1", n_envs=3, seed=0)
    )
    return model


@pytest.mark.parametrize(
    "policy_kwargs",
    [
        {},
        {"shared_lstm": True, "enable_critic_lstm": False},
        {"enable_critic_lstm": False},
        {"n_lstm_layers": 2},
    ],
    ids=["critic-lstm", "shared-lstm", "no-critic-lstm", "two-layers"],
)
def test_segment_minibatches_replay_the_rollout_as_the_sequences_do(policy_kwargs: dict[str, Any]) -> None:
    """The same samples in the same order as ``sequence_minibatches`` (same rotation drawn), each minibatch
    size in one grid shape, and replayed through ``lstm_steps`` they give back the rollout's numbers."""
    model = _fitted(policy_kwargs)
    buffer = model.rollout
    assert buffer.episode_starts[1:].sum() >= 3  # episodes start inside the segments: resets are exercised
    for batch_size in (None, 37, 64):
        np.random.seed(1)
        sequences = list(buffer.sequence_minibatches(batch_size))
        np.random.seed(1)
        segments = list(buffer.segment_minibatches(batch_size))
        assert len(segments) == len(sequences)
        size = 120 if batch_size is None else batch_size
        for index, (batch, reference) in enumerate(zip(segments, sequences)):
            torch.testing.assert_close(batch.observations, reference.observations, rtol=0, atol=0)
            torch.testing.assert_close(batch.advantages, reference.advantages, rtol=0, atol=0)
            last = index == len(segments) - 1 and 120 % size
            grid = segment_grid(40, 3, 120 % size if last else size)
            assert isinstance(batch.sequences, Segments)
            assert (batch.sequences.steps, batch.sequences.columns) == grid
            assert batch.lstm_states.pi[0].shape == (model.policy.n_lstm_layers, grid[1], 8)
            with torch.no_grad():
                values, log_prob, _ = model.policy.evaluate_actions(
                    batch.observations,
                    batch.actions,
                    batch.lstm_states,
                    batch.episode_starts,
                    batch.sequences,
                )
            torch.testing.assert_close(log_prob, batch.old_log_prob, rtol=0, atol=1e-5)
            torch.testing.assert_close(values, batch.old_values, rtol=0, atol=1e-5)


def _trained(compiled: bool, **overrides: Any) -> RecurrentPPO:
    # Built and trained one after the other: both start from the same global RNG state.
    model = RecurrentPPO(
        "MlpLstmPolicy",
        "CartPoleNoVel-v1",
        n_steps=16,
        batch_size=24,  # 32 = 24 + a truncated minibatch of 8: two grids, two programs
        n_epochs=2,
        learning_rate="lin_1e-3",
        clip_range="lin_0.2",
        ent_coef=0.01,
        seed=0,
        device="cpu",
        compile=compiled,
        policy_kwargs={"lstm_hidden_size": 8, **overrides.pop("policy_kwargs", {})},
        **overrides,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.learn(128, n_envs=2)
    return model


@pytest.mark.slow
@pytest.mark.parametrize(
    "overrides",
    [{}, {"target_kl": 1e-5, "policy_kwargs": {"shared_lstm": True, "enable_critic_lstm": False}}],
    ids=["critic-lstm", "shared-lstm-target-kl"],
)
def test_a_compiled_recurrent_ppo_learns_the_weights_the_eager_one_learns(
    overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same seed, 4 rollouts of 2 envs (16 minibatch updates over episodes that end inside minibatches;
    with target_kl, epochs cut short): the same weights, Adam state, metrics and step count within float
    rounding, so the same rollouts too."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _trained(False, **overrides)
    compiled = _trained(True, **overrides)
    assert compiled.n_updates == eager.n_updates
    assert compiled.trainer.global_step == eager.trainer.global_step
    if "target_kl" in overrides:  # the early stop must have skipped updates, or this case tests nothing more
        assert eager.trainer.global_step < 4 * 2 * 2
    else:
        assert eager.trainer.global_step == 16
    assert eager.rollout.episode_starts[1:].sum() >= 1
    torch.testing.assert_close(compiled.rollout.observations, eager.rollout.observations)
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    ours_state = compiled.optimizers().optimizer.state_dict()["state"]
    theirs_state = eager.optimizers().optimizer.state_dict()["state"]
    # Moments on the scale of the largest one of any parameter: a ratio that rounds to the other side of the
    # clip range flips one sample's share of a gradient (1/24 of a minibatch), and entries far below the scale
    # (near-cancelling gradient sums) carry the kernels' rounding; a wrong update would be off by its own size.
    scale = max(float(state["exp_avg_sq"].abs().max()) for state in theirs_state.values())
    first = max(float(state["exp_avg"].abs().max()) for state in theirs_state.values())
    for index, state in theirs_state.items():
        torch.testing.assert_close(
            ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-3 * first
        )
        torch.testing.assert_close(
            ours_state[index]["exp_avg_sq"], state["exp_avg_sq"], rtol=1e-3, atol=1e-4 * scale
        )
        assert float(ours_state[index]["step"]) == float(state["step"])
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            tolerance = 0.05 if key == "train/clip_fraction" else 1e-6
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-4, abs=tolerance), key
