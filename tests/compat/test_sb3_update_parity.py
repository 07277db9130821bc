"""A2C, PPO, MaskablePPO, DQN and QR-DQN take Stable-Baselines3's gradient steps: from one seed, on one env,
lit-sb3's weights after real training equal SB3's to float rounding.

Nothing is handed over: initial weights, sampled actions, the env's resets, the rollout, advantages, PPO's
minibatch order (numpy's global generator over SB3's env-major flattening, ``sb3_shuffle``), the replay
buffer's minibatch indices and DQN's epsilon-greedy draws (numpy's global generator, ``GlobalNumpyRng``),
losses, clipping and optimizer are each library's own, and draw the same random numbers from the same
seed. This is why a seed gives the same learning curve, and the same pass or fail of a learning threshold,
in both.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

pytest.importorskip("stable_baselines3")
pytest.importorskip("lit_sb3_a2c")
pytest.importorskip("lit_sb3_ppo")

ENV_ID, N_ENVS, SEED = "CartPole-v1", 2, 3


def _sb3(algo: str, steps: int, **kwargs: Any) -> dict[str, torch.Tensor]:
    import stable_baselines3
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(ENV_ID, n_envs=N_ENVS, seed=SEED)
    model = getattr(stable_baselines3, algo)("MlpPolicy", env, seed=SEED, device="cpu", **kwargs)
    model.learn(total_timesteps=steps)
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


def _lit(algo: str, steps: int, **kwargs: Any) -> dict[str, torch.Tensor]:
    import lit_sb3

    model = lit_sb3.get_algo_class(algo.lower())(policy="MlpPolicy", seed=SEED, device="cpu", **kwargs)
    model.learn(
        total_timesteps=steps, env=lit_sb3.RLEnvDataModule(train_env=ENV_ID, n_envs=N_ENVS, seed=SEED)
    )
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


def _assert_same_weights(sb3: dict[str, torch.Tensor], lit: dict[str, torch.Tensor]) -> None:
    assert lit, "lit-sb3's policy has weights"
    for name, weight in lit.items():
        assert name in sb3, f"SB3's policy has no {name}"
        torch.testing.assert_close(weight, sb3[name], rtol=0, atol=1e-6, msg=f"{name} differs from SB3's")


def _assert_close_to_rounding(
    sb3: dict[str, torch.Tensor], lit: dict[str, torch.Tensor], atol: float
) -> None:
    """Every weight of SB3's state dict within ``atol`` in lit-sb3's (which may hold more: SAC's and TQC's
    policies also keep the entropy coefficient, which SB3 keeps on the model)."""
    assert sb3.keys() <= lit.keys()
    for name, weight in sb3.items():
        torch.testing.assert_close(lit[name], weight, rtol=0, atol=atol, msg=f"{name} differs from SB3's")


def test_a2c_weights_after_training_equal_sb3s() -> None:
    kwargs = {"n_steps": 8, "ent_coef": 0.01}
    sb3, lit = _sb3("A2C", 480, **kwargs), _lit("A2C", 480, **kwargs)  # 30 updates
    moved = _sb3("A2C", 16, **kwargs)
    assert max(float((sb3[k] - moved[k]).abs().max()) for k in lit) > 1e-3, "the updates moved the weights"
    _assert_same_weights(sb3, lit)


def test_ppo_weights_after_training_equal_sb3s() -> None:
    kwargs = {"n_steps": 32, "batch_size": 16, "n_epochs": 3}
    # 4 rollouts, 3 epochs of 4 minibatches each: the later rollouts are sampled after shuffles, so torch's
    # generator must also be where SB3's is (the shuffle comes from numpy's, as in SB3).
    sb3, lit = _sb3("PPO", 4 * 32 * N_ENVS, **kwargs), _lit("PPO", 4 * 32 * N_ENVS, **kwargs)
    _assert_same_weights(sb3, lit)


def test_ppo_with_normalization_equals_sb3_with_vec_normalize() -> None:
    """``RLEnvDataModule(normalize=True)`` against SB3's ``VecNormalize``: observations and rewards, on
    Pendulum, whose 200-step episodes are truncated inside the rollouts. The values PPO bootstraps from (the
    rollout's last observation, each truncated episode's final one) are normalized with the statistics that
    already hold that step's observations, as VecNormalize has them, though lit-sb3 merges an observation
    into its statistics only when the policy first reads it."""
    from stable_baselines3 import PPO as SB3PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    import lit_sb3

    kwargs: dict[str, Any] = {"n_steps": 256, "batch_size": 64, "n_epochs": 2, "seed": SEED, "device": "cpu"}
    steps = 2 * 256 * N_ENVS  # two rollouts: two truncations per env and two bootstraps from the last step
    env = VecNormalize(make_vec_env("Pendulum-v1", n_envs=N_ENVS, seed=SEED), gamma=0.99)
    theirs = SB3PPO("MlpPolicy", env, **kwargs).learn(total_timesteps=steps)
    ours = lit_sb3.PPO("MlpPolicy", **kwargs)
    ours.learn(
        total_timesteps=steps,
        env=lit_sb3.RLEnvDataModule(train_env="Pendulum-v1", n_envs=N_ENVS, seed=SEED, normalize=True),
    )
    _assert_same_weights(theirs.policy.state_dict(), ours.policy.state_dict())


def test_ppo_with_rl_zoos_hopper_settings_equals_sb3() -> None:
    """The learning ledger's ppo-hopper settings (rl-zoo3's Hopper entry: separate ReLU networks, no
    orthogonal init, log_std_init -2, gamma 0.999, gradient clipping, normalization), on Pendulum: the same
    weights after two rollouts with a truncation each. On Hopper itself the two libraries agree to 6e-8 after
    one rollout and then part as chaotically as SB3 does from its own run nudged by 1e-7 (measured
    2026-12-06), so Pendulum is where more than one rollout can be compared."""
    from stable_baselines3 import PPO as SB3PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize
    from torch import nn

    import lit_sb3

    zoo = lit_sb3.tuned_hyperparameters("ppo", "Hopper-v5")
    assert zoo["data"] == {"normalize": True, "n_envs": 1}
    # rl-zoo3's entry, with rollouts of 256 steps: Pendulum truncates its episodes at steps 200 and 400, one
    # in each of the two rollouts.
    settings = {**zoo["model"], "n_steps": 256, "seed": SEED, "device": "cpu"}
    steps = 2 * 256
    net = copy.deepcopy(settings.pop("policy_kwargs"))
    assert net.pop("activation_fn") == "relu"
    env = VecNormalize(make_vec_env("Pendulum-v1", n_envs=1, seed=SEED), gamma=settings["gamma"])
    theirs = SB3PPO("MlpPolicy", env, policy_kwargs={**net, "activation_fn": nn.ReLU}, **settings)
    theirs.learn(total_timesteps=steps)
    ours = lit_sb3.PPO("MlpPolicy", policy_kwargs={**net, "activation_fn": "relu"}, **settings)
    ours.learn(
        total_timesteps=steps,
        env=lit_sb3.RLEnvDataModule(train_env="Pendulum-v1", n_envs=1, seed=SEED, normalize=True),
    )
    _assert_same_weights(theirs.policy.state_dict(), ours.policy.state_dict())


def test_maskable_ppo_weights_after_training_equal_sb3_contribs() -> None:
    """With action masks (sb3-contrib's InvalidActionEnvDiscrete, each library's own copy of it). One env:
    its states come from its action space, which the model seeds only for the first env (in both)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    pytest.importorskip("lit_sb3_ppo_mask")
    import stable_baselines3.common.env_util as sb3_env_util
    from sb3_contrib.common.envs import InvalidActionEnvDiscrete as SB3Env

    import lit_sb3
    import lit_sb3.common.env_util as lit_env_util
    from lit_sb3.common.envs import InvalidActionEnvDiscrete as LitEnv

    kwargs = {"n_steps": 32, "batch_size": 16, "n_epochs": 2, "seed": SEED, "device": "cpu"}
    steps = 3 * 32
    theirs = sb3_contrib.MaskablePPO(
        "MlpPolicy", sb3_env_util.make_vec_env(lambda: SB3Env(dim=8, n_invalid_actions=3)), **kwargs
    ).learn(total_timesteps=steps)
    ours = lit_sb3.MaskablePPO(
        "MlpPolicy", lit_env_util.make_vec_env(lambda: LitEnv(dim=8, n_invalid_actions=3)), **kwargs
    ).learn(total_timesteps=steps)
    _assert_same_weights(theirs.policy.state_dict(), ours.policy.state_dict())


