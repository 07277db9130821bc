"""The learning-ledger cases: what trains, for how long, how often it is evaluated. Plain data only.

Every case trains one algorithm on one environment with the same hyperparameters in both libraries.
``zoo`` is rl-zoo3's entry for the pair exactly as ``lit_sb3.tuned_hyperparameters(algo, env)["model"]``
returns it (a test checks that they agree); ``overrides`` are the changes this ledger makes so that the
entry fits the budget, and ``why`` says why. ``hyperparams`` = ``zoo`` updated by ``overrides``, written in
lit-sb3's plain-JSON notation; ``suite.libraries.sb3_hyperparams`` turns them into SB3's objects.

Budgets: Atari at 100k agent steps (400k frames, the Atari-100k setting of Kaiser et al. 2019), except the
on-policy Atari cases at 500k (2M frames, see ``ON_POLICY_ATARI_WHY``); MuJoCo off-policy at 100k steps,
MuJoCo PPO at 300k. Each Atari game was chosen so that its budget separates a learning run from a random
policy (``RETIRED`` lists the cases that did not, with what their records showed). ``cpu_s`` is the CPU
cost of one record (one library, one seed, training and all evaluations) on one core of this machine, see
``COSTS`` below; the report uses the records' own CPU seconds once a case has them.

``CASES`` is in ``--next`` order: the cheapest case of every family first, so a partial ledger already
covers every algorithm.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ATARI_FRAMES", "CASES", "CHEAP_CPU_S", "CHEAP_SEEDS", "MORE_SEEDS_WHY", "RETIRED", "SEEDS", "SETTINGS",
    "TEST_CASES", "LearningCase", "RetiredCase", "by_name",
]  # fmt: skip

# Three seeds per (case, library): the ledger's n. Cases whose record costs at most ``CHEAP_CPU_S`` run
# ``CHEAP_SEEDS`` (the "5 where cheap"); their two extra seeds come after every case's third.
SEEDS = (0, 1, 2)
CHEAP_SEEDS = (0, 1, 2, 3, 4)
CHEAP_CPU_S = 600.0
# Cases that run ``CHEAP_SEEDS`` although a record costs more, and why: a verdict that more seeds must settle.
MORE_SEEDS_WHY: dict[str, str] = {
    "dqn-roadrunner": (
        "at 3 seeds per library its intervals did not overlap (final SB3 3,563 [2,770, 3,990], lit-sb3 2,017 "
        "[1,030, 2,630]), though both libraries run the same computation (weights bit for bit over 12,000 "
        "steps of this case's set-up) and other views of the same runs narrow or reverse the gap (SB3 / "
        "lit-sb3: mean of the last 3 evaluations 3,048 / 2,789, training games of the last interval 2,324 / "
        "2,844): one run's 10-game final snapshot swings by more than the gap (SB3 seed 2 scored 610, "
        "2,430, 3,990 at its last three points, lit-sb3 seed 1 6,090 then 2,630), so two more seeds per "
        "library decide"
    ),
}

# The record fields (``LearningCase.describe``) that define a run: a record made under other values is stale.
# ``why``, ``zoo`` and ``overrides`` only explain ``hyperparams``.
SETTINGS = (
    "budget", "eval_every", "eval_episodes", "eval_deterministic", "n_envs", "policy", "atari", "atari_frames",
    "normalize", "hyperparams",
)  # fmt: skip

# How an Atari case's observations are made (``atari_frames``). SB3 has always max-pooled the last two colour
# frames and then converted the result to grey; lit-sb3 did the reverse (gymnasium's ``AtariPreprocessing``)
# until 2026-12-06, which gives other pixels on 44 % of Road Runner's and 63 % of Seaquest's observations
# (``lit_sb3_core.envs.atari``). lit-sb3 Atari records without the field were made that way, so they are stale.
ATARI_FRAMES = "max of the last two RGB frames, then grey (SB3's order)"
LIT_SB3_ATARI_FRAMES_BEFORE = "max of the last two grey frames (gymnasium's AtariPreprocessing)"


@dataclass(frozen=True)
class LearningCase:
    """One ledger case.

    Args:
        name: unique id, used on the command line and as the results folder name.
        algo: lit-sb3 registry name.
        sb3: the SB3 / sb3-contrib class, ``"module:Class"``.
        env: gymnasium env id.
        steps: the step budget of one run (environment steps, all envs together; Atari agent steps).
        eval_every: evaluate after every this many steps (and at the end).
        zoo: rl-zoo3's model entry for (algo, env), as ``lit_sb3.tuned_hyperparameters`` has it, less
            ``policy`` (see ``policy``).
        overrides: the ledger's changes to ``zoo``.
        why: why each override was made (empty when there is none).
        n_envs: parallel training environments (rl-zoo3's ``n_envs``).
        policy: policy alias, the same in both libraries.
        atari: Atari preprocessing (SB3 ``AtariWrapper`` + ``VecFrameStack(4)``; lit-sb3
            ``RLEnvDataModule(atari=True)``); evaluation plays whole games with unclipped scores, with
            sampled actions (see ``eval_deterministic``).
        normalize: rl-zoo3's ``normalize: true`` (SB3 ``VecNormalize``, lit-sb3 ``normalize=True``).
        eval_episodes: evaluation episodes (whole games on Atari) per evaluation point.
        random_return: mean return of a uniformly random policy (the report's normalization floor): the
            published reference scores, Atari from the DQN / Atari-100k tables (Breakout 1.7, Seaquest 68.4,
            Road Runner 11.5),
            MuJoCo D4RL's random-policy references (Hopper -20.3, HalfCheetah -280.2, Walker2d 1.6).
        held_action_return: Atari only: the best mean score of one action held for whole games, evaluated as
            the ledger evaluates (``constant_policies.py``, 10 games per action). A curve that stays near it
            may be a policy collapsed onto one good button rather than one that learned the game; on Road
            Runner it is far above the random policy's.
        seeds: the seeds each library runs: ``SEEDS``, or ``CHEAP_SEEDS`` for a case that costs at most
            ``CHEAP_CPU_S`` per record or is named in ``MORE_SEEDS_WHY``.
    """

    name: str
    algo: str
    sb3: str
    env: str
    steps: int
    eval_every: int
    zoo: dict[str, Any]
    overrides: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    n_envs: int = 1
    policy: str = "MlpPolicy"
    atari: bool = False
    normalize: bool = False
    eval_episodes: int = 10
    random_return: float = 0.0
    held_action_return: float | None = None
    seeds: tuple[int, ...] = SEEDS

    @property
    def hyperparams(self) -> dict[str, Any]:
        """The constructor arguments both libraries get: ``zoo`` updated by ``overrides``."""
        out = copy.deepcopy(self.zoo)
        out.update(copy.deepcopy(self.overrides))
        return out

    @property
    def eval_deterministic(self) -> bool:
        """Whether evaluation takes the policy's mode (MuJoCo) or samples from it (Atari).

        Atari samples, as rl-zoo3's ``enjoy``/``record_video`` do for Atari games: a NoFrameskip-v4 game is
        a deterministic emulator, so a deterministic policy meets no randomness but the no-op reset's (1-30
        NOOPs), and a weak one collapses to one action: an untrained CNN policy presses LEFT every step and
        scores 0 in 9 of 10 games, and every evaluation of the first Breakout records (deterministic) had at
        most 2 distinct scores in its 10 games. Such an evaluation measures which action the argmax happens
        to pick, not learning; sampled actions score an untrained policy near the random policy's level.
        (For DQN and QR-DQN, sampling is epsilon-greedy at the final exploration rate, in both libraries.)
        """
        return not self.atari

    def stale_settings(self, record: dict[str, Any]) -> list[str]:
        """The settings (``SETTINGS``) in which ``record`` (or a checkpoint's saved settings) differs from
        this case now; empty when it was made as the case is now. A setting the record lacks is not compared,
        except ``eval_deterministic`` (records from before that field were all evaluated deterministically)
        and a lit-sb3 Atari record's ``atari_frames`` (``LIT_SB3_ATARI_FRAMES_BEFORE`` until the field came).
        Checkpoints saved before ``budget`` was a setting hold the budget as ``steps``."""
        now = json.loads(json.dumps(self.describe()))  # as a record holds it: tuples as lists
        defaults: dict[str, Any] = {"eval_deterministic": True}
        if "steps" in record:
            defaults["budget"] = record["steps"]
        if self.atari and record.get("library") == "lit-sb3":
            defaults["atari_frames"] = LIT_SB3_ATARI_FRAMES_BEFORE
        saved = {**defaults, **record}
        return [key for key in SETTINGS if key in saved and saved[key] != now[key]]

    def made_as_now(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` was made under this case's settings as they are now (budget, evaluation,
        envs, hyperparameters): the report leaves other records out and ``run.py --next`` trains them again."""
        return not self.stale_settings(record)

    @property
    def cpu_s(self) -> float:
        """Measured CPU seconds of one record, the mean of the two libraries' (``COSTS``); 0 if unmeasured."""
        costs = COSTS.get(self.name)
        return sum(costs.values()) / len(costs) if costs else 0.0

    @property
    def eval_points(self) -> list[int]:
        """The steps after which the run is evaluated: every ``eval_every`` steps, and the budget."""
        points = list(range(self.eval_every, self.steps, self.eval_every))
        return [*points, self.steps]

    def suite_case(self) -> Any:
        """This case as a ``suite.cases.Case``, so the speed benchmark's env and library code applies."""
        from suite.cases import Case

        return Case(
            self.name, self.algo, self.sb3, self.env, "learning ledger", self.steps, self.steps,
            self.hyperparams, n_envs=self.n_envs, policy=self.policy, normalize_obs=self.normalize,
            normalize_reward=self.normalize, atari=self.atari,
        )  # fmt: skip

    def describe(self) -> dict[str, Any]:
        """The case's settings as a record stores them."""
        return {
            "budget": self.steps,
            "eval_every": self.eval_every,
            "eval_episodes": self.eval_episodes,
            "eval_deterministic": self.eval_deterministic,
            "n_envs": self.n_envs,
            "policy": self.policy,
            "atari": self.atari,
            "atari_frames": ATARI_FRAMES if self.atari else None,
            "normalize": self.normalize,
            "hyperparams": self.hyperparams,
            "zoo": self.zoo,
            "overrides": self.overrides,
            "why": self.why,
        }


# rl-zoo3 2.9 entries (``tuned_hyperparameters(algo, env)["model"]`` less ``policy``).
_ZOO_PPO_ATARI = {
    "n_steps": 128, "n_epochs": 4, "batch_size": 256, "learning_rate": "lin_2.5e-4", "clip_range": "lin_0.1",
    "vf_coef": 0.5, "ent_coef": 0.01,
}  # fmt: skip
_ZOO_A2C_ATARI = {
    "ent_coef": 0.01, "vf_coef": 0.25,
    "policy_kwargs": {"optimizer_class": "rmsprop_tf_like", "optimizer_kwargs": {"eps": 1e-05}},
}  # fmt: skip
_ZOO_DQN_ATARI = {
    "buffer_size": 100_000, "learning_rate": 0.0001, "batch_size": 32, "learning_starts": 100_000,
    "target_update_interval": 1000, "train_freq": 4, "gradient_steps": 1, "exploration_fraction": 0.1,
    "exploration_final_eps": 0.01, "optimize_memory_usage": False,
}  # fmt: skip
_ZOO_QRDQN_ATARI = {"learning_starts": 50_000, "exploration_fraction": 0.025, "optimize_memory_usage": False}
_ZOO_TD3_MUJOCO = {
    "learning_starts": 10_000, "action_noise": {"type": "normal", "sigma": 0.1}, "train_freq": 1,
    "gradient_steps": 1, "learning_rate": 0.001, "batch_size": 256, "policy_kwargs": {"net_arch": [400, 300]},
}  # fmt: skip
_ZOO_PPO_HOPPER = {
    "batch_size": 32, "n_steps": 512, "gamma": 0.999, "learning_rate": 9.80828e-05, "ent_coef": 0.00229519,
    "clip_range": 0.2, "n_epochs": 5, "gae_lambda": 0.99, "max_grad_norm": 0.7, "vf_coef": 0.835671,
    "policy_kwargs": {"log_std_init": -2, "ortho_init": False, "activation_fn": "relu",
                      "net_arch": {"pi": [256, 256], "vf": [256, 256]}},
}  # fmt: skip
_ZOO_PPO_HALFCHEETAH = {
    "batch_size": 64, "n_steps": 512, "gamma": 0.98, "learning_rate": 2.0633e-05, "ent_coef": 0.000401762,
    "clip_range": 0.1, "n_epochs": 20, "gae_lambda": 0.92, "max_grad_norm": 0.8, "vf_coef": 0.58096,
    "policy_kwargs": {"log_std_init": -2, "ortho_init": False, "activation_fn": "relu",
                      "net_arch": {"pi": [256, 256], "vf": [256, 256]}},
}  # fmt: skip

# The replay settings every off-policy Atari case shares: a buffer as large as the budget, stored once
# (uint8 frames, next observations shared) so a run holds ~0.7 GB, not 1.4 GB.
_ATARI_REPLAY = {
    "buffer_size": 100_000,
    "optimize_memory_usage": True,
    "replay_buffer_kwargs": {"handle_timeout_termination": False},
}
_ATARI_REPLAY_WHY = (
    "buffer 100k = the budget, stored with optimize_memory_usage (SB3 then needs "
    "handle_timeout_termination=False); "
)

# CPU seconds of one record per library on one core of a 2-core machine shared with other work (``report.py``
# replaces them with a case's own records' CPU seconds once it has a record of each library): the seed-0
# records of 2026-12-02..06, on the AMD EPYC machine but for ppo-breakout's two and td3-halfcheetah's SB3 one,
# made on an Intel Xeon @ 2.8 GHz, where the same record takes 1.5-1.8x the CPU time (qrdqn-roadrunner at
# 200k: lit-sb3 its pilot, SB3 its 100k record times lit-sb3's 200k/100k ratio, 2.05; SB3's 200k record,
# made on the Xeon, took 8,864 CPU-s, ~4,900-5,900 on the EPYC, so this estimate is on the low side).
COSTS: dict[str, dict[str, float]] = {
    "a2c-seaquest": {"sb3": 1161, "lit-sb3": 1072},
    "ppo-breakout": {"sb3": 4127, "lit-sb3": 4257},
    "ppo-hopper": {"sb3": 340, "lit-sb3": 390},
    "td3-halfcheetah": {"sb3": 1880, "lit-sb3": 1102},
    "sac-hopper": {"sb3": 1163, "lit-sb3": 1205},
    "dqn-roadrunner": {"sb3": 1436, "lit-sb3": 1291},
    "qrdqn-roadrunner": {"sb3": 4570, "lit-sb3": 3488},
    "tqc-walker2d": {"sb3": 2151, "lit-sb3": 1464},
    "ppo-halfcheetah": {"sb3": 467, "lit-sb3": 341},
    "sac-halfcheetah": {"sb3": 1303, "lit-sb3": 1092},
}

_ATARI = dict(steps=100_000, eval_every=10_000, policy="CnnPolicy", atari=True)
# The on-policy Atari cases run 500k agent steps (2M frames): at 100k neither library's A2C or PPO left the
# random level on Breakout (final sampled-action scores A2C SB3 1.4, lit-sb3 1.9, PPO SB3 3.5; random 1.7).
# PPO learns Breakout by 500k (seed 0: SB3 11.3, lit-sb3 12.6), so Breakout stays for PPO, the game SB3
# users compare on. A2C did not (see ``RETIRED``) and plays Seaquest, where the pilot run (lit-sb3, seed 0,
# 2026-12-05, 5 games per point) scored 224, 236, 140 and 412 at 125k/250k/375k/500k, and the games it
# trained on averaged 91, 232, 291 and 360, against a random policy's 68.4.
ON_POLICY_ATARI = dict(_ATARI, steps=500_000, eval_every=50_000)
ON_POLICY_ATARI_WHY = (
    "budget 100k -> 500k agent steps, as for every on-policy Atari case: at 100k neither A2C nor PPO left "
    "Breakout's random level in either library (A2C SB3 1.4, lit-sb3 1.9; PPO SB3 3.5; random 1.7)."
)
# DQN and QR-DQN play Road Runner, where value-based agents leave the random level within the Atari-100k
# budget: lit-sb3's pilot runs (seed 0, 2026-12-05, 5 games per point) scored DQN 400 at 25k and 1,360 at
# 50k (training games 77 and 1,009), QR-DQN 940 and 1,260 (training games 268 and 573), against a random
# policy's 11.5. Caveat found after the switch (``constant_policies.py``): a held leftward action scores far
# more than 11.5, and that is the floor a learning run must clear. Over 10 games per action (2026-12-06):
# LEFT 1,020, UPLEFTFIRE 960, UPLEFT 930, LEFTFIRE 850 (Seaquest's best DOWNFIRE 220, Breakout's RIGHT 4.5).
# DQN's seed-0 runs end at 2,280 and 2,770 (training games 2,964 and 2,429).
# Until 2026-12-06 qrdqn-roadrunner ran with QR-DQN's default target_update_interval of 10k (9 target updates
# in the budget); its seed-0 records (commit 4810bdd) did not clear that floor: SB3 hovered near 1,000 and
# ended at 260 (training games 126), lit-sb3 ended at 920 (training games 884). Updating the target every 1k
# steps, as rl-zoo3's DQN entry does, did not lift it either at 100k (seed 0: SB3 850, lit-sb3 580; commit
# ebed282). Pilots of 2026-12-06 at 100k (lit-sb3, seed 0, the case's settings but for the change named;
# evaluation / training games): learning_rate 1e-4: ~1,000 at 10k-60k / 500-800; DQN's optimizer as well
# (Adam eps 1e-8, not 0.01/32): 970 at 50k / 535; Kangaroo (held RIGHTFIRE 320): 0, 0, 0, 380, 340, 0, 400,
# 400, 0 at 10k-90k; Jamesbond (held 25): 5-15. So QR-DQN gets the larger budget the issue allows where a game
# needs it: 200k agent steps, exploration over the same first 10k steps (fraction 0.05). The 200k pilot
# (lit-sb3, seed 0, 2026-12-06; its first 90k points equal the 100k record's, point for point) left the held
# plateau after 130k: training games 1,209, 1,413, 1,308, 1,308, 1,236, 1,773, 2,036, 1,715 at 130k-200k
# (all but one of the 100k budget's below 1,020), evaluations 1,550 at 150k and 2,330, 2,540 at 170k-180k;
# its last two evaluations caught snapshots back on the leftward plateau (940, 980). It is the ledger's
# lit-sb3 seed-0 record (same settings and code; renamed from pilot-qrdqn-rr-200k).
ROAD_RUNNER_HELD = 1_020.0
_MUJOCO_OFF = dict(steps=100_000, eval_every=10_000)
# PPO on Hopper at 300k reaches the standing plateau in both libraries (returns ~1,000: the healthy reward of
# a 1,000-step episode; hopping comes later, rl-zoo3's runs reach ~2,400 at 1M) and its deterministic policy
# falls now and then at an evaluation point (returns 11-630), in both libraries. Standing is learned: the
# untrained policy with these settings scores 13-178 (5 seeds, deterministic), zero torques ~140.

CASES: list[LearningCase] = [
    LearningCase("a2c-seaquest", "a2c", "stable_baselines3:A2C", "SeaquestNoFrameskip-v4", zoo=_ZOO_A2C_ATARI,
                 n_envs=16, random_return=68.4, held_action_return=220.0, why=ON_POLICY_ATARI_WHY,
                 **ON_POLICY_ATARI),
    LearningCase("ppo-hopper", "ppo", "stable_baselines3:PPO", "Hopper-v5", steps=300_000, eval_every=25_000,
                 zoo=_ZOO_PPO_HOPPER, normalize=True, random_return=-20.3, seeds=CHEAP_SEEDS),
    LearningCase("ppo-breakout", "ppo", "stable_baselines3:PPO", "BreakoutNoFrameskip-v4", zoo=_ZOO_PPO_ATARI,
                 n_envs=8, random_return=1.7, held_action_return=4.5, why=ON_POLICY_ATARI_WHY, **ON_POLICY_ATARI),
    LearningCase("td3-halfcheetah", "td3", "stable_baselines3:TD3", "HalfCheetah-v5", zoo=_ZOO_TD3_MUJOCO,
                 random_return=-280.2, **_MUJOCO_OFF),
    LearningCase("sac-hopper", "sac", "stable_baselines3:SAC", "Hopper-v5", zoo={"learning_starts": 10_000},
                 random_return=-20.3, **_MUJOCO_OFF),
    LearningCase("dqn-roadrunner", "dqn", "stable_baselines3:DQN", "RoadRunnerNoFrameskip-v4", zoo=_ZOO_DQN_ATARI,
                 overrides={**_ATARI_REPLAY, "learning_starts": 5_000},
                 why=_ATARI_REPLAY_WHY + "learning_starts 100k -> 5k (the whole budget otherwise).",
                 random_return=11.5, held_action_return=ROAD_RUNNER_HELD, seeds=CHEAP_SEEDS, **_ATARI),
    LearningCase("qrdqn-roadrunner", "qrdqn", "sb3_contrib:QRDQN", "RoadRunnerNoFrameskip-v4", zoo=_ZOO_QRDQN_ATARI,
                 overrides={**_ATARI_REPLAY, "learning_starts": 5_000, "exploration_fraction": 0.05,
                            "target_update_interval": 1_000},
                 why="budget 100k -> 200k agent steps: at 100k both libraries' seed-0 runs stayed on the plateau "
                     "of a held leftward action (1,020), the 200k pilot left it after 130k (see cases.py); "
                     "buffer 100k (rl-zoo3's DQN value, not QR-DQN's default 1M), stored with "
                     "optimize_memory_usage (SB3 then needs handle_timeout_termination=False); learning_starts "
                     "50k -> 5k; exploration_fraction 0.025 -> 0.05 (the first 10k steps, as DQN's case; 0.025 "
                     "of the budget would end exploration right after learning starts); target_update_interval "
                     "10k (QR-DQN's default, made for 10M steps) -> 1k, DQN's rl-zoo3 value (10k left 9 target "
                     "updates in 100k: both seed-0 runs ended below the held action's 1,020).",
                 random_return=11.5, held_action_return=ROAD_RUNNER_HELD, **dict(_ATARI, steps=200_000)),
    LearningCase("tqc-walker2d", "tqc", "sb3_contrib:TQC", "Walker2d-v5", zoo={"learning_starts": 10_000},
                 random_return=1.6, **_MUJOCO_OFF),
    LearningCase("ppo-halfcheetah", "ppo", "stable_baselines3:PPO", "HalfCheetah-v5", steps=300_000,
                 eval_every=25_000, zoo=_ZOO_PPO_HALFCHEETAH, normalize=True, random_return=-280.2,
                 seeds=CHEAP_SEEDS),
    LearningCase("sac-halfcheetah", "sac", "stable_baselines3:SAC", "HalfCheetah-v5",
                 zoo={"learning_starts": 10_000}, random_return=-280.2, **_MUJOCO_OFF),
]  # fmt: skip


@dataclass(frozen=True)
class RetiredCase:
    """A case the ledger ran and dropped because its budget could not tell a learning implementation from a
    broken one: both libraries stayed at the random policy's level. Its records stay in git (``commit``)."""

    name: str
    replaced_by: str
    records: str  # what the records showed
    commit: str  # a commit whose benchmarks/learning/results/<name>/ holds them


RETIRED: list[RetiredCase] = [
    RetiredCase("a2c-breakout", "a2c-seaquest",
                "500k steps: final SB3 2.9 and 2.0 (seeds 0, 1), lit-sb3 2.3 (seed 0), random 1.7; the games "
                "they trained on in the last interval averaged 1.7, 1.5 and 1.6.", "1f3a897"),
    RetiredCase("dqn-pong", "dqn-roadrunner",
                "100k steps: final SB3 -21.0, lit-sb3 -21.0 (seed 0), random -20.7; 6 of the two runs' 200 "
                "evaluation games took a point.", "1f3a897"),
    RetiredCase("qrdqn-breakout", "qrdqn-roadrunner",
                "100k steps: final SB3 3.6, lit-sb3 1.2 (seed 0), random 1.7; both runs' evaluations moved "
                "between 0.4 and 3.6 from point to point and their training games averaged 2.3 and 1.0.",
                "1f3a897"),
]  # fmt: skip

# CI-sized cases for the tests: never part of the ledger (``--next`` skips them).
TEST_CASES: list[LearningCase] = [
    LearningCase("test-ppo-cartpole", "ppo", "stable_baselines3:PPO", "CartPole-v1", steps=512, eval_every=256,
                 zoo={"n_steps": 64, "batch_size": 64, "n_epochs": 2, "learning_rate": "lin_0.05"}, n_envs=2,
                 eval_episodes=2, why="test only: a tiny PPO, on a schedule over its budget.", random_return=22.0),
    LearningCase("test-dqn-cartpole", "dqn", "stable_baselines3:DQN", "CartPole-v1", steps=600, eval_every=200,
                 zoo={"learning_starts": 100, "buffer_size": 1_000, "train_freq": 4,
                      "policy_kwargs": {"net_arch": [32, 32]}},
                 eval_episodes=2, why="test only: a tiny DQN (a replay buffer to resume).", random_return=22.0),
]  # fmt: skip


def by_name(name: str) -> LearningCase:
    """The case called ``name`` (ledger or test case); a KeyError listing the valid names otherwise."""
    for case in (*CASES, *TEST_CASES):
        if case.name == name:
            return case
    raise KeyError(f"No learning case {name!r}; choose from: {', '.join(c.name for c in CASES)}.")


_names = [case.name for case in (*CASES, *TEST_CASES)]
assert len(set(_names)) == len(_names), "learning case names must be unique"
