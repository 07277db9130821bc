"""HER through the off-policy algorithms: it solves bit flipping where DQN alone fails, works by name and
by class, in configs, model files, replay buffer files and checkpoints."""

from __future__ import annotations

import json
import zipfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint

from lit_sb3_core import RLEnvDataModule, RLTrainer, cli_main, get_buffer_class, list_buffers
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_dqn import DQN
from lit_sb3_her import BitFlippingEnv, GoalSelectionStrategy, HerReplayBuffer
from lit_sb3_qrdqn import QRDQN
from lit_sb3_sac import SAC
from lit_sb3_td3 import TD3

# Close to SB3's own HER performance test (DQN on bit flipping): one update per environment step.
DQN_BITS = {
    "learning_rate": 1e-3,
    "learning_starts": 200,
    "train_freq": 1,
    "target_update_interval": 500,
    "exploration_final_eps": 0.02,
    "batch_size": 32,
    "buffer_size": 100_000,
    "seed": 0,
}
SMALL = {"learning_starts": 50, "buffer_size": 5000, "batch_size": 32, "seed": 0}


def success_rate(model: Any, n_bits: int, continuous: bool = False, episodes: int = 100) -> float:
    """Fraction of greedy episodes that reach their goal, on evaluation episodes seeded apart from training."""
    env = BitFlippingEnv(n_bits=n_bits, continuous=continuous)
    obs, _ = env.reset(seed=12345)
    successes = 0
    for _ in range(episodes):
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        successes += bool(info["is_success"])
        obs, _ = env.reset()
    return successes / episodes


def test_her_solves_bit_flipping_where_dqn_alone_fails() -> None:
    """10 bits, random start and goal: random exploration almost never reaches a goal, HER learns from misses."""
    n_bits, steps = 10, 4000
    her = DQN("MultiInputPolicy", replay_buffer_class="her", **DQN_BITS)
    her.learn(steps, env=BitFlippingEnv(n_bits=n_bits))
    plain = DQN("MultiInputPolicy", **DQN_BITS).learn(steps, env=BitFlippingEnv(n_bits=n_bits))
    assert isinstance(her.replay_buffer, HerReplayBuffer)
    assert type(plain.replay_buffer).__name__ == "DictReplayBuffer"
    with_her, without = success_rate(her, n_bits), success_rate(plain, n_bits)
    assert with_her >= 0.9, with_her
    assert without <= 0.1, without


@pytest.mark.slow
@pytest.mark.parametrize(("strategy", "minimum"), [("future", 0.9), ("final", 0.9), ("episode", 0.5)])
def test_her_solves_fifteen_bits(strategy: str, minimum: float) -> None:
    """15 bits in 20k steps (seed 0 reached 0.98, 1.0 and 0.71): "episode" goals help least here."""
    model = DQN(
        "MultiInputPolicy",
        replay_buffer_class="her",
        replay_buffer_kwargs={"goal_selection_strategy": strategy},
        policy_kwargs={"net_arch": [256, 256]},
        **{**DQN_BITS, "learning_starts": 1000},
    )
    model.learn(20_000, env=BitFlippingEnv(n_bits=15))
    assert success_rate(model, 15) >= minimum


@pytest.mark.slow
def test_sac_with_her_solves_continuous_bits_where_sac_alone_fails() -> None:
    n_bits, steps = 8, 6000
    settings = {"learning_rate": 1e-3, "learning_starts": 100, "batch_size": 64, "seed": 0}
    settings["policy_kwargs"] = {"net_arch": [64, 64]}
    her = SAC("MultiInputPolicy", replay_buffer_class="her", **settings)
    her.learn(steps, env=BitFlippingEnv(n_bits=n_bits, continuous=True))
    plain = SAC("MultiInputPolicy", **settings).learn(
        steps, env=BitFlippingEnv(n_bits=n_bits, continuous=True)
    )
    assert success_rate(her, n_bits, continuous=True) >= 0.8
    assert success_rate(plain, n_bits, continuous=True) <= 0.2