def _sb3_contrib(algo: str, steps: int, **kwargs: Any) -> dict[str, torch.Tensor]:
    import sb3_contrib
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(ENV_ID, n_envs=N_ENVS, seed=SEED)
    model = getattr(sb3_contrib, algo)("MlpPolicy", env, seed=SEED, device="cpu", **kwargs)
    model.learn(total_timesteps=steps)
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


# Off-policy: the warm-up's random actions (one sample of the model's action space per env), epsilon-greedy
# decisions and minibatch indices come from the generators SB3 draws them from, in its order.
DQN_KWARGS = {
    "learning_starts": 50,
    "train_freq": 2,
    "gradient_steps": 2,
    "target_update_interval": 40,
    "batch_size": 16,
    "exploration_fraction": 0.5,
    "policy_kwargs": {"net_arch": [16]},
}


def test_dqn_weights_after_training_equal_sb3s() -> None:
    sb3, lit = _sb3("DQN", 400, **DQN_KWARGS), _lit("DQN", 400, **DQN_KWARGS)
    _assert_same_weights(sb3, lit)


def test_qrdqn_weights_after_training_equal_sb3_contribs() -> None:
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("lit_sb3_qrdqn")
    kwargs = {**DQN_KWARGS, "policy_kwargs": {"net_arch": [16], "n_quantiles": 5}}
    sb3 = _sb3_contrib("QRDQN", 400, **kwargs)
    lit = _lit("QRDQN", 400, **kwargs)
    renamed = {k.replace("q_net", "quantile_net"): v for k, v in lit.items()}
    _assert_same_weights(sb3, renamed)


