"""LSTM policies and sequence minibatches match sb3-contrib: weights, step outputs, and gradients through time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3 import RLEnvDataModule, RLTrainer
from lit_sb3_core.sdk import CombinedExtractor, NatureCNN
from lit_sb3_ppo_recurrent import RecurrentPPO
from lit_sb3_ppo_recurrent.buffers import sequence_layout
from lit_sb3_ppo_recurrent.policies import (
    CnnLstmPolicy,
    MlpLstmPolicy,
    MultiInputLstmPolicy,
    RecurrentActorCriticPolicy,
    RNNStates,
    Sequences,
)

torch.set_num_threads(1)

VEC = spaces.Box(-1, 1, (3,), np.float32)
VARIANTS = [
    (spaces.Discrete(3), {}),
    (spaces.Box(-2, 2, (2,), np.float32), {"shared_lstm": True, "enable_critic_lstm": False}),
    (spaces.Discrete(2), {"enable_critic_lstm": False, "n_lstm_layers": 2}),
    (spaces.MultiDiscrete([2, 3]), {"share_features_extractor": False, "net_arch": [16]}),
    (spaces.Box(-2, 2, (2,), np.float32), {"use_sde": True}),
]
IDS = ["critic-lstm", "shared-lstm", "linear-critic-2-layers", "separate-extractors", "gsde"]


def _reference(action_space: spaces.Space, kwargs: dict[str, Any]) -> Any:
    policies = pytest.importorskip("sb3_contrib.common.recurrent.policies")
    torch.manual_seed(0)
    return policies.RecurrentActorCriticPolicy(
        VEC, action_space, lambda _: 3e-4, lstm_hidden_size=16, **kwargs
    )


def _ours(action_space: spaces.Space, kwargs: dict[str, Any]) -> RecurrentActorCriticPolicy:
    torch.manual_seed(0)
    return MlpLstmPolicy(VEC, action_space, lstm_hidden_size=16, **kwargs)


def _random_states(policy: RecurrentActorCriticPolicy, n: int) -> RNNStates:
    shape = (policy.n_lstm_layers, n, policy.lstm_hidden_size)
    return RNNStates((torch.randn(shape), torch.randn(shape)), (torch.randn(shape), torch.randn(shape)))


@pytest.mark.parametrize(("action_space", "kwargs"), VARIANTS, ids=IDS)
def test_same_seed_same_weights_and_step_outputs_as_sb3_contrib(
    action_space: spaces.Space, kwargs: dict
) -> None:
    reference, policy = _reference(action_space, kwargs), _ours(action_space, kwargs)
    theirs = {k: v for k, v in reference.state_dict().items() if not k.startswith("pi_features_extractor")}
    assert set(policy.state_dict()) == set(theirs)
    for key, value in theirs.items():
        assert torch.equal(policy.state_dict()[key], value), key
    if kwargs.get("use_sde"):
        torch.manual_seed(1)
        reference.reset_noise(2)
        torch.manual_seed(1)
        policy.reset_noise(2)
    # Two envs, six steps, with an episode start in the middle for env 1.
    obs = torch.randn(6, 2, 3)
    starts = torch.zeros(6, 2)
    starts[0] = 1.0
    starts[3, 1] = 1.0
    states = _random_states(policy, 2)
    ref_states = type(reference.forward(obs[0], states, starts[0])[3])(states.pi, states.vf)
    for t in range(6):
        with torch.no_grad():
            _, values, log_prob, states = policy(obs[t], states, starts[t], deterministic=True)
            _, ref_values, ref_log_prob, ref_states = reference(
                obs[t], ref_states, starts[t], deterministic=True
            )
            torch.testing.assert_close(values, ref_values.squeeze(-1))
            torch.testing.assert_close(log_prob, ref_log_prob)
            for ours_part, ref_part in zip((*states.pi, *states.vf), (*ref_states.pi, *ref_states.vf)):
                torch.testing.assert_close(ours_part, ref_part)
            torch.testing.assert_close(
                policy.predict_values(obs[t], states.vf, starts[t]),
                reference.predict_values(obs[t], ref_states.vf, starts[t]).squeeze(-1),
            )


def test_sequence_layout_cuts_where_sb3_contrib_cuts() -> None:
    buffers = pytest.importorskip("sb3_contrib.common.recurrent.buffers")
    rng = np.random.default_rng(0)
    n_steps, n_envs, batch_size = 23, 3, 16
    episode_starts = (rng.random((n_steps, n_envs)) < 0.15).astype(np.float32)
    env_major = episode_starts.T.reshape(-1)  # sb3-contrib flattens env by env
    env_change = np.zeros((n_envs, n_steps))
    env_change[:, 0] = 1.0
    env_change = env_change.reshape(-1)
    for split in (0, 5, 40, n_steps * n_envs - 1):
        layout = sequence_layout(episode_starts, batch_size, split)
        total, seq_offset = n_steps * n_envs, 0
        assert sorted(layout.order.tolist()) == list(range(total))
        for batch, n_seq in enumerate(layout.n_seq.tolist()):
            rows = slice(batch * batch_size, min((batch + 1) * batch_size, total))
            flat = layout.order[rows]
            inds = (flat % n_envs) * n_steps + flat // n_envs  # the same samples in sb3-contrib's numbering
            seq_starts, pad, _ = buffers.create_sequencers(env_major[inds], env_change[inds], "cpu")
            assert n_seq == len(seq_starts)
            np.testing.assert_array_equal(
                layout.sequence_starts[seq_offset : seq_offset + n_seq], flat[seq_starts]
            )
            padded = pad(np.arange(len(inds), dtype=np.float32) + 1)  # (n_seq, max_len), 0 = padding
            assert layout.max_len[batch] == padded.shape[1]
            grid = np.zeros(padded.shape[1] * n_seq)
            grid[layout.positions[rows]] = np.arange(len(inds)) + 1
            np.testing.assert_array_equal(grid.reshape(padded.shape[1], n_seq).T, padded.numpy())
            seq_offset += n_seq


@pytest.mark.parametrize(("action_space", "kwargs"), VARIANTS[:4], ids=IDS[:4])
def test_minibatch_outputs_and_gradients_match_sb3_contrib(action_space: spaces.Space, kwargs: dict) -> None:
    """The padded single-call LSTM gives sb3-contrib's per-step loop results, gradients through time included."""
    buffers = pytest.importorskip("sb3_contrib.common.recurrent.buffers")
    contrib_states = pytest.importorskip("sb3_contrib.common.recurrent.type_aliases").RNNStates
    reference, policy = _reference(action_space, kwargs), _ours(action_space, kwargs)
    n_steps, n_envs, batch_size = 20, 3, 25
    rng = np.random.default_rng(1)
    obs = torch.randn(n_steps, n_envs, 3)
    starts = torch.as_tensor((rng.random((n_steps, n_envs)) < 0.2).astype(np.float32))
    # Collect "rollout" states step by step with our policy, as RecurrentPPO does.
    states, stored, actions = _random_states(policy, n_envs), [], []
    with torch.no_grad():
        for t in range(n_steps):
            stored.append(states)
            step_actions, _, _, states = policy(obs[t], states, starts[t])
            actions.append(step_actions)
    hidden_shape = (n_steps, policy.n_lstm_layers, n_envs, 16)
    ref_buffer = buffers.RecurrentRolloutBuffer(
        n_steps, VEC, action_space, hidden_shape, "cpu", n_envs=n_envs
    )
    for t in range(n_steps):
        ref_buffer.add(
            obs[t].numpy(), actions[t].numpy().reshape(n_envs, -1), np.zeros(n_envs), starts[t].numpy(),
            torch.zeros(n_envs), torch.zeros(n_envs), lstm_states=contrib_states(*stored[t]),
        )  # fmt: skip
    next(ref_buffer.get(batch_size))  # sb3-contrib flattens its storage on the first call
    env_change = np.zeros((n_envs, n_steps))
    env_change[:, 0] = 1.0
    layout = sequence_layout(starts.numpy(), batch_size, split=7)
    flat_obs, flat_actions = obs.reshape(n_steps * n_envs, 3), torch.stack(actions).flatten(0, 1)
    flat_states = [torch.stack([s.pi[0] if i == 0 else s.pi[1] if i == 1 else s.vf[i - 2] for s in stored])
                   for i in range(4)]  # fmt: skip
    seq_offset = 0
    for batch, (n_seq, max_len) in enumerate(zip(layout.n_seq.tolist(), layout.max_len.tolist())):
        rows = slice(batch * batch_size, (batch + 1) * batch_size)
        flat = torch.as_tensor(layout.order[rows])
        first = layout.sequence_starts[seq_offset : seq_offset + n_seq]
        seq_offset += n_seq
        inds = (layout.order[rows] % n_envs) * n_steps + layout.order[rows] // n_envs
        sample = ref_buffer._get_samples(inds, env_change.reshape(-1, 1))
        mask = sample.mask > 0
        # (n_steps, n_layers, n_envs, hidden) -> (n_layers, n_seq, hidden) at each sequence's first step
        t_idx, e_idx = torch.as_tensor(first // n_envs), torch.as_tensor(first % n_envs)
        init = [s[t_idx, :, e_idx].transpose(0, 1).contiguous() for s in flat_states]
        values, log_prob, entropy = policy.evaluate_actions(
            flat_obs[flat], flat_actions[flat], RNNStates((init[0], init[1]), (init[2], init[3])),
            starts.reshape(-1)[torch.as_tensor(first)],
            Sequences(torch.as_tensor(layout.positions[rows]), n_seq, max_len),
        )  # fmt: skip
        ref_actions = (
            sample.actions.long().flatten() if isinstance(action_space, spaces.Discrete) else sample.actions
        )
        ref_values, ref_log_prob, ref_entropy = reference.evaluate_actions(
            sample.observations, ref_actions, sample.lstm_states, sample.episode_starts
        )
        torch.testing.assert_close(values, ref_values.flatten()[mask])
        torch.testing.assert_close(log_prob, ref_log_prob[mask])
        weights = torch.linspace(-1.0, 1.0, len(values))
        loss = (
            (weights * log_prob).mean()
            + (weights * values).pow(2).mean()
            - (entropy if entropy is not None else log_prob).mean()
        )
        ref_entropy = ref_entropy if ref_entropy is not None else ref_log_prob
        ref_loss = (
            (weights * ref_log_prob[mask]).mean()
            + (weights * ref_values.flatten()[mask]).pow(2).mean()
            - ref_entropy[mask].mean()
        )
        policy.zero_grad()
        reference.zero_grad()
        loss.backward()
        ref_loss.backward()
        ref_params = dict(reference.named_parameters())
        for name, parameter in policy.named_parameters():
            if parameter.grad is None:
                assert ref_params[name].grad is None or not ref_params[name].grad.any(), name
            else:
                torch.testing.assert_close(
                    parameter.grad, ref_params[name].grad, rtol=1e-4, atol=1e-6, msg=name
                )


def test_cnn_and_multi_input_lstm_policies_build_on_the_core_extractors() -> None:
    image = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    cnn = CnnLstmPolicy(image, spaces.Discrete(2), lstm_hidden_size=32)
    assert isinstance(cnn.features_extractor, NatureCNN) and cnn.lstm_actor.input_size == 512
    assert cnn.mlp_extractor.latent_dim_pi == 32  # no hidden layers after the CNN, as SB3
    multi = MultiInputLstmPolicy(
        spaces.Dict({"image": image, "vec": VEC}), spaces.Discrete(2), lstm_hidden_size=32
    )
    assert isinstance(multi.features_extractor, CombinedExtractor) and multi.lstm_actor.input_size == 256 + 3
    obs = {"image": torch.zeros(4, 36, 36, 3, dtype=torch.uint8), "vec": torch.zeros(4, 3)}
    actions, values, _, states = multi(obs, multi.initial_state(4), torch.ones(4))
    assert actions.shape == (4,) and values.shape == (4,) and states.pi[0].shape == (1, 4, 32)


def test_training_learns_with_a_shared_lstm_and_uneven_minibatches() -> None:
    model = RecurrentPPO(
        env="CartPoleNoVel-v1", n_steps=30, batch_size=47, n_epochs=2, seed=0,
        policy_kwargs={"lstm_hidden_size": 8, "shared_lstm": True, "enable_critic_lstm": False},
    )  # fmt: skip
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    RLTrainer(max_steps=120, logger=False, enable_progress_bar=False, enable_checkpointing=False).fit(
        model, datamodule=RLEnvDataModule(train_env="CartPoleNoVel-v1", n_envs=2, seed=0)
    )
    after = model.policy.state_dict()
    assert not torch.equal(before["lstm_actor.weight_hh_l0"], after["lstm_actor.weight_hh_l0"])
    assert model.n_updates == 2 * 2
