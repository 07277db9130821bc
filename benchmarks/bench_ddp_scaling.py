"""Scaling on Lightning's DDP: environment steps per second with 1 and 2 processes.

    python benchmarks/bench_ddp_scaling.py [--steps 40000] [--env-cost-ms 1.0]

The workload is environment-bound, the regime where DD-PPO-style data parallelism pays: PPO on CartPole
with an artificial per-step cost (``--env-cost-ms`` of CPU work in every env step, standing in for a
physics simulator). Each configuration runs in its own subprocess; ``strategy="ddp"`` relaunches it per
rank. Scaling efficiency = (steps/s with N processes) / (N x steps/s with 1).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import json, sys, time, warnings
    import gymnasium as gym
    import torch
    from lightning.pytorch.callbacks import Callback
    from lit_sb3 import PPO, RLEnvDataModule, RLTrainer

    class SlowCartPole(gym.Wrapper):
        def __init__(self, env, cost_ms):
            super().__init__(env)
            self.cost = cost_ms / 1000.0
        def step(self, action):
            end = time.perf_counter() + self.cost
            while time.perf_counter() < end:
                pass
            return self.env.step(action)

    class Clock(Callback):
        def on_train_start(self, trainer, pl_module):
            self.start, self.start_steps = time.perf_counter(), pl_module.num_timesteps
        def on_train_end(self, trainer, pl_module):
            self.seconds = time.perf_counter() - self.start

    def make_env(cost_ms):
        return lambda: SlowCartPole(gym.make("CartPole-v1"), cost_ms)

    def main():
        torch.set_num_threads(1)
        warnings.filterwarnings("ignore")
        devices, steps, cost_ms, out = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
        model = PPO(n_steps=128, batch_size=256, n_epochs=4, seed=0)
        dm = RLEnvDataModule(train_env=make_env(cost_ms), n_envs=4, seed=0)
        trainer = RLTrainer(max_steps=steps, accelerator="cpu", devices=devices,
                            strategy="ddp" if devices > 1 else "auto", logger=False,
                            enable_progress_bar=False, enable_checkpointing=False)
        clock = Clock()
        trainer.callbacks.append(clock)
        trainer.fit(model, datamodule=dm)
        if trainer.global_rank == 0:
            # Timed from the first to the last iteration: process start-up and rendezvous excluded.
            with open(out, "w") as handle:
                json.dump({"steps": model.num_timesteps - clock.start_steps, "seconds": clock.seconds}, handle)

    if __name__ == "__main__":
        main()
    """
)


def run(devices: int, steps: int, cost_ms: float, folder: Path) -> float:
    script = folder / "scaling.py"
    script.write_text(SCRIPT)
    out = folder / f"result_{devices}.json"
    subprocess.run([sys.executable, str(script), str(devices), str(steps), str(cost_ms), str(out)], check=True,
                   cwd=folder, capture_output=True)  # fmt: skip
    result = json.loads(out.read_text())
    return result["steps"] / result["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=40_000)
    parser.add_argument("--env-cost-ms", type=float, default=1.0)
    parser.add_argument("--max-devices", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = run(1, args.steps, args.env_cost_ms, Path(folder))
        print(f"PPO CartPole + {args.env_cost_ms} ms/step env cost, {args.steps} steps, 4 envs per process\n")
        print("| processes | steps/s | speed-up | scaling efficiency |")
        print("|---|---|---|---|")
        print(f"| 1 | {base:.0f} | 1.00x | 100% |")
        for devices in range(2, args.max_devices + 1):
            fps = run(devices, args.steps, args.env_cost_ms, Path(folder))
            print(f"| {devices} | {fps:.0f} | {fps / base:.2f}x | {fps / base / devices:.0%} |")


if __name__ == "__main__":
    main()