def test_sac_with_her_trains_and_predicts_on_continuous_bits() -> None:
    model = SAC(
        "MultiInputPolicy",
        replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"n_sampled_goal": 2, "goal_selection_strategy": GoalSelectionStrategy.FINAL},
        policy_kwargs={"net_arch": [32, 32]},
        **SMALL,
    )
    model.learn(300, env=BitFlippingEnv(n_bits=4, continuous=True))
    buffer = model.replay_buffer
    assert isinstance(buffer, HerReplayBuffer) and buffer.size() == 300
    assert buffer.n_sampled_goal == 2 and buffer.goal_selection_strategy is GoalSelectionStrategy.FINAL
    assert model.n_updates == 250
    assert all(torch.isfinite(p).all() for p in model.policy.parameters())
    obs, _ = BitFlippingEnv(n_bits=4, continuous=True).reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (4,) and np.all(np.abs(action) <= 1)
    # The strategy is SB3's plain Enum; the hyperparameters hold its name, plain JSON.
    assert (
        json.loads(json.dumps(dict(model.hparams)))["replay_buffer_kwargs"]["goal_selection_strategy"]
        == "final"
    )


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (TD3, {"continuous": True, "policy_kwargs": {"net_arch": [32, 32]}}),
        (QRDQN, {"continuous": False, "policy_kwargs": {"net_arch": [32, 32], "n_quantiles": 10}}),
    ],
)
def test_other_off_policy_algorithms_take_the_buffer(cls: type, kwargs: dict) -> None:
    continuous = kwargs.pop("continuous")
    model = cls("MultiInputPolicy", replay_buffer_class="her", **SMALL, **kwargs)
    model.learn(200, env=BitFlippingEnv(n_bits=5, continuous=continuous))
    assert isinstance(model.replay_buffer, HerReplayBuffer) and model.n_updates > 0
    assert all(torch.isfinite(p).all() for p in model.policy.parameters())


@pytest.mark.parametrize("vectorization", ["sync", "async"])
def test_parallel_environments_keep_their_episodes_apart(vectorization: str) -> None:
    model = DQN("MultiInputPolicy", replay_buffer_class="her", **SMALL)
    data = RLEnvDataModule(
        train_env=partial(BitFlippingEnv, n_bits=5), n_envs=2, vectorization=vectorization, seed=0
    )
    trainer = RLTrainer(max_steps=400, enable_progress_bar=False, logger=False, enable_checkpointing=False)
    try:
        trainer.fit(model, datamodule=data)
    finally:
        data.close()  # the async workers end with the test
    buffer = model.replay_buffer
    assert buffer.n_envs == 2 and buffer.size() == 200 and model.n_updates > 0
    assert buffer.env is model.vector_env
    for env in (0, 1):
        starts, lengths = buffer.ep_start[:200, env], buffer.ep_length[:200, env]
        stored = lengths > 0
        assert stored.sum() > 150  # all but the episode still running
        step = np.arange(200) - starts
        assert np.all(((step >= 0) & (step < lengths))[stored])
        ends = np.flatnonzero(stored & (step == lengths - 1))
        assert np.all(buffer.dones[ends, env] == 1) and buffer.dones[:200, env][stored].sum() == len(ends)


def test_an_sb3_vec_env_with_wrappers_answers_compute_reward() -> None:
    """A wrapped SB3 VecEnv (VecNormalize here) is stepped as a view; relabelling asks its envs, after set_env
    too, and the relabelled rewards are what the env computes for the sampled goals."""
    from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize

    def wrapped() -> VecNormalize:
        venv = DummyVecEnv([partial(BitFlippingEnv, n_bits=4, continuous=True)])
        return VecNormalize(venv, norm_obs=False, norm_reward=False)

    env, other = wrapped(), wrapped()
    model = SAC("MultiInputPolicy", env, replay_buffer_class=HerReplayBuffer, **SMALL)
    model.set_env(other)
    model.learn(20)
    model.set_env(env)
    model.learn(100)
    assert model.get_vec_normalize_env() is env and model.n_updates > 0
    samples = model.replay_buffer.sample(256)
    goals = {key: samples.next_observations[key].numpy() for key in ("achieved_goal", "desired_goal")}
    expected = BitFlippingEnv(n_bits=4, continuous=True).compute_reward(
        goals["achieved_goal"], goals["desired_goal"], None
    )
    np.testing.assert_array_equal(samples.rewards.numpy().ravel(), expected)