@pytest.mark.parametrize("n_bits", [6, 10])
def test_dqn_her_with_torchs_default_adam_is_sb3s_run_bit_for_bit(n_bits: int) -> None:
    """DQN + HER on BitFlippingEnv (SB3's test_performance_her set-up, shorter): with Adam built as SB3
    builds it (``fused=False``; lit-sb3's default is the fused kernel, ~3x faster per step, which rounds
    differently in the last bits) every weight equals SB3's exactly, not only to float rounding. With 6
    bits episodes end by success and by the time limit often, and a start already at the goal (1 reset in
    64) comes within the 400 steps: its episode must be kept, as SB3 keeps it."""
    import stable_baselines3
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.envs import BitFlippingEnv as SB3BitFlippingEnv

    import lit_sb3
    from lit_sb3.common.env_util import make_vec_env as lit_make_vec_env
    from lit_sb3.common.envs import BitFlippingEnv as LitBitFlippingEnv

    kwargs: dict[str, Any] = {
        "replay_buffer_kwargs": {"n_sampled_goal": 5, "goal_selection_strategy": "future"},
        "learning_rate": 2e-3,
        "train_freq": 1,
        "gradient_steps": 2,
        "learning_starts": 20,
        "exploration_final_eps": 0.02,
        "target_update_interval": 100,
        "batch_size": 32,
        "buffer_size": 10_000,
        "seed": 0,
        "device": "cpu",
        "policy_kwargs": {"optimizer_kwargs": {"fused": False}},
    }
    weights = []
    for library, make_vec_env, env_class in (
        (stable_baselines3, sb3_make_vec_env, SB3BitFlippingEnv),
        (lit_sb3, lit_make_vec_env, LitBitFlippingEnv),
    ):
        env = make_vec_env(lambda env_class=env_class: env_class(n_bits=n_bits, continuous=False), n_envs=2)
        model = library.DQN("MultiInputPolicy", env, replay_buffer_class=library.HerReplayBuffer, **kwargs)
        model.learn(total_timesteps=400)
        weights.append({k: v.detach().clone() for k, v in model.policy.state_dict().items()})
    sb3, lit = weights
    assert lit.keys() == sb3.keys()
    for name, weight in lit.items():
        assert torch.equal(weight, sb3[name]), f"{name} differs from SB3's"


