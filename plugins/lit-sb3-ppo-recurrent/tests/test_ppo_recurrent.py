"""RecurrentPPO behaves like sb3-contrib's: same defaults and metrics, LSTM states carried and replayed exactly."""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from lightning.pytorch.callbacks import Callback

import lit_sb3
from lit_sb3 import RLEnvDataModule, RLTrainer, evaluate_policy, make_algo
from lit_sb3_core import tuned_hyperparameters
from lit_sb3_core.errors import ConfigurationError, ConflictingOptionsError, UnknownNameError
from lit_sb3_ppo_recurrent import RecurrentPPO
from lit_sb3_ppo_recurrent.hyperparams import TUNED
from lit_sb3_ppo_recurrent.policies import (
    RecurrentActorCriticCnnPolicy,
    RecurrentActorCriticPolicy,
    RecurrentMultiInputActorCriticPolicy,
)

torch.set_num_threads(1)

TINY = {"n_steps": 16, "batch_size": 32, "n_epochs": 2, "policy_kwargs": {"lstm_hidden_size": 8}, "seed": 0}

SB3_CONTRIB_DEFAULTS = {
    "learning_rate": 3e-4, "n_steps": 128, "batch_size": 128, "n_epochs": 10, "gamma": 0.99,
    "gae_lambda": 0.95, "clip_range": 0.2, "clip_range_vf": None, "normalize_advantage": True,
    "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5, "use_sde": False, "sde_sample_freq": -1,
    "target_kl": None, "stats_window_size": 100,
}  # fmt: skip


def _fit(
    model: RecurrentPPO, steps: int, callbacks: list[Callback] | None = None, **data: Any
) -> RecurrentPPO:
    trainer = RLTrainer(
        max_steps=steps,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        callbacks=callbacks,
    )
    trainer.fit(model, datamodule=RLEnvDataModule(**{"train_env": "CartPoleNoVel-v1", "seed": 0, **data}))
    return model


# defaults, registry, configuration --------------------------------------------------------------
def test_defaults_are_sb3_contribs() -> None:
    ours = {k: p.default for k, p in inspect.signature(RecurrentPPO.__init__).parameters.items()}
    for key, value in SB3_CONTRIB_DEFAULTS.items():
        assert ours[key] == value, key
    assert ours["policy"] == "MlpLstmPolicy"
    policy = {
        k: p.default for k, p in inspect.signature(RecurrentActorCriticPolicy.__init__).parameters.items()
    }
    assert (policy["lstm_hidden_size"], policy["n_lstm_layers"]) == (256, 1)
    assert (policy["shared_lstm"], policy["enable_critic_lstm"]) == (False, True)


def test_defaults_match_the_installed_sb3_contrib() -> None:
    contrib = pytest.importorskip("sb3_contrib")
    theirs = {k: p.default for k, p in inspect.signature(contrib.RecurrentPPO.__init__).parameters.items()}
    ours = {k: p.default for k, p in inspect.signature(RecurrentPPO.__init__).parameters.items()}
    assert {k: ours[k] for k in SB3_CONTRIB_DEFAULTS} == {k: theirs[k] for k in SB3_CONTRIB_DEFAULTS}
    policy_theirs = inspect.signature(
        contrib.common.recurrent.policies.RecurrentActorCriticPolicy.__init__
    ).parameters
    policy_ours = inspect.signature(RecurrentActorCriticPolicy.__init__).parameters
    for key in ("lstm_hidden_size", "n_lstm_layers", "shared_lstm", "enable_critic_lstm", "lstm_kwargs"):
        assert policy_ours[key].default == policy_theirs[key].default, key


def test_registry_alias_and_facade_give_the_same_class() -> None:
    assert lit_sb3.RecurrentPPO is RecurrentPPO
    assert type(make_algo("ppo_lstm", n_steps=16)) is RecurrentPPO
    assert type(make_algo("RECURRENT_PPO", n_steps=16)) is RecurrentPPO
    assert set(RecurrentPPO.policy_aliases) == {"MlpLstmPolicy", "CnnLstmPolicy", "MultiInputLstmPolicy"}
    assert RecurrentPPO.policy_aliases["CnnLstmPolicy"] is RecurrentActorCriticCnnPolicy
    assert RecurrentPPO.policy_aliases["MultiInputLstmPolicy"] is RecurrentMultiInputActorCriticPolicy