def test_goal_selection_strategy_is_sb3s_enum_and_files_keep_its_name(tmp_path: Path) -> None:
    """SB3's type (a plain Enum numbered as SB3's), stored by name in model and buffer files, and files that
    stored the name (all lit-sb3 files so far) load back to the member."""
    from enum import Enum

    sb3_her = pytest.importorskip("stable_baselines3.her.goal_selection_strategy")
    assert issubclass(GoalSelectionStrategy, Enum) and not issubclass(GoalSelectionStrategy, str)
    assert {s.name: s.value for s in GoalSelectionStrategy} == {
        s.name: s.value for s in sb3_her.GoalSelectionStrategy
    }
    assert str(GoalSelectionStrategy.FINAL) == "GoalSelectionStrategy.FINAL"  # SB3's text (pytest ids too)
    assert [s.key for s in GoalSelectionStrategy] == ["future", "final", "episode"]

    model = DQN(
        "MultiInputPolicy",
        replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"goal_selection_strategy": GoalSelectionStrategy.EPISODE},
        **SMALL,
    ).learn(100, env=BitFlippingEnv(n_bits=4))
    model.save(tmp_path / "model.zip")
    model.save_replay_buffer(tmp_path / "buffer")
    with zipfile.ZipFile(tmp_path / "model.zip") as archive:
        stored = json.loads(archive.read("metadata.json"))["hyperparameters"]["replay_buffer_kwargs"]
    assert stored == {"goal_selection_strategy": "episode"}
    loaded = DQN.load(tmp_path / "model.zip", env=BitFlippingEnv(n_bits=4))
    loaded.load_replay_buffer(tmp_path / "buffer")
    assert loaded.replay_buffer.goal_selection_strategy is GoalSelectionStrategy.EPISODE

    # A file of an earlier lit-sb3 (its strategy a str enum, stored as the value "final") loads the same way.
    with (
        zipfile.ZipFile(tmp_path / "model.zip") as old,
        zipfile.ZipFile(tmp_path / "earlier.zip", "w") as new,
    ):
        for item in old.infolist():
            payload = old.read(item.filename)
            if item.filename == "metadata.json":
                metadata = json.loads(payload)
                metadata["hyperparameters"]["replay_buffer_kwargs"]["goal_selection_strategy"] = "final"
                payload = json.dumps(metadata).encode()
            new.writestr(item, payload)
    earlier = DQN.load(tmp_path / "earlier.zip", env=BitFlippingEnv(n_bits=4))
    assert earlier.learn(60).replay_buffer.goal_selection_strategy is GoalSelectionStrategy.FINAL


def test_registered_by_name_and_model_files_round_trip(tmp_path: Path) -> None:
    assert "her" in list_buffers() and get_buffer_class("HER") is HerReplayBuffer
    by_name = SAC("MultiInputPolicy", replay_buffer_class="her", **SMALL)
    by_class = SAC("MultiInputPolicy", replay_buffer_class=HerReplayBuffer, **SMALL)
    assert by_name.hparams["replay_buffer_class"] == "her"
    assert by_class.hparams["replay_buffer_class"] == "lit_sb3_her.buffer:HerReplayBuffer"
    by_name.learn(120, env=BitFlippingEnv(n_bits=4, continuous=True))
    by_name.save(tmp_path / "sac_her.zip")
    loaded = SAC.load(tmp_path / "sac_her.zip")
    assert loaded.hparams["replay_buffer_class"] == "her"
    obs, _ = BitFlippingEnv(n_bits=4, continuous=True).reset(seed=0)
    np.testing.assert_allclose(
        loaded.predict(obs, deterministic=True)[0], by_name.predict(obs, deterministic=True)[0], atol=1e-6
    )
    loaded.learn(120, env=BitFlippingEnv(n_bits=4, continuous=True))  # a new HER buffer from the saved name
    assert isinstance(loaded.replay_buffer, HerReplayBuffer) and loaded.n_updates > 0