def _contrib_or_sb3(algo: str) -> Any:
    import stable_baselines3

    if hasattr(stable_baselines3, algo):
        return getattr(stable_baselines3, algo)
    return getattr(pytest.importorskip("sb3_contrib"), algo)


# Continuous control: SAC, TD3, DDPG and TQC from one seed, Adam built as SB3 builds it (``fused=False``).
# DDPG's deterministic actor makes its run chaotic: a 1e-9 nudge of SB3's own initial weights ends 200 steps
# 0.012 away (measured), so its run is compared over fewer steps.
CONTINUOUS_STEPS = {"SAC": 200, "TD3": 200, "TQC": 200, "DDPG": 150}
CONTINUOUS_KWARGS: dict[str, Any] = {
    "learning_starts": 100,
    "batch_size": 32,
    "seed": SEED,
    "device": "cpu",
    "policy_kwargs": {"optimizer_kwargs": {"fused": False}},
}


@pytest.mark.parametrize("algo", list(CONTINUOUS_STEPS))
def test_continuous_control_runs_equal_sb3s_from_the_same_initial_weights(algo: str) -> None:
    """The seed gives SB3's initial weights exactly (every network built once, targets built and loaded as
    SB3 builds them: a copied target or a critic built and then replaced draws a different stream), and a
    short run on Pendulum (warm-up, collection, gradient steps, target updates) SB3's weights to rounding."""
    import gymnasium as gym
    from stable_baselines3.common.env_util import make_vec_env

    import lit_sb3

    kwargs = copy.deepcopy(CONTINUOUS_KWARGS)  # SB3 writes use_sde into policy_kwargs
    theirs_class, ours_class = _contrib_or_sb3(algo), lit_sb3.get_algo_class(algo.lower())
    theirs = theirs_class("MlpPolicy", gym.make("Pendulum-v1"), **kwargs)
    ours = ours_class("MlpPolicy", gym.make("Pendulum-v1"), **kwargs)
    initial = {k: v.detach().clone() for k, v in theirs.policy.state_dict().items()}
    mine = ours.policy.state_dict()  # SAC's and TQC's also hold the entropy coefficient, SB3's the model
    assert initial.keys() <= mine.keys()
    for name, weight in initial.items():
        assert torch.equal(mine[name], weight), f"{algo}: initial {name} differs from SB3's"

    steps = CONTINUOUS_STEPS[algo]
    theirs = theirs_class("MlpPolicy", make_vec_env("Pendulum-v1", n_envs=1, seed=SEED), **kwargs)
    ours = ours_class("MlpPolicy", **kwargs)
    theirs.learn(total_timesteps=steps)
    ours.learn(total_timesteps=steps, env=lit_sb3.RLEnvDataModule(train_env="Pendulum-v1", seed=SEED))
    trained = {k: v.detach().clone() for k, v in theirs.policy.state_dict().items()}
    assert max(float((trained[k] - initial[k]).abs().max()) for k in initial) > 1e-2, "training moved them"
    _assert_close_to_rounding(trained, ours.policy.state_dict(), atol=1e-4)