def test_tuned_hyperparameters_split_for_the_registered_env() -> None:
    assert RecurrentPPO.tuned_hyperparameters is TUNED
    split = tuned_hyperparameters("recurrent_ppo", "CartPoleNoVel-v1")
    assert split["data"] == {"n_envs": 8, "normalize": "observation"}
    assert split["trainer"] == {"max_steps": 100_000}
    assert split["model"]["n_steps"] == 32 and split["model"]["learning_rate"] == "lin_0.001"
    assert split["model"]["policy_kwargs"]["lstm_hidden_size"] == 64
    for env_id, entry in TUNED.items():
        if "NoVel" not in env_id:  # rl-zoo3's other entries are checked by the core's zoo test
            continue
        assert (
            gym.make(env_id).observation_space.shape[0]
            < gym.make(env_id.replace("NoVel", "")).observation_space.shape[0]
        )
        RecurrentPPO(**tuned_hyperparameters(RecurrentPPO, env_id)["model"], env=env_id)
        assert entry["n_timesteps"] > 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [({"batch_size": 1}, ConfigurationError, "batch_size"),
     ({"n_epochs": 0}, ConfigurationError, "n_epochs"),
     ({"target_kl": -1.0}, ConfigurationError, "target_kl"),
     ({"clip_range_vf": 0.0}, ConfigurationError, "clip_range_vf"),
     ({"n_steps": 0}, ConfigurationError, "n_steps"),
     ({"policy": "MlpPolicy"}, UnknownNameError, "MlpLstmPolicy"),
     ({"policy": "lit_sb3_core.sdk:ActorCriticPolicy"}, ConfigurationError, "recurrent policy"),
     ({"policy_kwargs": {"shared_lstm": True}}, ConflictingOptionsError, "enable_critic_lstm=False"),
     ({"policy_kwargs": {"shared_lstm": True, "enable_critic_lstm": False, "share_features_extractor": False}},
      ConflictingOptionsError, "share_features_extractor"),
     ({"policy_kwargs": {"lstm_kwargs": {"batch_first": True}}}, ConfigurationError, "batch_first"),
     ({"policy_kwargs": {"lstm_hidden_size": 0}}, ConfigurationError, "lstm_hidden_size"),
     ({"policy_kwargs": {"lstm_size": 8}}, ConfigurationError, "lstm_hidden_size")],
)  # fmt: skip
def test_bad_configuration_is_explained(kwargs: dict, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        RecurrentPPO(env="CartPole-v1", **kwargs)
    if error is ConflictingOptionsError:
        with pytest.raises(AssertionError):  # the type sb3-contrib asserts these with
            RecurrentPPO(env="CartPole-v1", **kwargs)


# rollouts and training --------------------------------------------------------------------------
class _RecordSteps(gym.Wrapper):
    """Keeps what every ``step`` returns, before the vector env resets: final observations included."""

    instances: ClassVar[list[_RecordSteps]] = []

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps: list[tuple[np.ndarray, bool, bool]] = []
        _RecordSteps.instances.append(self)

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        self.steps.append((np.asarray(result[0]), bool(result[2]), bool(result[3])))
        return result


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
def test_training_sequences_replay_the_rollout_exactly(policy_kwargs: dict[str, Any]) -> None:
    # Learning rate 0: the policy after training is the one that collected the rollout, so replaying the
    # stored sequences from their stored LSTM states must give back the rollout's log-probs and values.
    kwargs = {**TINY, "n_steps": 40, "n_epochs": 1, "learning_rate": 0.0}
    # ortho_init=False: PyTorch's default init of the action head, so log-probs depend visibly on the state.
    model = RecurrentPPO(
        **{**kwargs, "policy_kwargs": {"lstm_hidden_size": 8, "ortho_init": False, **policy_kwargs}}
    )
    _fit(model, 240, n_envs=3)
    buffer = model.rollout
    assert buffer.episode_starts[1:].sum() >= 3  # episodes end inside the rollout: sequences are cut
    for batch_size in (None, 37, 64):
        seen = 0
        for batch in buffer.sequence_minibatches(batch_size):
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
            seen += len(log_prob)
        assert seen == 120
    # The stored states matter: replaying every sequence from zeros does not reproduce the rollout.
    batch = next(buffer.sequence_minibatches(None))
    zeros = type(batch.lstm_states)(*(tuple(torch.zeros_like(s) for s in pair) for pair in batch.lstm_states))
    with torch.no_grad():
        _, log_prob, _ = model.policy.evaluate_actions(
            batch.observations, batch.actions, zeros, batch.episode_starts, batch.sequences
        )
    assert (log_prob - batch.old_log_prob).abs().max() > 1e-3


def test_lstm_state_carries_across_iterations() -> None:
    carried: list[torch.Tensor] = []
    stored: list[torch.Tensor] = []

    class Watch(Callback):
        def on_train_batch_end(self, trainer: Any, model: Any, *args: Any) -> None:
            # The states the next rollout's first step starts from, and those this rollout's first step used.
            carried.append(
                torch.stack([*model._last_lstm_states.pi, *model._last_lstm_states.vf]).transpose(1, 2)
            )
            stored.append(model.rollout.lstm_storage[:, 0].clone())

    model = RecurrentPPO(**TINY)
    _fit(model, 3 * 16 * 2, callbacks=[Watch()], n_envs=2)
    assert len(carried) == 3
    assert torch.count_nonzero(stored[0]) == 0  # fresh episodes at the start of fit
    for previous, current in zip(carried, stored[1:]):
        assert torch.count_nonzero(current) > 0
        torch.testing.assert_close(current, previous)


def test_learn_without_resetting_continues_the_episodes_and_their_memory() -> None:
    model = RecurrentPPO(**TINY).learn(32, env="CartPoleNoVel-v1", n_envs=2)
    carried = torch.stack([*model._last_lstm_states.pi, *model._last_lstm_states.vf]).transpose(1, 2).clone()
    assert torch.count_nonzero(carried) > 0
    model.learn(32, reset_num_timesteps=False)
    torch.testing.assert_close(model.rollout.lstm_storage[:, 0], carried)
    model.learn(16)  # one iteration of a reset run: fresh episodes, empty memory
    assert torch.count_nonzero(model.rollout.lstm_storage[:, 0]) == 0


def test_truncated_episodes_bootstrap_from_the_final_observation_with_the_reached_state() -> None:
    _RecordSteps.instances.clear()
    gamma, n_steps = 0.9, 12
    model = RecurrentPPO(**{**TINY, "n_steps": n_steps, "n_epochs": 1, "learning_rate": 0.0, "gamma": gamma})
    # Episodes truncated after 5 steps (CartPole rarely falls that fast): several truncations per env.
    # Two iterations, so the checked rollout also starts from carried states.
    _fit(model, 2 * n_steps * 2, env_kwargs={"max_episode_steps": 5}, wrappers=[_RecordSteps], n_envs=2)
    buffer, policy = model.rollout, model.policy
    recorders = _RecordSteps.instances[-2:]
    checked = 0
    for env in range(2):
        for step in range(n_steps):
            _, terminated, truncated = recorders[env].steps[n_steps + step]
            if terminated or not truncated:
                assert buffer.rewards[step, env] == 1.0  # no bootstrap
                continue
            # The critic's state after this step: replay it from the state stored at its start.
            state = tuple(buffer.lstm_storage[i, step, env][:, None].contiguous() for i in (2, 3))
            start = torch.tensor([buffer.episode_starts[step, env]])
            obs = buffer.observations[step, env][None]
            with torch.no_grad():
                _, reached = policy._unroll(policy.lstm_critic, policy._vf_features(obs), state, start, None)
                final_obs = torch.as_tensor(recorders[env].steps[n_steps + step][0])[None]
                expected = 1.0 + gamma * policy.predict_values(final_obs, reached, torch.zeros(1)).item()
                unreached = 1.0 + gamma * policy.predict_values(final_obs, state, torch.zeros(1)).item()
            assert buffer.rewards[step, env] == pytest.approx(expected, abs=1e-5)
            assert abs(expected - unreached) > 1e-4  # the check can tell the right state from a wrong one
            checked += 1
    assert checked >= 2


def test_metrics_are_sb3_contribs() -> None:
    model = RecurrentPPO(**TINY).learn(64, env="CartPoleNoVel-v1", n_envs=2)
    expected = {
        "train/entropy_loss", "train/policy_gradient_loss", "train/value_loss", "train/approx_kl",
        "train/clip_fraction", "train/loss", "train/explained_variance", "train/n_updates", "train/clip_range",
        "train/learning_rate", "time/fps", "time/iterations", "time/time_elapsed", "time/total_timesteps",
    }  # fmt: skip
    assert expected <= set(model.last_metrics)
    assert model.last_metrics["train/n_updates"] == 2 * model.n_epochs
    assert all(np.isfinite(v) for k, v in model.last_metrics.items() if k.startswith("train/"))


def test_continuous_actions_with_gsde_and_target_kl() -> None:
    settings = {
        **TINY,
        "n_epochs": 5,
        "use_sde": True,
        "sde_sample_freq": 4,
        "target_kl": 1e-9,
        "learning_rate": 1e-2,
    }
    model = RecurrentPPO(**settings)
    model.learn(64, env="Pendulum-v1", n_envs=2)
    assert "train/std" in model.last_metrics
    assert model.n_updates < 2 * model.n_epochs  # target_kl stopped the epochs early
    action, state = model.predict(np.zeros(3, dtype=np.float32), deterministic=True)
    assert action.shape == (1,) and -2.0 <= action[0] <= 2.0 and state[0].shape == (1, 1, 8)


# predict ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained() -> RecurrentPPO:
    torch.set_num_threads(1)
    return RecurrentPPO(**TINY).learn(64, env="CartPoleNoVel-v1")


def test_predict_single_and_batched_shapes(trained: RecurrentPPO) -> None:
    action, (hidden, cell) = trained.predict(np.array([0.01, -0.02], dtype=np.float32))
    assert np.shape(action) == () and trained.action_space.contains(int(action))
    assert hidden.shape == cell.shape == (1, 1, 8)
    obs = np.random.default_rng(0).normal(0, 0.05, (3, 2)).astype(np.float32)
    actions, (hidden, cell) = trained.predict(obs, deterministic=True)
    assert actions.shape == (3,) and hidden.shape == cell.shape == (1, 3, 8)
    actions2, state2 = trained.predict(obs, state=(hidden, cell), episode_start=np.zeros(3, dtype=bool))
    assert actions2.shape == (3,) and state2[0].shape == (1, 3, 8)


def test_predict_state_carries_and_episode_start_resets_it(trained: RecurrentPPO) -> None:
    obs = np.random.default_rng(1).normal(0, 0.05, (2, 2)).astype(np.float32)
    _, fresh = trained.predict(obs, deterministic=True)
    _, carried = trained.predict(obs, state=fresh, episode_start=np.array([False, False]), deterministic=True)
    assert not np.allclose(carried[0], fresh[0])  # the state is used
    _, reset = trained.predict(obs, state=carried, episode_start=np.array([True, False]), deterministic=True)
    _, continued = trained.predict(
        obs, state=carried, episode_start=np.array([False, False]), deterministic=True
    )
    np.testing.assert_allclose(reset[0][:, 0], fresh[0][:, 0], atol=1e-6)  # env 0 starts over
    np.testing.assert_allclose(reset[1][:, 1], continued[1][:, 1], atol=1e-6)  # env 1 carries on
    assert not np.allclose(reset[0][:, 0], continued[0][:, 0])


def test_predict_refuses_states_that_do_not_fit(trained: RecurrentPPO) -> None:
    obs = np.zeros((2, 2), dtype=np.float32)
    _, state = trained.predict(obs)
    with pytest.raises(ValueError, match=r"\(n_lstm_layers, n_envs, lstm_hidden_size\) = \(1, 3, 8\)"):
        trained.predict(np.zeros((3, 2), dtype=np.float32), state=state)
    with pytest.raises(ValueError, match="hidden, cell"):
        trained.predict(obs, state=state[0])
    with pytest.raises(ValueError, match="one per env"):
        trained.predict(obs, state=state, episode_start=np.array([True]))


def test_evaluate_policy_and_trainer_predict_use_the_states(trained: RecurrentPPO) -> None:
    calls: list[tuple[Any, Any]] = []
    original = trained.predict

    def spy(obs: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False) -> Any:
        calls.append((state, episode_start))
        return original(obs, state, episode_start, deterministic)

    trained.predict = spy  # type: ignore[method-assign]
    try:
        rewards, lengths = evaluate_policy(
            trained, "CartPoleNoVel-v1", n_eval_episodes=2, return_episode_rewards=True
        )
    finally:
        del trained.predict
    assert len(rewards) == 2 and sum(lengths) == len(calls)
    assert calls[0][0] is None and all(state is not None for state, _ in calls[1:])
    assert calls[0][1].all() and not calls[1][1].any()
    trainer = RLTrainer(max_steps=1, logger=False, enable_progress_bar=False)
    actions, (hidden, _) = trainer.predict(trained, observation=np.zeros((4, 2), np.float32))
    assert actions.shape == (4,) and hidden.shape == (1, 4, 8)


# other policies ---------------------------------------------------------------------------------
class _SpaceEnv(gym.Env):
    """Random observations of any space, 10-step episodes; checks every action against the action space."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        self.observation_space, self.action_space, self.steps = observation_space, action_space, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.steps = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        assert self.action_space.contains(action), f"{action!r} is not in {self.action_space}"
        self.steps += 1
        return (
            self.observation_space.sample(),
            float(np.asarray(action).reshape(-1)[0]),
            False,
            self.steps >= 10,
            {},
        )


IMAGE = spaces.Box(0, 255, (36, 36, 3), np.uint8)


@pytest.mark.parametrize(
    ("policy", "observation_space", "action_space"),
    [("CnnLstmPolicy", IMAGE, spaces.Discrete(2)),
     ("MultiInputLstmPolicy", spaces.Dict({"image": IMAGE, "vec": spaces.Box(-1, 1, (3,), np.float32)}),
      spaces.MultiDiscrete([2, 3])),
     ("MlpLstmPolicy", spaces.Box(-1, 1, (3,), np.float32), spaces.MultiBinary(2))],
)  # fmt: skip
def test_cnn_and_multi_input_lstm_policies_train_and_predict(
    policy: str, observation_space: spaces.Space, action_space: spaces.Space
) -> None:
    env = functools.partial(_SpaceEnv, observation_space, action_space)
    model = RecurrentPPO(policy, env=env, **{**TINY, "policy_kwargs": {"lstm_hidden_size": 8}})
    model.learn(64, n_envs=2)
    assert np.isfinite(model.last_metrics["train/loss"])
    observation_space.seed(0)
    obs = observation_space.sample()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        action, state = model.predict(obs, episode_start=np.array([True]))
    assert action_space.contains(action) and state[0].shape == (1, 1, 8)


def test_sb3_contrib_own_loop_carries_the_lstm_states_across_rollouts() -> None:
    model = RecurrentPPO("MlpLstmPolicy", "CartPole-v1", n_steps=8, batch_size=8, seed=0, device="cpu")
    _, callback = model._setup_learn(16)
    initial = model._last_lstm_states
    assert model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 8)
    after_one = model._last_lstm_states
    assert model.num_timesteps == 8 and not torch.equal(after_one.pi[0], initial.pi[0])
    model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 8)
    # The second rollout starts from the states the first one ended with.
    stored = model.rollout.lstm_storage[0, 0].transpose(0, 1)  # the actor's h at step 0, (n_layers, envs, h)
    torch.testing.assert_close(stored, after_one.pi[0])
