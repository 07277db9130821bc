"""OffPolicyAlgorithm: SB3's collect/train schedule, batching onto Lightning, exploration, storage, logging.

A minimal algorithm (``Probe``) exercises the base class on toy environments whose transitions are easy
to predict, so each check compares against what SB3's loop does step by step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import Logger

from lit_sb3_core import RLEnvDataModule, RLTrainer
from lit_sb3_core.data.replay_buffer import ReplayBuffer
from lit_sb3_core.errors import ConfigurationError, UnknownNameError
from lit_sb3_core.nets.off_policy_policies import OffPolicyPolicy, polyak_update, update_target
from lit_sb3_core.sdk.off_policy import OffPolicyAlgorithm, clip_grad_norm, parse_train_freq


class Ramp(gym.Env):
    """Observation ``[t, last action]``; truncated after ``horizon`` steps; Box actions in [0, 4]."""

    def __init__(self, horizon: int = 5, discrete: bool = False) -> None:
        self.horizon = horizon
        self.observation_space = spaces.Box(-100.0, 100.0, shape=(2,), dtype=np.float32)
        self.action_space = (
            spaces.Discrete(3) if discrete else spaces.Box(0.0, 4.0, shape=(1,), dtype=np.float32)
        )
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, 0.0], dtype=np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        value = float(np.asarray(action).reshape(-1)[0])
        return np.array([self.t, value], dtype=np.float32), 1.0, False, self.t >= self.horizon, {}


class ProbePolicy(OffPolicyPolicy):
    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        super().__init__(observation_space, action_space, squash_output=True)
        self.net = torch.nn.Linear(2, self.n_actions)

    def forward(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        out = self.net(self.preprocess(obs) / 10)
        return torch.tanh(out) if self._box_actions else out.argmax(dim=1)


class Probe(OffPolicyAlgorithm):
    algo_name: ClassVar[str] = ""
    policy_aliases: ClassVar[dict[str, Any]] = {"MlpPolicy": ProbePolicy}

    def __init__(self, **kwargs: Any) -> None:
        self.train_calls: list[tuple[int, int]] = []
        super().__init__(**kwargs)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.make_optimizer(self.require_policy().parameters())

    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        self.train_calls.append((self.num_timesteps, gradient_steps))
        optimizer = self.optimizers()
        self.update_learning_rate(optimizer)
        for _ in range(gradient_steps):
            data = self.replay_buffer.sample(batch_size)  # type: ignore[union-attr]
            loss = (self.policy.net(data.observations / 10) - data.rewards).pow(2).mean()  # type: ignore[union-attr]
            self.optimizer_step(optimizer, loss, max_grad_norm=1.0)
            self.record("loss", loss)
        self.n_updates += gradient_steps


def probe(**kwargs: Any) -> Probe:
    defaults = {"learning_starts": 10, "buffer_size": 1000, "batch_size": 8, "train_freq": 4, "seed": 0}
    return Probe(**{**defaults, **kwargs})


def fit(
    model: Probe, steps: int, n_envs: int = 1, discrete: bool = False, **trainer_kwargs: Any
) -> RLTrainer:
    trainer_kwargs.setdefault("logger", False)
    trainer_kwargs.setdefault("enable_checkpointing", False)
    trainer = RLTrainer(max_steps=steps, enable_progress_bar=False, **trainer_kwargs)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=lambda: Ramp(discrete=discrete), n_envs=n_envs))
    return trainer


def test_updates_follow_sb3_schedule_and_budget() -> None:
    model = probe()
    fit(model, 101)
    # SB3: collect 4 steps, then train once num_timesteps > learning_starts; stop after the chunk that
    # reaches the budget.
    assert model.train_calls == [(t, 1) for t in range(12, 105, 4)]
    assert model.num_timesteps == 104 and model.n_updates == len(model.train_calls)


def test_batching_chunks_onto_lightning_changes_nothing_but_the_batch_count() -> None:
    class Fine(Probe):
        min_steps_per_batch = 1

    coarse, fine = probe(), Fine(learning_starts=10, buffer_size=1000, batch_size=8, train_freq=4, seed=0)
    fit(coarse, 600)
    fit(fine, 600)
    assert coarse.train_calls == fine.train_calls
    for a, b in zip(coarse.policy.parameters(), fine.policy.parameters()):
        torch.testing.assert_close(a, b)
    assert fine.iterations == 150 and coarse.iterations == 3  # 4-step chunks vs 64 chunks of 4 per batch


def test_gradient_steps_minus_one_and_episode_frequency() -> None:
    model = probe(train_freq=3, gradient_steps=-1, learning_starts=0)
    fit(model, 30, n_envs=2)
    assert all(steps == 6 for _, steps in model.train_calls)  # 3 vector steps of 2 envs
    episodic = probe(train_freq=(2, "episode"), learning_starts=0)
    fit(episodic, 30)
    assert [t for t, _ in episodic.train_calls] == [10, 20, 30]  # horizon 5: two episodes per chunk


def test_random_warmup_is_seeded_and_box_actions_are_scaled() -> None:
    first, second = probe(learning_starts=1000), probe(learning_starts=1000)
    fit(first, 40)
    fit(second, 40)
    buffer = first.replay_buffer
    np.testing.assert_array_equal(buffer.actions[:40], second.replay_buffer.actions[:40])
    stored = buffer.actions[:39, 0, 0]
    # The env saw the unscaled action (the next observation's second entry) in [0, 4]; the buffer keeps
    # it scaled to [-1, 1].
    seen = buffer.next_observations[:39, 0, 1]
    np.testing.assert_allclose(stored, seen / 2 - 1, atol=1e-6)
    assert stored.min() >= -1 and stored.max() <= 1 and np.ptp(stored) > 1


def test_truncation_keeps_the_final_observation_and_bootstraps() -> None:
    model = probe(learning_starts=1000)
    fit(model, 12)
    buffer = model.replay_buffer
    # Step 5 (row 4) ends the first episode by truncation: next_obs is the final one (t=5), not the reset.
    assert buffer.next_observations[4, 0, 0] == 5.0
    assert buffer.observations[5, 0, 0] == 0.0
    assert buffer.dones[4, 0] == 1 and buffer.timeouts[4, 0] == 1
    assert buffer._get_samples(np.array([4]), None).dones.item() == 0.0


def test_action_noise_is_added_in_scaled_space_and_clipped() -> None:
    quiet, noisy = (
        probe(learning_starts=0),
        probe(learning_starts=0, action_noise={"type": "normal", "sigma": 0.5}),
    )
    fit(quiet, 40)
    fit(noisy, 40)
    assert noisy.hparams["action_noise"]["type"] == "normal"
    a, b = quiet.replay_buffer.actions[:40], noisy.replay_buffer.actions[:40]
    assert np.abs(b).max() <= 1.0
    assert np.abs(a - b).mean() > 0.1
    # Noise restarts where episodes end (Ornstein-Uhlenbeck keeps a state per env).
    ou = probe(learning_starts=0, action_noise={"type": "ou", "sigma": 0.3})
    fit(ou, 20, n_envs=2)
    assert ou.action_noise is not None and ou.action_noise.noise_prev.shape == (2, 1)


def test_discrete_actions_are_stored_as_indices() -> None:
    model = probe(learning_starts=5)
    fit(model, 30, discrete=True)
    actions = model.replay_buffer.actions[:30, 0, 0]
    assert set(actions.tolist()) <= {0, 1, 2}
    np.testing.assert_array_equal(actions, model.replay_buffer.next_observations[:30, 0, 1])


class Collect(Logger):
    """A Lightning logger that keeps what it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[tuple[int, dict[str, float]]] = []

    @property
    def name(self) -> str:
        return "collect"

    @property
    def version(self) -> int:
        return 0

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        pass

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        self.records.append((int(step or 0), dict(metrics)))