@pytest.mark.parametrize("game", ["BreakoutNoFrameskip-v4", "RoadRunnerNoFrameskip-v4"])
def test_dqn_on_atari_is_sb3s_run_bit_for_bit(game: str) -> None:
    """DQN with its CnnPolicy: lit-sb3's Atari stack (``RLEnvDataModule(atari=True)``) against SB3's
    ``make_atari_env`` + ``VecFrameStack(4)``, the replay buffer stored as the learning ledger stores it
    (``optimize_memory_usage``). Same seed, Adam as SB3 builds it, NatureCNN on SB3's contiguous layout:
    every weight equal after 600 steps, so a difference between the two libraries' Atari curves in
    benchmarks/learning is the rounding of the fused Adam kernel (and, since 2026-12-06, of channels-last
    convolutions) carried through a chaotic run, not another computation. Road Runner is the ledger's
    DQN game, and one whose frames depend on max-pooling colour frames before the grey conversion."""
    pytest.importorskip("ale_py")
    import ale_py
    import gymnasium as gym
    import stable_baselines3
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    import lit_sb3

    gym.register_envs(ale_py)
    steps = 600
    kwargs: dict[str, Any] = {
        "learning_starts": 50,
        "train_freq": 4,
        "target_update_interval": 100,
        "batch_size": 8,
        "buffer_size": 1_000,
        "exploration_fraction": 0.5,
        "optimize_memory_usage": True,
        "replay_buffer_kwargs": {"handle_timeout_termination": False},
        "seed": SEED,
        "device": "cpu",
        "policy_kwargs": {"optimizer_kwargs": {"fused": False}},
    }
    theirs = stable_baselines3.DQN(
        "CnnPolicy", VecFrameStack(make_atari_env(game, n_envs=1, seed=SEED), 4), **kwargs
    )
    initial = {k: v.detach().clone() for k, v in theirs.policy.state_dict().items()}
    theirs.learn(total_timesteps=steps)
    # NatureCNN's contiguous layout, as SB3 trains it (lit-sb3's default, channels-last, rounds otherwise).
    contiguous = {**kwargs["policy_kwargs"], "features_extractor_kwargs": {"channels_last": False}}
    ours = lit_sb3.DQN("CnnPolicy", **{**kwargs, "policy_kwargs": contiguous})
    ours.learn(total_timesteps=steps, env=lit_sb3.RLEnvDataModule(train_env=game, atari=True, seed=SEED))
    sb3, lit = theirs.policy.state_dict(), ours.policy.state_dict()
    assert lit.keys() == sb3.keys()
    assert max(float((sb3[k] - initial[k]).abs().max()) for k in initial) > 1e-3, "training moved them"
    for name, weight in lit.items():
        assert torch.equal(weight, sb3[name]), f"{name} differs from SB3's"


