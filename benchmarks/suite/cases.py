"""The benchmark cases: what runs, with which hyperparameters, for how long. Plain data only.

Each case trains the same algorithm in both libraries on the same environment with the same
hyperparameters. ``hyperparams`` are written once, in the notation lit-sb3 accepts (rl-zoo3's ``"lin_x"``
linear schedules, action-noise specs such as ``{"type": "normal", "sigma": 0.1}``);
``suite.libraries`` translates them into the objects SB3 expects. ``steps`` is rl-zoo3's budget for the
pair (or the documented fraction of it, see ``note``); ``quick_steps`` is the budget under ``--quick``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CASES", "QUICK", "SBX_CLASSES", "Case", "by_name"]

# SBX (SB3 in JAX, ``sbx-rl``) classes of the algorithms it implements; cases of others have no SBX run.
SBX_CLASSES: dict[str, str] = {
    "ppo": "sbx:PPO", "dqn": "sbx:DQN", "sac": "sbx:SAC", "td3": "sbx:TD3", "ddpg": "sbx:DDPG",
    "tqc": "sbx:TQC", "crossq": "sbx:CrossQ",
}  # fmt: skip

# SB3's default learning_starts of the off-policy algorithms: random actions, no updates before it.
_DEFAULT_LEARNING_STARTS = {
    "dqn": 100,
    "qrdqn": 100,
    "sac": 100,
    "td3": 100,
    "ddpg": 100,
    "tqc": 100,
    "crossq": 100,
}


@dataclass(frozen=True)
class Case:
    """One benchmark: an algorithm, an environment and a configuration.

    Args:
        name: unique id, used on the command line and in file names.
        algo: the lit-sb3 registry name (``lit_sb3.list_algos()``); the case is skipped without it.
        sb3: the SB3 / sb3-contrib class, ``"module:Class"``.
        env: gymnasium env id.
        config: short label of the configuration, shown in the table.
        steps: environment steps per run in a full run.
        quick_steps: environment steps per run under ``--quick``.
        hyperparams: keyword arguments for both libraries' constructors.
        n_envs: parallel training environments.
        policy: policy alias, the same in both libraries.
        wrapper: key into ``suite.envs.WRAPPERS``, applied to every env (training and evaluation).
        normalize_obs: running observation normalization (SB3 ``VecNormalize(norm_reward=False)``,
            lit-sb3 ``RLEnvDataModule(normalize="observation")``).
        action_masks: evaluation passes the env's ``action_masks()`` to ``predict``.
        recurrent: evaluation carries the policy's recurrent state between steps.
        lit_trainer: extra ``RLTrainer`` arguments for the lit-sb3 run only: accelerations a user switches
            on, such as ``{"precision": "bf16-mixed"}`` (SB3 has no equivalent and runs in float32).
        lit_hyperparams: extra constructor arguments for the lit-sb3 run only, such as ``{"compile": True}``
            (each gradient step as one compiled program; SB3 has no equivalent).
        note: anything a reader of the table should know about this case.
        atari: ``env`` is an Atari game, preprocessed by each library the way its users do it: SB3's
            ``AtariWrapper`` + ``VecFrameStack(4)``, lit-sb3's ``RLEnvDataModule(atari=True)`` (the same
            steps). Curves and evaluations are whole games with unclipped scores.
        normalize_reward: also normalize rewards (SB3 ``VecNormalize(norm_reward=True, gamma=gamma)``,
            lit-sb3 ``normalize=True``), as rl-zoo3's ``normalize: true``.
    """

    name: str
    algo: str
    sb3: str
    env: str
    config: str
    steps: int
    quick_steps: int
    hyperparams: dict[str, Any] = field(default_factory=dict)
    n_envs: int = 1
    policy: str = "MlpPolicy"
    wrapper: str | None = None
    normalize_obs: bool = False
    action_masks: bool = False
    recurrent: bool = False
    lit_trainer: dict[str, Any] = field(default_factory=dict)
    lit_hyperparams: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    atari: bool = False
    normalize_reward: bool = False

    @property
    def sbx(self) -> str | None:
        """SBX's class for this case (``"sbx:SAC"``), or None where SBX has no such algorithm or policy."""
        if self.policy != "MlpPolicy" or self.action_masks or self.recurrent:
            return None
        return SBX_CLASSES.get(self.algo)

    def steady_from(self, steps: int) -> int:
        """The environment step where the steady-state clock starts: halfway through the learning part of
        the run (after ``learning_starts``), so random actions, the first updates and JIT compilation
        are behind it."""
        start = int(self.hyperparams.get("learning_starts", _DEFAULT_LEARNING_STARTS.get(self.algo, 0)))
        return start + max(steps - start, 0) // 2

    @property
    def sb3_label(self) -> str:
        """How the table names the reference library: ``SB3`` or ``sb3-contrib``."""
        return "sb3-contrib" if self.sb3.startswith("sb3_contrib") else "SB3"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# rl-zoo3's tuned PPO settings for CartPole-v1 (ppo.yml), also its MaskablePPO and RecurrentPPO
