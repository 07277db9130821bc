"""Endurance: long runs keep memory flat. Measures resident memory (RSS) and live Python objects over time.

    python benchmarks/endurance.py                        # PPO 1M steps, SAC 100k, DQN 300k, learn() loop
    python benchmarks/endurance.py --quick                # a few minutes
    python benchmarks/endurance.py --algos ppo --steps 2000000

Three patterns, each in this process, one after another:

* ``fit``: one ``RLTrainer.fit`` for the whole budget (PPO on CartPole with 8 envs, SAC on Pendulum, DQN on
  CartPole), sampling after every ``--sample-every`` environment steps;
* ``learn-loop``: SB3's pattern of calling ``model.learn(n, reset_num_timesteps=False)`` over and over,
  sampling after each call: every call builds a new RLTrainer, so anything a trainer leaves behind shows.

Memory is sampled after ``gc.collect()``. Growth is measured from the end of a warm-up (the first quarter
of the samples: allocator pools, lazily-touched replay buffer pages and torch's caches fill up there) to the
end, and reported in MB and live objects, in total and per 100k steps. Replay buffers are sized to fill
during the warm-up, so their pages do not count as growth. ``tests/engine/test_faults_endurance.py`` runs a
CI-sized version of the same measurement with a generous bound.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
from dataclasses import dataclass
from typing import Any

ALGOS: dict[str, dict[str, Any]] = {
    "ppo": {"env": "CartPole-v1", "n_envs": 8, "kwargs": {"n_steps": 32, "batch_size": 256, "n_epochs": 4}},
    "a2c": {"env": "CartPole-v1", "n_envs": 8, "kwargs": {"n_steps": 5}},
    "sac": {
        "env": "Pendulum-v1",
        "n_envs": 1,
        "kwargs": {"learning_starts": 100, "buffer_size": 5_000, "batch_size": 64},
    },
    "dqn": {
        "env": "CartPole-v1",
        "n_envs": 1,
        "kwargs": {
            "learning_starts": 100,
            "buffer_size": 5_000,
            "train_freq": 4,
            "target_update_interval": 500,
        },
    },
}


@dataclass
class Sample:
    steps: int
    rss_mb: float
    objects: int


def rss_mb() -> float:
    """Current resident set size in MB (Linux ``/proc``; elsewhere the peak, from ``getrusage``)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def sample(steps: int) -> Sample:
    gc.collect()
    return Sample(steps, rss_mb(), len(gc.get_objects()))


def _make(algo: str, seed: int) -> Any:
    from lit_sb3 import make_algo

    return make_algo(algo, seed=seed, **ALGOS[algo]["kwargs"])


def run_fit(algo: str, steps: int, sample_every: int, seed: int = 0) -> list[Sample]:
    """One ``fit`` of ``steps`` environment steps; a sample every ``sample_every`` steps."""
    from lightning.pytorch.callbacks import Callback

    from lit_sb3 import RLEnvDataModule, RLTrainer

    samples: list[Sample] = []

    class Probe(Callback):
        next_at = sample_every

        def on_train_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            if pl_module.num_timesteps >= self.next_at:
                samples.append(sample(pl_module.num_timesteps))
                self.next_at += sample_every

    config = ALGOS[algo]
    model = _make(algo, seed)
    datamodule = RLEnvDataModule(train_env=config["env"], n_envs=config["n_envs"], seed=seed)
    trainer = RLTrainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        callbacks=[Probe()],
    )
    trainer.fit(model, datamodule=datamodule)
    datamodule.close()
    return samples


def run_learn_loop(algo: str, rounds: int, steps_per_round: int, seed: int = 0) -> list[Sample]:
    """``model.learn(steps_per_round, reset_num_timesteps=False)`` ``rounds`` times; a sample after each."""
    config = ALGOS[algo]
    model = _make(algo, seed)
    samples = []
    for i in range(rounds):
        model.learn(steps_per_round, env=config["env"] if i == 0 else None, reset_num_timesteps=i == 0,
                    n_envs=config["n_envs"])  # fmt: skip
        samples.append(sample(model.num_timesteps))
    return samples


@dataclass
class Growth:
    rss_mb: float
    objects: int
    steps: int

    def per_100k(self) -> tuple[float, float]:
        scale = 100_000 / max(1, self.steps)
        return self.rss_mb * scale, self.objects * scale


def growth(samples: list[Sample], warmup_fraction: float = 0.25) -> Growth:
    """Growth from the end of the warm-up to the last sample (the largest RSS after warm-up, to be safe)."""
    if len(samples) < 2:
        raise ValueError("at least two samples are needed")
    start = samples[min(len(samples) - 2, int(len(samples) * warmup_fraction))]
    after = samples[samples.index(start) :]
    return Growth(
        rss_mb=max(s.rss_mb for s in after) - start.rss_mb,
        objects=after[-1].objects - start.objects,
        steps=after[-1].steps - start.steps,
    )


def _report(name: str, samples: list[Sample]) -> Growth:
    result = growth(samples)
    mb, objects = result.per_100k()
    print(f"\n{name}: {len(samples)} samples, {samples[0].steps:,} .. {samples[-1].steps:,} steps")
    shown = samples if len(samples) <= 12 else [*samples[:: max(1, len(samples) // 10)], samples[-1]]
    for s in shown:
        print(f"  {s.steps:>10,} steps  {s.rss_mb:8.1f} MB  {s.objects:>9,} objects")
    print(
        f"  growth after warm-up: {result.rss_mb:+.1f} MB, {result.objects:+,} objects over {result.steps:,} steps "
        f"({mb:+.2f} MB, {objects:+,.0f} objects per 100k steps)"
    )
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algos", default="ppo,sac,dqn", help="comma-separated: " + ",".join(ALGOS))
    parser.add_argument("--steps", type=int, default=None, help="steps per fit (default: per algorithm)")
    parser.add_argument("--samples", type=int, default=40, help="samples per run")
    parser.add_argument("--rounds", type=int, default=40, help="learn() calls in the learn-loop run")
    parser.add_argument("--quick", action="store_true", help="short runs (a few minutes)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    defaults = {"ppo": 1_000_000, "a2c": 500_000, "sac": 100_000, "dqn": 300_000}
    if args.quick:
        defaults = {"ppo": 100_000, "a2c": 50_000, "sac": 15_000, "dqn": 40_000}
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, start RSS {rss_mb():.1f} MB")
    for algo in args.algos.split(","):
        steps = args.steps or defaults[algo]
        _report(f"{algo} fit", run_fit(algo, steps, max(1, steps // args.samples)))
    rounds = 10 if args.quick else args.rounds
    _report("ppo learn() loop", run_learn_loop("ppo", rounds, 2048))


if __name__ == "__main__":
    main()