def test_metrics_are_written_every_log_interval_episodes_at_most_once_per_batch() -> None:
    class Fine(Probe):
        min_steps_per_batch = 1

    logger = Collect()
    model = Fine(learning_starts=10, buffer_size=1000, batch_size=8, train_freq=1, seed=0)
    assert model.log_interval == 4  # episodes, SB3's off-policy default
    fit(model, 60, logger=logger, log_every_n_steps=2)
    steps = [step for step, _ in logger.records]
    # Episodes of 5 steps, written every 2 episodes: at 10, 20, ... (and at the end of the run).
    assert steps == list(range(10, 61, 10))
    last = logger.records[-1][1]
    for key in (
        "rollout/ep_rew_mean",
        "time/fps",
        "time/episodes",
        "train/loss",
        "train/n_updates",
        "train/learning_rate",
    ):
        assert key in last, key
    assert last["train/n_updates"] == 50 and last["time/episodes"] == 12


def test_replay_buffer_save_load_through_the_algorithm(tmp_path: Path) -> None:
    model = probe()
    with pytest.raises(ValueError, match="no replay buffer yet"):
        model.save_replay_buffer(tmp_path / "none")
    fit(model, 50)
    path = model.save_replay_buffer(tmp_path / "buffer.npz")
    other = probe()
    fit(other, 8)
    other.load_replay_buffer(path)
    np.testing.assert_array_equal(other.replay_buffer.rewards, model.replay_buffer.rewards)
    before = other.num_timesteps
    fit(other, 70)  # continues training on the loaded transitions
    assert other.replay_buffer.size() == model.replay_buffer.size() + other.num_timesteps - before
    wrong = Probe(env=lambda: Ramp(discrete=True), learning_starts=10)
    with pytest.raises(ConfigurationError, match="holds transitions for"):
        wrong.load_replay_buffer(path)