# (ppo_lstm.yml, CartPoleNoVel-v1) settings.
_PPO_ZOO_CARTPOLE = {
    "n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20, "ent_coef": 0.0,
    "learning_rate": "lin_0.001", "clip_range": "lin_0.2",
}  # fmt: skip

# rl-zoo3's RecurrentPPO policy for CartPoleNoVel-v1 (ppo_lstm.yml): the heads, then the LSTM.
_ZOO_NOVEL_HEADS = {"ortho_init": False, "activation_fn": "relu", "net_arch": {"pi": [64], "vf": [64]}}
_ZOO_NOVEL_LSTM = {"lstm_hidden_size": 64, "enable_critic_lstm": True}

# rl-zoo3's TD3 / DDPG settings for Pendulum-v1 (td3.yml, ddpg.yml).
_TD3_ZOO_PENDULUM = {
    "gamma": 0.98, "buffer_size": 200_000, "learning_starts": 10_000,
    "action_noise": {"type": "normal", "sigma": 0.1}, "gradient_steps": 1, "train_freq": 1,
    "learning_rate": 1e-3, "policy_kwargs": {"net_arch": [400, 300]},
}  # fmt: skip

CASES: list[Case] = [
    # --- PPO on CartPole-v1 (rl-zoo3 budget 100k) ---
    Case("ppo-zoo-8env", "ppo", "stable_baselines3:PPO", "CartPole-v1", "rl-zoo3, 8 envs", 100_000, 20_000,
         _PPO_ZOO_CARTPOLE, n_envs=8),
    Case("ppo-zoo-8env-compile", "ppo", "stable_baselines3:PPO", "CartPole-v1", "rl-zoo3, 8 envs, lit-sb3 compile=True",
         100_000, 20_000, _PPO_ZOO_CARTPOLE, n_envs=8, lit_hyperparams={"compile": True},
         note="lit-sb3's minibatch update as one torch.compile program; the whole run includes the compile "
              "(its workers' CPU too), from inductor's on-disk cache when warm."),
    Case("ppo-default-8env", "ppo", "stable_baselines3:PPO", "CartPole-v1", "SB3 defaults, 8 envs", 100_000,
         20_000, n_envs=8),
    Case("ppo-default-8env-compile", "ppo", "stable_baselines3:PPO", "CartPole-v1",
         "SB3 defaults, 8 envs, lit-sb3 compile=True", 100_000, 20_000, n_envs=8, lit_hyperparams={"compile": True},
         note="lit-sb3's minibatch update as one torch.compile program; the whole run includes the compile."),
    Case("ppo-default-1env", "ppo", "stable_baselines3:PPO", "CartPole-v1", "SB3 defaults, 1 env", 100_000,
         20_000),
    # --- A2C: updates every n_steps * n_envs = 40 / 64 steps, so per-iteration overhead shows most ---
    Case("a2c-zoo-cartpole", "a2c", "stable_baselines3:A2C", "CartPole-v1", "rl-zoo3, 8 envs", 500_000, 30_000,
         {"ent_coef": 0.0}, n_envs=8, note="rl-zoo3's entry is SB3's defaults with 8 envs."),
    Case("a2c-zoo-cartpole-compile", "a2c", "stable_baselines3:A2C", "CartPole-v1",
         "rl-zoo3, 8 envs, lit-sb3 compile=True", 500_000, 30_000, {"ent_coef": 0.0}, n_envs=8,
         lit_hyperparams={"compile": True},
         note="lit-sb3's update (RMSprop included) as one torch.compile program; the whole run includes the "
              "compile."),
    Case("a2c-default-1env", "a2c", "stable_baselines3:A2C", "CartPole-v1", "SB3 defaults, 1 env", 100_000,
         10_000, note="An update every 5 env steps: the tightest on-policy loop."),
    Case("a2c-zoo-pendulum", "a2c", "stable_baselines3:A2C", "Pendulum-v1", "rl-zoo3 (gSDE), 8 envs", 200_000,
         30_000,
         {"ent_coef": 0.0, "max_grad_norm": 0.5, "n_steps": 8, "gae_lambda": 0.9, "vf_coef": 0.4,
          "gamma": 0.9, "use_rms_prop": True, "normalize_advantage": False, "learning_rate": "lin_7e-4",
          "use_sde": True, "policy_kwargs": {"log_std_init": -2, "ortho_init": False}},
         n_envs=8, note="rl-zoo3 trains 1M steps with VecNormalize; here 200k steps, no normalization."),
    # --- TRPO (rl-zoo3 budget 100k): time goes into the update (CG, line search, critic epochs) ---
    Case("trpo-zoo-cartpole", "trpo", "sb3_contrib:TRPO", "CartPole-v1", "rl-zoo3, 2 envs", 100_000, 20_000,
         {"n_steps": 512, "batch_size": 512, "cg_damping": 1e-3, "gae_lambda": 0.98, "gamma": 0.99,
          "learning_rate": 1e-3, "n_critic_updates": 20},
         n_envs=2),
    Case("trpo-zoo-pendulum", "trpo", "sb3_contrib:TRPO", "Pendulum-v1", "rl-zoo3 (gSDE), 2 envs", 100_000,
         20_000,
         {"n_steps": 1024, "gamma": 0.9, "n_critic_updates": 15, "use_sde": True, "sde_sample_freq": 4},
         n_envs=2, note="rl-zoo3 also normalizes observations; not here."),
    Case("trpo-zoo-cartpole-compile", "trpo", "sb3_contrib:TRPO", "CartPole-v1",
         "rl-zoo3, 2 envs, lit-sb3 compile=True", 100_000, 20_000,
         {"n_steps": 512, "batch_size": 512, "cg_damping": 1e-3, "gae_lambda": 0.98, "gamma": 0.99,
          "learning_rate": 1e-3, "n_critic_updates": 20},
         n_envs=2, lit_hyperparams={"compile": True},
         note="lit-sb3's critic minibatch step as one torch.compile program (the policy step stays eager); the "
              "whole run includes the compile."),
    Case("trpo-zoo-pendulum-compile", "trpo", "sb3_contrib:TRPO", "Pendulum-v1",
         "rl-zoo3 (gSDE), 2 envs, lit-sb3 compile=True", 100_000, 20_000,
         {"n_steps": 1024, "gamma": 0.9, "n_critic_updates": 15, "use_sde": True, "sde_sample_freq": 4},
         n_envs=2, lit_hyperparams={"compile": True},
         note="lit-sb3's critic minibatch step as one torch.compile program (the policy step stays eager); the "
              "whole run includes the compile. rl-zoo3 also normalizes observations; not here."),
    # --- RecurrentPPO on CartPole without velocities (rl-zoo3 budget 100k) ---
    Case("recurrent-ppo-zoo-8env", "recurrent_ppo", "sb3_contrib:RecurrentPPO", "CartPole-v1",
         "rl-zoo3, no velocities, 8 envs", 100_000, 20_000, _PPO_ZOO_CARTPOLE, n_envs=8,
         policy="MlpLstmPolicy", wrapper="no_velocity", recurrent=True),
    Case("recurrent-ppo-zoo-full", "recurrent_ppo", "sb3_contrib:RecurrentPPO", "CartPole-v1",
         "rl-zoo3's full CartPoleNoVel entry, 8 envs", 100_000, 20_000,
         {**_PPO_ZOO_CARTPOLE, "policy_kwargs": {**_ZOO_NOVEL_HEADS, **_ZOO_NOVEL_LSTM}}, n_envs=8,
         policy="MlpLstmPolicy", wrapper="no_velocity", normalize_obs=True, recurrent=True,
         note="ppo_lstm.yml: observation normalization, ReLU, 64-unit LSTM for actor and critic."),
    # The same settings and heads without the LSTM: what memory buys (PPO cannot infer the velocities).
    Case("ppo-zoo-novel", "ppo", "stable_baselines3:PPO", "CartPole-v1",
         "rl-zoo3's CartPoleNoVel entry without the LSTM, 8 envs", 100_000, 20_000,
         {**_PPO_ZOO_CARTPOLE, "policy_kwargs": _ZOO_NOVEL_HEADS}, n_envs=8, wrapper="no_velocity",
         normalize_obs=True),
    Case("recurrent-ppo-zoo-8env-compile", "recurrent_ppo", "sb3_contrib:RecurrentPPO", "CartPole-v1",
         "rl-zoo3, no velocities, 8 envs, lit-sb3 compile=True", 100_000, 20_000, _PPO_ZOO_CARTPOLE, n_envs=8,
         policy="MlpLstmPolicy", wrapper="no_velocity", recurrent=True, lit_hyperparams={"compile": True},
         note="lit-sb3's minibatch update (the LSTMs unrolled over a 32 x 9 grid) as one torch.compile program; "
              "the whole run includes the compile."),
    Case("recurrent-ppo-default-8env", "recurrent_ppo", "sb3_contrib:RecurrentPPO", "CartPole-v1",
         "sb3-contrib defaults, no velocities, 8 envs", 100_000, 20_000, n_envs=8, policy="MlpLstmPolicy",
         wrapper="no_velocity", recurrent=True),
    # --- MaskablePPO ---
    Case("maskable-ppo-arms-4env", "maskable_ppo", "sb3_contrib:MaskablePPO", "BenchMaskedArms-v0",
         "1024-step rollouts, 4 envs", 100_000, 20_000, {"n_steps": 256, "batch_size": 64, "n_epochs": 10},
         n_envs=4, action_masks=True,
         note="Masked arms: a random allowed arm earns ~8 per episode, the best ~15; forbidden picks must be 0."),
    Case("maskable-ppo-zoo-cartpole", "maskable_ppo", "sb3_contrib:MaskablePPO", "CartPole-v1",
         "rl-zoo3 PPO, all actions allowed, 8 envs", 100_000, 20_000, _PPO_ZOO_CARTPOLE, n_envs=8,
         wrapper="all_actions_allowed", action_masks=True),
    Case("maskable-ppo-arms-4env-compile", "maskable_ppo", "sb3_contrib:MaskablePPO", "BenchMaskedArms-v0",
         "1024-step rollouts, 4 envs, lit-sb3 compile=True", 100_000, 20_000,
         {"n_steps": 256, "batch_size": 64, "n_epochs": 10}, n_envs=4, action_masks=True,
         lit_hyperparams={"compile": True},
         note="lit-sb3's masked minibatch update as one torch.compile program; the whole run includes the compile."),
    Case("maskable-ppo-zoo-cartpole-compile", "maskable_ppo", "sb3_contrib:MaskablePPO", "CartPole-v1",
         "rl-zoo3 PPO, all actions allowed, 8 envs, lit-sb3 compile=True", 100_000, 20_000, _PPO_ZOO_CARTPOLE,
         n_envs=8, wrapper="all_actions_allowed", action_masks=True, lit_hyperparams={"compile": True},
         note="lit-sb3's masked minibatch update as one torch.compile program; the whole run includes the compile."),
    # --- ARS ---
    Case("ars-zoo-cartpole", "ars", "sb3_contrib:ARS", "CartPole-v1", "rl-zoo3, linear policy", 50_000, 20_000,
         {"n_delta": 2}, policy="LinearPolicy"),
    Case("ars-zoo-pendulum", "ars", "sb3_contrib:ARS", "Pendulum-v1", "rl-zoo3, obs normalization", 200_000,
         20_000,
         {"learning_rate": 0.018, "n_delta": 4, "n_top": 1, "delta_std": 0.1,
          "policy_kwargs": {"net_arch": [16]}, "zero_policy": False},
         normalize_obs=True, note="A tenth of rl-zoo3's 2M-step budget."),
    Case("ars-default-4env", "ars", "sb3_contrib:ARS", "CartPole-v1", "sb3-contrib defaults, 4 envs", 100_000,
         20_000, n_envs=4,
         note="With several envs sb3-contrib scores each candidate on all envs; lit-sb3 runs one per env."),
    # --- DQN on CartPole-v1 (rl-zoo3 budget 50k) ---
    Case("dqn-default", "dqn", "stable_baselines3:DQN", "CartPole-v1", "SB3 defaults", 50_000, 10_000),
    Case("dqn-zoo", "dqn", "stable_baselines3:DQN", "CartPole-v1", "rl-zoo3", 50_000, 10_000,
         {"learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000, "learning_starts": 1000,
          "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
          "exploration_fraction": 0.16, "exploration_final_eps": 0.04, "policy_kwargs": {"net_arch": [256, 256]}}),
    Case("qrdqn-zoo", "qrdqn", "sb3_contrib:QRDQN", "CartPole-v1", "rl-zoo3", 50_000, 10_000,
         {"learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000, "learning_starts": 1000,
          "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
          "exploration_fraction": 0.16, "exploration_final_eps": 0.04,
          "policy_kwargs": {"net_arch": [256, 256], "n_quantiles": 10}}),
    # --- Off-policy continuous control on Pendulum-v1 (rl-zoo3 budget 20k) ---
    Case("sac-default", "sac", "stable_baselines3:SAC", "Pendulum-v1", "SB3 defaults", 20_000, 1_000),
    Case("sac-zoo", "sac", "stable_baselines3:SAC", "Pendulum-v1", "rl-zoo3", 20_000, 1_000,
         {"learning_rate": 1e-3}),
    Case("td3-default", "td3", "stable_baselines3:TD3", "Pendulum-v1", "SB3 defaults (no noise)", 20_000, 1_000),
    Case("td3-zoo", "td3", "stable_baselines3:TD3", "Pendulum-v1", "rl-zoo3", 20_000, 12_000, _TD3_ZOO_PENDULUM,
         note="The first 10k steps act at random (learning_starts)."),
    Case("ddpg-zoo", "ddpg", "stable_baselines3:DDPG", "Pendulum-v1", "rl-zoo3", 20_000, 12_000,
         _TD3_ZOO_PENDULUM, note="The first 10k steps act at random (learning_starts)."),
    # --- The same with bf16 autocast switched on in lit-sb3 (RLTrainer(precision="bf16-mixed")) ---
    Case("sac-default-bf16", "sac", "stable_baselines3:SAC", "Pendulum-v1", "SB3 defaults, lit-sb3 bf16-mixed",
         20_000, 1_000, lit_trainer={"precision": "bf16-mixed"},
         note="lit-sb3 under bf16 autocast against SB3 in float32: an acceleration only lit-sb3 offers."),
    Case("td3-default-bf16", "td3", "stable_baselines3:TD3", "Pendulum-v1",
         "SB3 defaults (no noise), lit-sb3 bf16-mixed", 20_000, 1_000, lit_trainer={"precision": "bf16-mixed"}),
    Case("tqc-zoo", "tqc", "sb3_contrib:TQC", "Pendulum-v1", "rl-zoo3", 20_000, 1_000, {"learning_rate": 1e-3}),
    # --- The same with lit-sb3's compiled update (compile=True: one torch.compile'd program per gradient step;
    # the first update of a run compiles, from inductor's on-disk cache when it is warm) ---
    Case("dqn-default-compiled", "dqn", "stable_baselines3:DQN", "CartPole-v1", "SB3 defaults, lit-sb3 compile=True",
         50_000, 10_000, lit_hyperparams={"compile": True}),
    Case("sac-default-compiled", "sac", "stable_baselines3:SAC", "Pendulum-v1", "SB3 defaults, lit-sb3 compile=True",
         20_000, 1_000, lit_hyperparams={"compile": True}),
    Case("sac-default-bf16-compiled", "sac", "stable_baselines3:SAC", "Pendulum-v1",
         "SB3 defaults, lit-sb3 compile=True + bf16-mixed", 20_000, 1_000, lit_hyperparams={"compile": True},
         lit_trainer={"precision": "bf16-mixed"}),
    Case("tqc-zoo-compiled", "tqc", "sb3_contrib:TQC", "Pendulum-v1", "rl-zoo3, lit-sb3 compile=True", 20_000, 1_000,
         {"learning_rate": 1e-3}, lit_hyperparams={"compile": True}),
    Case("tqc-zoo-bf16-compiled", "tqc", "sb3_contrib:TQC", "Pendulum-v1", "rl-zoo3, lit-sb3 compile=True + bf16-mixed",
         20_000, 1_000, {"learning_rate": 1e-3}, lit_hyperparams={"compile": True},
         lit_trainer={"precision": "bf16-mixed"}),
    Case("crossq-zoo", "crossq", "sb3_contrib:CrossQ", "Pendulum-v1", "rl-zoo3", 20_000, 1_000,
         {"policy_delay": 2, "policy_kwargs": {"net_arch": [256, 256]}}),
    Case("crossq-zoo-compiled", "crossq", "sb3_contrib:CrossQ", "Pendulum-v1", "rl-zoo3, lit-sb3 compile=True",
         20_000, 1_000, {"policy_delay": 2, "policy_kwargs": {"net_arch": [256, 256]}},
         lit_hyperparams={"compile": True}),
    Case("crossq-zoo-bf16-compiled", "crossq", "sb3_contrib:CrossQ", "Pendulum-v1",
         "rl-zoo3, lit-sb3 compile=True + bf16-mixed", 20_000, 1_000,
         {"policy_delay": 2, "policy_kwargs": {"net_arch": [256, 256]}}, lit_hyperparams={"compile": True},
         lit_trainer={"precision": "bf16-mixed"}),
]  # fmt: skip