def test_replay_buffer_files_through_the_algorithm(tmp_path: Path) -> None:
    env = BitFlippingEnv(n_bits=5)
    model = DQN("MultiInputPolicy", replay_buffer_class="her", **SMALL).learn(200, env=env)
    path = model.save_replay_buffer(tmp_path / "her_buffer")
    other = DQN("MultiInputPolicy", env=BitFlippingEnv(n_bits=5), replay_buffer_class="her", **SMALL)
    other.load_replay_buffer(path, truncate_last_traj=False)  # kept as saved: the episode in progress too
    loaded = other.replay_buffer
    assert isinstance(loaded, HerReplayBuffer) and loaded.env is None  # no env until training starts
    np.testing.assert_array_equal(loaded.ep_length, model.replay_buffer.ep_length)
    np.testing.assert_array_equal(loaded._current_ep_len, model.replay_buffer._current_ep_len)
    other.learn(100)
    assert other.replay_buffer is loaded and loaded.env is other.vector_env and loaded.size() == 300
    assert other.n_updates > 0


def test_loading_a_replay_buffer_truncates_the_episodes_in_progress_by_default(tmp_path: Path) -> None:
    model = DQN("MultiInputPolicy", replay_buffer_class="her", **SMALL).learn(
        203, env=BitFlippingEnv(n_bits=5)
    )
    in_progress = model.replay_buffer._current_ep_len.copy()
    assert in_progress.sum() > 0  # 203 steps: the last episode of 5 bits runs on
    path = model.save_replay_buffer(tmp_path / "her_buffer")
    with pytest.warns(UserWarning, match="last trajectory in the replay buffer will be truncated"):
        model.load_replay_buffer(path)  # SB3's default truncate_last_traj=True
    loaded = model.replay_buffer
    assert loaded._current_ep_len.sum() == 0
    last = loaded.pos - 1
    assert loaded.timeouts[last, 0] == 1 and loaded.ep_length[last, 0] == in_progress[0]
    model.learn(50, reset_num_timesteps=True)
    assert model.replay_buffer is loaded and loaded.size() >= 253  # kept, and training went on in it


class InfoScorer(BitFlippingEnv):
    """Bit flipping whose reward is read from the infos compute_reward receives (0 where they say success)."""

    seen: list[list[dict]] = []  # noqa: RUF012

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["mark"] = np.array([7.0, float(self.current_step)])
        return obs, reward, terminated, truncated, info

    def compute_reward(self, achieved: Any, desired: Any, info: Any) -> np.ndarray:
        if isinstance(info, list):
            InfoScorer.seen.append(info)
        return super().compute_reward(achieved, desired, info)