def test_checkpoint_carries_the_replay_buffer_when_asked(tmp_path: Path) -> None:
    from lightning.pytorch.callbacks import ModelCheckpoint

    model = probe(checkpoint_replay_buffer=True)
    fit(model, 40, enable_checkpointing=True, callbacks=[ModelCheckpoint(dirpath=tmp_path, save_last=True)])
    checkpoint = torch.load(tmp_path / "last.ckpt", weights_only=True)
    assert checkpoint["lit_sb3_off_policy"]["replay_buffer"]["header"]["pos"] == 40
    resumed = probe(checkpoint_replay_buffer=True)
    trainer = RLTrainer(max_steps=60, enable_progress_bar=False, logger=False, enable_checkpointing=False)
    trainer.fit(
        resumed, datamodule=RLEnvDataModule(train_env=lambda: Ramp()), ckpt_path=tmp_path / "last.ckpt"
    )
    assert resumed.replay_buffer.size() == 60
    np.testing.assert_array_equal(resumed.replay_buffer.rewards[:40], model.replay_buffer.rewards[:40])
    assert resumed.replay_buffer.timeouts[39, 0] == 1  # the restart was marked as a truncation
    plain = probe(checkpoint_replay_buffer=False)
    fit(
        plain,
        20,
        enable_checkpointing=True,
        callbacks=[ModelCheckpoint(dirpath=tmp_path / "b", save_last=True)],
    )
    assert (
        "replay_buffer"
        not in torch.load(tmp_path / "b" / "last.ckpt", weights_only=True)["lit_sb3_off_policy"]
    )


def test_hooks_around_the_step_still_run() -> None:
    class CountSteps(Callback):
        count = 0

        def on_before_optimizer_step(self, *args: Any) -> None:
            CountSteps.count += 1

    model = probe()
    trainer = fit(model, 40, callbacks=[CountSteps()])
    assert not model._plain_steps and CountSteps.count == model.n_updates > 0
    assert trainer.global_step == model.n_updates
    fast = probe()
    trainer = fit(fast, 40)
    assert fast._plain_steps and trainer.global_step == fast.n_updates