# The --quick subset: one representative per loop (on-policy with many small updates, the tightest
# per-iteration loop, replay with few updates, replay with one update per step).
QUICK: list[str] = ["ppo-zoo-8env", "ppo-zoo-8env-compile", "a2c-zoo-cartpole", "dqn-default", "sac-default"]


# --- Real workloads (issue 18): Atari and MuJoCo with rl-zoo3's tuned settings, at budgets this 2-core
# machine can run (rl-zoo3 trains 10M Atari steps and 1M MuJoCo steps). Budgets are env steps; an Atari
# step is 4 frames. Off-policy warm-ups (learning_starts, DQN's exploration) are cut to fit the budget.
_PPO_ZOO_ATARI = {
    "n_steps": 128,
    "n_epochs": 4,
    "batch_size": 256,
    "learning_rate": "lin_2.5e-4",
    "clip_range": "lin_0.1",
    "vf_coef": 0.5,
    "ent_coef": 0.01,
}
_A2C_ZOO_ATARI = {
    "ent_coef": 0.01,
    "vf_coef": 0.25,
    "policy_kwargs": {"optimizer_class": "rmsprop_tf_like", "optimizer_kwargs": {"eps": 1e-5}},
}
_DQN_ATARI = {
    "buffer_size": 10_000,
    "learning_rate": 1e-4,
    "batch_size": 32,
    "learning_starts": 1_000,
    "target_update_interval": 1000,
    "train_freq": 4,
    "gradient_steps": 1,
    "exploration_fraction": 0.1,
    "exploration_final_eps": 0.01,
    "optimize_memory_usage": True,
    "replay_buffer_kwargs": {"handle_timeout_termination": False},
}
_QRDQN_ATARI = {
    "buffer_size": 10_000,
    "learning_starts": 1_000,
    "exploration_fraction": 0.025,
    "optimize_memory_usage": True,
    "replay_buffer_kwargs": {"handle_timeout_termination": False},
}
_ATARI_NOTE = (
    "rl-zoo3: 10M steps{extra}. Here {steps} steps (x4 frames), 1 seed: a 2-core machine shared by 8 agents."
)
_TD3_ZOO_MUJOCO = {
    "learning_starts": 1_000,
    "action_noise": {"type": "normal", "sigma": 0.1},
    "train_freq": 1,
    "gradient_steps": 1,
    "learning_rate": 1e-3,
    "batch_size": 256,
    "policy_kwargs": {"net_arch": [400, 300]},
}
_PPO_ZOO_MUJOCO = {
    "HalfCheetah-v5": {
        "batch_size": 64,
        "n_steps": 512,
        "gamma": 0.98,
        "learning_rate": 2.0633e-05,
        "ent_coef": 0.000401762,
        "clip_range": 0.1,
        "n_epochs": 20,
        "gae_lambda": 0.92,
        "max_grad_norm": 0.8,
        "vf_coef": 0.58096,
        "policy_kwargs": {
            "log_std_init": -2,
            "ortho_init": False,
            "activation_fn": "relu",
            "net_arch": {"pi": [256, 256], "vf": [256, 256]},
        },
    },
    "Hopper-v5": {
        "batch_size": 32,
        "n_steps": 512,
        "gamma": 0.999,
        "learning_rate": 9.80828e-05,
        "ent_coef": 0.00229519,
        "clip_range": 0.2,
        "n_epochs": 5,
        "gae_lambda": 0.99,
        "max_grad_norm": 0.7,
        "vf_coef": 0.835671,
        "policy_kwargs": {
            "log_std_init": -2,
            "ortho_init": False,
            "activation_fn": "relu",
            "net_arch": {"pi": [256, 256], "vf": [256, 256]},
        },
    },
    "Walker2d-v5": {
        "batch_size": 32,
        "n_steps": 512,
        "gamma": 0.99,
        "learning_rate": 5.05041e-05,
        "ent_coef": 0.000585045,
        "clip_range": 0.1,
        "n_epochs": 20,
        "gae_lambda": 0.95,
        "max_grad_norm": 1,
        "vf_coef": 0.871923,
    },
}
# Budgets (env steps per run) as run for the README table on a loaded 2-core machine.
ATARI_STEPS = {
    "ppo-atari-pong": 10_000,
    "a2c-atari-pong": 10_000,
    "dqn-atari-pong": 10_000,
    "ppo-atari-breakout": 5_000,
    "a2c-atari-breakout": 5_000,
}
ATARI_OFF_POLICY_STEPS, MUJOCO_OFF_POLICY_STEPS, MUJOCO_PPO_STEPS = 3_000, 2_000, 4_096