def test_ppo_on_atari_equals_sb3s_run_to_rounding() -> None:
    """PPO with its CnnPolicy on Breakout, two envs, through each library's Atari stack: the shuffled
    minibatches of uint8 frames (gathered rows, scaled to [0, 1]) and 8 updates give SB3's weights within
    float rounding (measured 6.0e-6; 6.7e-7 with ``channels_last=False``), and Adam's first steps magnify
    the last-bit differences on weights whose gradient is near zero. Not bit for bit, for two reasons found
    on 2026-12-06 (with both made SB3's, these weights are equal bit for bit, and A2C's below with its
    third), both kept for speed:

    * The memory layout of the frames: SB3 acts on the transposed view ``VecTransposeImage`` hands over
      (channels-last) and trains on contiguous copies; lit-sb3's NatureCNN runs channels-last throughout
      (``NatureCNN(channels_last=True)``, 1.43x on PPO's batch-256 update in bench_cnn_precision.py), and
      torch's convolution rounds each layout its own way.
    * lit-sb3's categorical log-probabilities are one ``log_softmax``; torch.distributions (SB3's) computes
      ``logits - logsumexp``: ~8x the CPU time on a few rows (15 vs 2 us), a third of the values a bit
      apart (``CategoricalDistribution``)."""
    pytest.importorskip("ale_py")
    import ale_py
    import gymnasium as gym
    import stable_baselines3
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    import lit_sb3

    gym.register_envs(ale_py)
    game, n_envs, steps = "BreakoutNoFrameskip-v4", 2, 2 * 32 * 2
    kwargs: dict[str, Any] = {
        "n_steps": 32,
        "batch_size": 16,
        "n_epochs": 2,
        "seed": SEED,
        "device": "cpu",
        "policy_kwargs": {"optimizer_kwargs": {"fused": False}},
    }
    theirs = stable_baselines3.PPO(
        "CnnPolicy", VecFrameStack(make_atari_env(game, n_envs=n_envs, seed=SEED), 4), **kwargs
    )
    initial = {k: v.detach().clone() for k, v in theirs.policy.state_dict().items()}
    theirs.learn(total_timesteps=steps)
    ours = lit_sb3.PPO("CnnPolicy", **kwargs)
    datamodule = lit_sb3.RLEnvDataModule(train_env=game, n_envs=n_envs, atari=True, seed=SEED)
    ours.learn(total_timesteps=steps, env=datamodule)
    lit = ours.policy.state_dict()
    sb3 = {k: v for k, v in theirs.policy.state_dict().items() if k in lit}  # less SB3's pi_/vf_ aliases
    assert sb3.keys() == lit.keys()
    assert max(float((sb3[k] - initial[k]).abs().max()) for k in sb3) > 1e-3, "training moved them"
    _assert_close_to_rounding(sb3, lit, atol=1e-4)


def test_a2c_on_seaquest_equals_sb3s_run_to_rounding() -> None:
    """A2C with its CnnPolicy on Seaquest as the ledger trains it (rl-zoo3's RMSpropTFLike), two envs, 50
    updates through each library's Atari stack: SB3's weights within float rounding (measured 1.5e-8).
    Seaquest is the game whose frames most depend on max-pooling colour frames before the grey conversion,
    as SB3 does; pooling grey frames instead (lit-sb3 before 2026-12-06) put the weights 2.0e-6 away.
    A2C's default, torch's RMSprop, divides by sqrt(v) + eps from v = 0, which turns the gradients'
    last-bit differences (~2e-7 on the weights after one update) into 2-3e-2 after 50, on Breakout too.
    Those differences are the two of the PPO test above, and a third: lit-sb3 takes the whole rollout in
    storage order, where SB3 permutes it, which changes the order of the heads' gradient sums."""
    pytest.importorskip("ale_py")
    import ale_py
    import gymnasium as gym
    import stable_baselines3
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
    from stable_baselines3.common.vec_env import VecFrameStack

    import lit_sb3

    gym.register_envs(ale_py)
    game, n_envs, steps = "SeaquestNoFrameskip-v4", 2, 2 * 5 * 50
    kwargs: dict[str, Any] = {"ent_coef": 0.01, "vf_coef": 0.25, "seed": SEED, "device": "cpu"}
    optimizer = {"optimizer_kwargs": {"eps": 1e-5}}
    theirs = stable_baselines3.A2C(
        "CnnPolicy",
        VecFrameStack(make_atari_env(game, n_envs=n_envs, seed=SEED), 4),
        policy_kwargs={"optimizer_class": RMSpropTFLike, **optimizer},
        **kwargs,
    )
    initial = {k: v.detach().clone() for k, v in theirs.policy.state_dict().items()}
    theirs.learn(total_timesteps=steps)
    ours = lit_sb3.A2C(
        "CnnPolicy", policy_kwargs={"optimizer_class": "rmsprop_tf_like", **optimizer}, **kwargs
    )
    ours.learn(
        total_timesteps=steps,
        env=lit_sb3.RLEnvDataModule(train_env=game, n_envs=n_envs, atari=True, seed=SEED),
    )
    lit = ours.policy.state_dict()
    sb3 = {k: v for k, v in theirs.policy.state_dict().items() if k in lit}  # less SB3's pi_/vf_ aliases
    assert sb3.keys() == lit.keys()
    assert max(float((sb3[k] - initial[k]).abs().max()) for k in sb3) > 1e-4, "training moved them"
    _assert_close_to_rounding(sb3, lit, atol=2e-7)