def test_polyak_update_and_clipping_match_their_definitions() -> None:
    online = torch.nn.Linear(3, 2)
    target = torch.nn.Linear(3, 2)
    expected = [0.9 * t + 0.1 * o for o, t in zip(online.parameters(), target.parameters())]
    update_target(online, target, 0.1)
    for e, t in zip(expected, target.parameters()):
        torch.testing.assert_close(e, t.detach())
    polyak_update(list(online.parameters()), list(target.parameters()), 1.0)
    for o, t in zip(online.parameters(), target.parameters()):
        torch.testing.assert_close(o, t)
    with pytest.raises(ValueError, match="parameters but"):
        polyak_update(list(online.parameters()), [], 0.5)
    mine, reference = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    reference.load_state_dict(mine.state_dict())
    for module in (mine, reference):
        (module(torch.ones(2, 4)) * 100).sum().backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
    clip_grad_norm([{"params": list(mine.parameters())}], 0.5)
    for a, b in zip(mine.parameters(), reference.parameters()):
        torch.testing.assert_close(a.grad, b.grad)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"train_freq": 0}, ConfigurationError, "train_freq must be a positive integer, got 0"),
        ({"train_freq": [4, "minute"]}, ConfigurationError, "the unit of train_freq must be one of 'step'"),
        ({"gradient_steps": -2}, ConfigurationError, "gradient_steps"),
        ({"learning_starts": -1}, ConfigurationError, "learning_starts"),
        ({"buffer_size": 0}, ConfigurationError, "buffer_size"),
        ({"tau": 2.0}, ConfigurationError, "tau"),
        ({"action_noise": {"type": "white", "sigma": 1}}, ConfigurationError, "Unknown action noise type"),
        ({"replay_buffer_class": "no_such_buffer"}, UnknownNameError, "no_such_buffer"),
    ],
)
def test_bad_arguments_are_refused_with_a_fix(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        probe(**kwargs)


def test_bad_buffer_kwargs_name_the_problem() -> None:
    model = probe(replay_buffer_kwargs={"handle_timeouts": True})
    with pytest.raises(ConfigurationError, match="replay_buffer_kwargs"):
        fit(model, 10)


def test_parse_train_freq_accepts_json_forms() -> None:
    assert parse_train_freq(4) == (4, "step")
    assert parse_train_freq([2, "episode"]) == (2, "episode")
    assert probe(train_freq=(3, "step")).hparams["train_freq"] == [3, "step"]
    assert isinstance(ReplayBuffer(4, spaces.Box(0, 1, (1,)), spaces.Discrete(2)), ReplayBuffer)


def test_learn_continues_episodes_in_flight_without_truncating_them() -> None:
    model = probe(learning_starts=1000, env=lambda: Ramp())
    model.learn(12)  # the third episode is two steps old
    model.learn(4, reset_num_timesteps=False)
    buffer = model.replay_buffer
    assert buffer.timeouts[11, 0] == 0  # not cut: the same environments continued
    assert buffer.observations[12, 0, 0] == 2.0  # step 13 continues that episode (t = 2)
    model.learn(4)  # reset_num_timesteps=True starts fresh episodes: the open one is cut
    assert buffer.timeouts[15, 0] == 1 and buffer.observations[16, 0, 0] == 0.0


def test_q_networks_skip_hook_dispatch_only_while_no_hook_is_registered() -> None:
    from lit_sb3 import DQN
    from lit_sb3_core.sdk.fast_path import plain_calls

    model = DQN(env="CartPole-v1", learning_starts=100, train_freq=4, seed=0)
    policy = model.policy
    obs = torch.randn(5, 4)
    expected = policy.q_values(obs)
    with plain_calls(policy):
        assert policy.q_net.plain_calls and policy.q_net_target.plain_calls
        torch.testing.assert_close(policy.q_values(obs), expected, rtol=0, atol=0)
    assert not policy.q_net.plain_calls  # switched off again after the block
    # A forward hook on a layer sees every pass during training: exploration steps and updates.
    calls: list[int] = []
    handle = policy.q_net.q_net[0].register_forward_hook(
        lambda module, args, output: calls.append(len(output))
    )
    with plain_calls(policy):
        assert not policy.q_net.plain_calls
    model.learn(200, env="CartPole-v1")
    handle.remove()
    # Steps 101-200 act greedily except for epsilon's 5% (one observation each); train_freq=4 gives 25
    # updates of 32 samples.
    assert calls.count(1) > 80
    assert calls.count(32) == 25