def _real_workloads() -> list[Case]:
    cases = []
    short = "; buffer 10k (uint8, optimize_memory_usage), learning_starts 1k"
    atari = [  # (algo, SB3 class, config, hyperparameters, n_envs, note extra)
        ("ppo", "stable_baselines3:PPO", "rl-zoo3 atari, 8 envs", _PPO_ZOO_ATARI, 8, ""),
        ("a2c", "stable_baselines3:A2C", "rl-zoo3 atari, 16 envs", _A2C_ZOO_ATARI, 16, ""),
        ("dqn", "stable_baselines3:DQN", "rl-zoo3 atari, short warm-up", _DQN_ATARI, 1, short),
        ("qrdqn", "sb3_contrib:QRDQN", "rl-zoo3 atari, short warm-up", _QRDQN_ATARI, 1, short),
    ]
    for game in ("Pong", "Breakout"):
        for algo, sb3, config, hyperparams, n_envs, extra in atari:
            name = f"{algo}-atari-{game.lower()}"
            steps = ATARI_STEPS.get(name, ATARI_OFF_POLICY_STEPS)
            note = _ATARI_NOTE.format(extra=extra, steps=steps)
            cases.append(
                Case(name, algo, sb3, f"{game}NoFrameskip-v4", config, steps, 2_000, hyperparams, n_envs=n_envs,
                     policy="CnnPolicy", atari=True, note=note)
            )  # fmt: skip
    off_note = (f"rl-zoo3: 1M steps, learning_starts 10k; here {MUJOCO_OFF_POLICY_STEPS} steps, "
                "learning_starts 1k, 1 seed.")  # fmt: skip
    for env in ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5"):
        low = env.split("-")[0].lower()
        tqc = {
            "learning_starts": 1_000,
            **({"top_quantiles_to_drop_per_net": 5} if env == "Hopper-v5" else {}),
        }
        cases += [
            Case(f"sac-mujoco-{low}", "sac", "stable_baselines3:SAC", env, "rl-zoo3, short warm-up",
                 MUJOCO_OFF_POLICY_STEPS, 1_500, {"learning_starts": 1_000}, note=off_note),
            Case(f"td3-mujoco-{low}", "td3", "stable_baselines3:TD3", env, "rl-zoo3, short warm-up",
                 MUJOCO_OFF_POLICY_STEPS, 1_500, _TD3_ZOO_MUJOCO, note=off_note),
            Case(f"tqc-mujoco-{low}", "tqc", "sb3_contrib:TQC", env, "rl-zoo3, short warm-up",
                 MUJOCO_OFF_POLICY_STEPS, 1_500, tqc, note=off_note),
            Case(f"ppo-mujoco-{low}", "ppo", "stable_baselines3:PPO", env, "rl-zoo3 (VecNormalize)",
                 MUJOCO_PPO_STEPS, 2_048, _PPO_ZOO_MUJOCO[env], normalize_obs=True, normalize_reward=True,
                 note=f"rl-zoo3: 1M steps; here {MUJOCO_PPO_STEPS}, 1 seed."),
        ]  # fmt: skip
    return cases


CASES.extend(_real_workloads())


def by_name(name: str) -> Case:
    """The case called ``name``; a KeyError listing the valid names otherwise."""
    for case in CASES:
        if case.name == name:
            return case
    raise KeyError(f"No benchmark case {name!r}; choose from: {', '.join(c.name for c in CASES)}.")


_names = [case.name for case in CASES]
assert len(set(_names)) == len(_names), "benchmark case names must be unique"
assert set(QUICK) <= set(_names), "QUICK names a case that does not exist"
