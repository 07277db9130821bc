"""Env steps per second of each vectorization backend: stepping alone, and inside PPO and DQN.

    python benchmarks/bench_envpool.py                      # CartPole-v1, HalfCheetah-v5, Pong; PPO and DQN
    python benchmarks/bench_envpool.py --repeats 3 --steps 20000

Every measurement is a fresh process; backends alternate within each repeat, so machine load hits them
alike and the ratios to ``sync`` survive it (absolute numbers do not). Stepping alone uses random actions
drawn before the timed loop; inside PPO/DQN the whole ``fit`` is timed (rl-zoo3's CartPole settings).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

BACKENDS = ("sync", "async", "envpool")
STEPPING = {"CartPole-v1": 8, "HalfCheetah-v5": 8, "PongNoFrameskip-v4": 8}
TRAINING = {
    "ppo": ("CartPole-v1", 8, {"n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20,
                               "ent_coef": 0.0, "learning_rate": "lin_0.001", "clip_range": "lin_0.2"}),
    "dqn": ("CartPole-v1", 1, {"learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000,
                               "learning_starts": 1000, "gamma": 0.99, "target_update_interval": 10,
                               "train_freq": 256, "gradient_steps": 128, "exploration_fraction": 0.16,
                               "exploration_final_eps": 0.04, "policy_kwargs": {"net_arch": [256, 256]}}),
}  # fmt: skip


def _one(kind: str, name: str, backend: str, steps: int) -> float:
    """Run in a child process: steps/s of one measurement."""
    import torch

    torch.set_num_threads(1)
    from lit_sb3_core import RLEnvDataModule, RLTrainer, make_algo

    if kind == "step":
        atari = "NoFrameskip" in name
        dm = RLEnvDataModule(train_env=name, n_envs=STEPPING[name], vectorization=backend, atari=atari)
        env = dm.get_env("fit")
        env.reset(seed=0)
        actions = [env.action_space.sample() for _ in range(64)]
        n = max(1, steps // env.num_envs)
        start = time.perf_counter()
        for i in range(n):
            env.step(actions[i % 64])
        rate = n * env.num_envs / (time.perf_counter() - start)
        dm.close()
        return rate
    env_id, n_envs, hyperparams = TRAINING[name]
    dm = RLEnvDataModule(train_env=env_id, n_envs=n_envs, vectorization=backend, seed=0)
    model = make_algo(name, seed=0, **hyperparams)
    trainer = RLTrainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    start = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    rate = model.num_timesteps / (time.perf_counter() - start)
    dm.close()
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=10_000, help="env steps per measurement")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--child", nargs=4, metavar=("KIND", "NAME", "BACKEND", "STEPS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        kind, name, backend, steps = args.child
        print(json.dumps(_one(kind, name, backend, int(steps))))
        return 0
    jobs = [("step", name) for name in STEPPING] + [("train", name) for name in TRAINING]
    print("| measurement | " + " | ".join(f"{b} steps/s" for b in BACKENDS) + " | envpool / sync |")
    print("|---|" + "--:|" * (len(BACKENDS) + 1))
    for kind, name in jobs:
        rates: dict[str, list[float]] = {b: [] for b in BACKENDS}
        for repeat in range(args.repeats):
            order = BACKENDS if repeat % 2 == 0 else tuple(reversed(BACKENDS))
            for backend in order:
                steps = args.steps // 10 if "NoFrameskip" in name else args.steps
                out = subprocess.run(
                    [sys.executable, __file__, "--child", kind, name, backend, str(steps)],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                if out.returncode != 0:
                    print(f"{kind} {name} {backend} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
                    continue
                rates[backend].append(float(out.stdout.strip().splitlines()[-1]))
        means = {b: statistics.fmean(r) if r else float("nan") for b, r in rates.items()}
        label = f"{'stepping' if kind == 'step' else kind.upper()} {name}" + (
            f" ({STEPPING[name]} envs)" if kind == "step" else f" ({TRAINING[name][1]} envs, rl-zoo3)"
        )
        cells = " | ".join(f"{means[b]:,.0f}" for b in BACKENDS)
        print(f"| {label} | {cells} | **{means['envpool'] / means['sync']:.2f}x** |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