def test_copy_info_dict_hands_each_transitions_step_info_to_compute_reward(tmp_path: Path) -> None:
    InfoScorer.seen.clear()
    model = DQN(
        "MultiInputPolicy",
        replay_buffer_class="her",
        replay_buffer_kwargs={"copy_info_dict": True},
        train_freq=4,
        **SMALL,
    ).learn(120, env=InfoScorer(n_bits=4))
    buffer = model.replay_buffer
    assert buffer.copy_info_dict and InfoScorer.seen  # relabelled minibatches were scored
    batch = [info for call in InfoScorer.seen for info in call]
    assert all(info["mark"][0] == 7.0 and "is_success" in info for info in batch)
    assert all("TimeLimit.truncated" in info for info in batch)  # SB3's per-env info dicts
    # each info is the one of the step that made its transition (current_step counts the steps taken)
    assert {int(info["mark"][1]) for info in batch} <= set(range(1, 5))
    path = model.save_replay_buffer(tmp_path / "with_infos")
    other = DQN("MultiInputPolicy", replay_buffer_class="her", **SMALL)
    other.load_replay_buffer(path, truncate_last_traj=False)
    loaded = other.replay_buffer
    assert loaded.copy_info_dict
    rows = buffer.size()
    for row in (0, rows // 2, rows - 1):
        assert (
            loaded.infos[row, 0]["mark"] == buffer.infos[row, 0]["mark"].tolist()
        )  # arrays come back as lists
        assert loaded.infos[row, 0]["is_success"] == buffer.infos[row, 0]["is_success"]


def test_checkpoint_resume_restores_the_episode_bookkeeping(tmp_path: Path) -> None:
    def make() -> DQN:
        return DQN(
            "MultiInputPolicy",
            replay_buffer_class="her",
            replay_buffer_kwargs={"n_sampled_goal": 2},
            **SMALL,
        )

    def data() -> RLEnvDataModule:
        return RLEnvDataModule(train_env=lambda: BitFlippingEnv(n_bits=6), seed=0)

    first = make()  # 304 steps: inside an episode (they last 6 steps or fewer)
    RLTrainer(
        max_steps=304,
        enable_progress_bar=False,
        logger=False,
        callbacks=[ModelCheckpoint(dirpath=tmp_path, save_last=True)],
    ).fit(first, datamodule=data())
    saved = first.replay_buffer
    assert saved._current_ep_len[0] > 0  # the checkpoint falls inside an episode

    restored: dict[str, Any] = {}

    class Snapshot(Callback):
        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            buffer = pl_module.replay_buffer
            restored.update(
                ep_length=buffer.ep_length[:304, 0].copy(),
                ep_start=buffer.ep_start[:304, 0].copy(),
                pos=buffer.pos,
                env=buffer.env,
                n_sampled_goal=buffer.n_sampled_goal,
                train_env=pl_module.vector_env,
            )

    resumed = make()
    trainer = RLTrainer(
        max_steps=400,
        enable_progress_bar=False,
        logger=False,
        enable_checkpointing=False,
        callbacks=[Snapshot()],
    )
    trainer.fit(resumed, datamodule=data(), ckpt_path=tmp_path / "last.ckpt")
    assert restored["pos"] == 304 and restored["n_sampled_goal"] == 2
    assert restored["env"] is restored["train_env"]  # relabelling uses the resumed run's env
    finished = saved.ep_length[:304, 0] > 0
    np.testing.assert_array_equal(restored["ep_length"][finished], saved.ep_length[:304, 0][finished])
    np.testing.assert_array_equal(restored["ep_start"], saved.ep_start[:304, 0])
    # The episode in progress at the checkpoint ended there (truncated): it is replayed too.
    assert np.all(restored["ep_length"][~finished] == (~finished).sum())
    assert resumed.num_timesteps == 400 and resumed.replay_buffer.size() == 400


def test_a_yaml_config_names_the_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "her.yaml"
    config.write_text(
        """
model:
  class_path: lit_sb3_dqn.DQN
  init_args:
    policy: MultiInputPolicy
    learning_starts: 50
    replay_buffer_class: her
    replay_buffer_kwargs: {n_sampled_goal: 2, goal_selection_strategy: episode}
data:
  train_env: lit_sb3_her.envs:BitFlipping-v0
  env_kwargs: {n_bits: 10, max_steps: 12}
"""
    )
    code = cli_main(
        [
            "fit",
            "--config",
            str(config),
            "--trainer.max_steps",
            "300",
            "--trainer.enable_progress_bar",
            "false",
        ]
    )
    assert code == 0
    (checkpoint,) = tmp_path.glob("lightning_logs/*/checkpoints/*.ckpt")
    state = torch.load(checkpoint, weights_only=True)
    assert state["hyper_parameters"]["replay_buffer_class"] == "her"
    assert (
        state["lit_sb3_off_policy"]["replay_buffer"]["header"]["her"]["goal_selection_strategy"] == "episode"
    )


def test_unsupported_buffer_options_fail_when_training_starts() -> None:
    with pytest.raises(ConfigurationError, match="optimize_memory_usage"):
        DQN("MultiInputPolicy", replay_buffer_class="her", optimize_memory_usage=True, **SMALL).learn(
            10, env=BitFlippingEnv(n_bits=4)
        )
    with pytest.raises(ConfigurationError, match="n_steps=3"):
        DQN(
            "MultiInputPolicy", replay_buffer_class="her", replay_buffer_kwargs={"n_steps": 3}, **SMALL
        ).learn(10, env=BitFlippingEnv(n_bits=4))
    with pytest.raises(ConfigurationError, match="needs Dict observations"):
        DQN(replay_buffer_class="her", **SMALL).learn(10, env="CartPole-v1")