@pytest.mark.parametrize(("algo", "noise_type"), [("TD3", "normal"), ("DDPG", "ornstein_uhlenbeck")])
def test_action_noise_draws_sb3s_numbers(algo: str, noise_type: str) -> None:
    """Exploration noise from numpy's global generator in SB3's order (env by env, between the replay
    buffer's draws): two envs, 150 steps, every weight SB3's to rounding. Drawn from a stream of its own,
    the noise made TD3's weights differ by 0.03 after 50 gradient steps."""
    import numpy as np
    import stable_baselines3
    from stable_baselines3.common import noise as sb3_noise
    from stable_baselines3.common.env_util import make_vec_env

    import lit_sb3

    kwargs = copy.deepcopy(CONTINUOUS_KWARGS)  # SB3 writes use_sde into policy_kwargs
    sb3_class = (
        sb3_noise.NormalActionNoise if noise_type == "normal" else sb3_noise.OrnsteinUhlenbeckActionNoise
    )
    env = make_vec_env("Pendulum-v1", n_envs=N_ENVS, seed=SEED)
    theirs = getattr(stable_baselines3, algo)(
        "MlpPolicy", env, action_noise=sb3_class(np.zeros(1), np.full(1, 0.3)), **kwargs
    )
    ours = lit_sb3.get_algo_class(algo.lower())(
        "MlpPolicy", action_noise={"type": noise_type, "sigma": 0.3}, **kwargs
    )
    theirs.learn(total_timesteps=150)
    ours.learn(
        total_timesteps=150,
        env=lit_sb3.RLEnvDataModule(train_env="Pendulum-v1", n_envs=N_ENVS, seed=SEED),
    )
    _assert_close_to_rounding(theirs.policy.state_dict(), ours.policy.state_dict(), atol=1e-5)


@pytest.mark.parametrize(
    ("algo", "kwargs", "steps"),
    [
        ("PPO", {"n_steps": 64, "batch_size": 32}, 512),
        ("A2C", {}, 400),
        ("SAC", {"learning_starts": 100, "batch_size": 32, "train_freq": 3}, 200),
    ],
)
def test_gsde_redraws_its_exploration_matrices_as_sb3(algo: str, kwargs: dict[str, Any], steps: int) -> None:
    """gSDE with ``sde_sample_freq=4``: SB3 draws new exploration matrices at the start of each rollout (or
    ``train_freq`` chunk) and again before every 4th step of it, step 0 included, and none after a chunk's
    last step. Drawn at other points, the matrices and torch's generator part from SB3's (PPO's weights
    differed by 0.1 after 4 rollouts, SAC's by 0.016 after 100 steps)."""
    import stable_baselines3
    from stable_baselines3.common.env_util import make_vec_env

    import lit_sb3

    n_envs = 1 if algo == "SAC" else N_ENVS
    settings: dict[str, Any] = {
        **kwargs,
        "use_sde": True,
        "sde_sample_freq": 4,
        "seed": SEED,
        "device": "cpu",
        "policy_kwargs": {"optimizer_kwargs": {"fused": False}} if algo != "A2C" else None,
    }
    env = make_vec_env("Pendulum-v1", n_envs=n_envs, seed=SEED)
    theirs = getattr(stable_baselines3, algo)("MlpPolicy", env, **settings).learn(total_timesteps=steps)
    ours = lit_sb3.get_algo_class(algo.lower())("MlpPolicy", **settings)
    ours.learn(
        total_timesteps=steps,
        env=lit_sb3.RLEnvDataModule(train_env="Pendulum-v1", n_envs=n_envs, seed=SEED),
    )
    _assert_close_to_rounding(theirs.policy.state_dict(), ours.policy.state_dict(), atol=1e-5)
