"""One off-policy environment step outside the gradient step: lit-sb3's collection against a bare loop.

    python benchmarks/collection_step.py                          # dqn-default and sac-default
    python benchmarks/collection_step.py --cases dqn-default --steps 4000 --rounds 5
    python benchmarks/collection_step.py --parts                  # and where lit-sb3's collection goes
    python benchmarks/collection_step.py --cprofile 30            # and its top functions (cProfile)

Per environment step, after the warm-up (past ``learning_starts``), thread CPU time, one torch thread:

* **lit-sb3**: ``learn`` of the suite's case (``benchmarks/suite``: the same envs, the same recorder), with
  ``collect_chunk`` (action selection, exploration, env step, episode statistics, replay ``add``, step
  bookkeeping) and ``train_on_buffer`` (sampling and gradient steps) timed apart; the rest is Lightning's
  batch loop and the iteration's logging.
* **bare**: a hand-written loop on the same gymnasium env (no vector env) and the model's own network:
  the network's forward on one observation under ``inference_mode``, epsilon-greedy (DQN) or the Gaussian
  draw and the unscaling (SAC), ``env.step``, the reset at an episode end, five writes into numpy arrays.
  Between its chunks it runs the model's own gradient steps (untimed), so caches are as cold as in
  ``learn``: the floor of what collection can cost here.

``--parts`` also times ``explore``, the vector env's ``step`` and the buffer's ``add`` inside lit-sb3's
collection (each timer costs ~1 us, so those rounds read a little higher). Rounds alternate lit-sb3 and the
bare loop; medians. ``--compile`` runs lit-sb3 with ``compile=True`` (the gradient step compiled).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

clock = time.thread_time


def _timed(totals: dict[str, float], name: str, function: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return function(*args, **kwargs)
        finally:
            totals[name] += clock() - start

    return wrapper


def lit_round(
    run: Any, steps: int, parts: bool, profiler: cProfile.Profile | None = None
) -> dict[str, float]:
    """us per env step of one ``learn(steps)`` continuing the run: whole, collection, updates, the rest."""
    model = run.model
    totals: dict[str, float] = defaultdict(float)
    patched = ["collect_chunk", "train_on_buffer"]
    model.collect_chunk = _timed(totals, "collect", model.collect_chunk)
    model.train_on_buffer = _timed(totals, "train", model.train_on_buffer)
    if parts:
        model.explore = _timed(totals, "explore", model.explore)
        patched.append("explore")
        env, buffer = model.vector_env, model.replay_buffer
        env.step = _timed(totals, "env.step", env.step)
        buffer.add = _timed(totals, "buffer.add", buffer.add)
    if profiler is not None:
        inner = model.collect_chunk

        def profiled() -> int:
            profiler.enable()
            try:
                return inner()
            finally:
                profiler.disable()

        model.collect_chunk = profiled
    before = model.num_timesteps
    start = clock()
    try:
        _continue(run, steps)
    finally:
        for name in patched:
            del model.__dict__[name]
        if parts:
            del model.vector_env.__dict__["step"], model.replay_buffer.__dict__["add"]
    whole = clock() - start
    n = model.num_timesteps - before
    out = {name: value / n * 1e6 for name, value in totals.items()}
    out["whole"] = whole / n * 1e6
    out["rest"] = out["whole"] - out["collect"] - out["train"]
    if parts:
        out["collect: rest"] = out["collect"] - out["explore"] - out["env.step"] - out["buffer.add"]
    return out


def _continue(run: Any, steps: int) -> None:
    """``steps`` more environment steps of ``run`` (with the case's trainer settings, e.g. bf16 autocast)."""
    model = run.model
    if not run.trainer_kwargs:
        model.learn(steps, env=run.datamodule, reset_num_timesteps=False)
        return
    import lit_sb3

    lit_sb3.RLTrainer(
        max_steps=model.num_timesteps + steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        **run.trainer_kwargs,
    ).fit(model, datamodule=run.datamodule)


class BareLoop:
    """The hand-written reference loop (see the module docstring) on ``case``'s env and ``model``'s network."""

    def __init__(self, case: Any, model: Any, seed: int = 0) -> None:
        from suite.measure import make_env

        self.model = model
        self.env = make_env(case, record=True)
        self.obs, _ = self.env.reset(seed=seed)
        space = self.env.observation_space
        self.size = 100_000
        self.observations = np.zeros((self.size, *space.shape), dtype=space.dtype)
        self.next_observations = np.zeros_like(self.observations)
        action_space = self.env.action_space
        self.discrete = hasattr(action_space, "n")
        shape = () if self.discrete else action_space.shape
        self.actions = np.zeros((self.size, *shape), dtype=np.int64 if self.discrete else np.float32)
        self.rewards = np.zeros(self.size, dtype=np.float32)
        self.dones = np.zeros(self.size, dtype=np.float32)
        self.pos = 0
        self.rng = np.random.default_rng(seed)
        if not self.discrete:
            self.low = action_space.low.astype(np.float32)
            self.half_span = ((action_space.high - action_space.low) / 2).astype(np.float32)
        train_freq = getattr(model, "train_freq", (1, "step"))
        self.chunk = int(train_freq[0])

    def act(self, obs: np.ndarray) -> Any:
        policy = self.model.policy
        with torch.inference_mode():
            if self.discrete:
                if self.rng.random() < self.model.exploration_rate:
                    return self.env.action_space.sample()
                return int(policy.q_net(torch.as_tensor(obs).unsqueeze(0)).argmax())
            action = policy.actor(torch.as_tensor(obs).unsqueeze(0))[0].numpy()
            return self.low + (action + 1.0) * self.half_span

    def run(self, steps: int) -> float:
        """CPU us per env step of ``steps`` steps (the gradient steps between chunks untimed)."""
        model, env = self.model, self.env
        spent = 0.0
        done_steps = 0
        while done_steps < steps:
            start = clock()
            for _ in range(self.chunk):
                action = self.act(self.obs)
                next_obs, reward, terminated, truncated, _ = env.step(action)
                i = self.pos
                self.observations[i] = self.obs
                self.next_observations[i] = next_obs
                self.actions[i] = action
                self.rewards[i] = reward
                self.dones[i] = terminated
                self.pos = (i + 1) % self.size
                self.obs = env.reset()[0] if terminated or truncated else next_obs
            spent += clock() - start
            done_steps += self.chunk
            model.train(gradient_steps=model.gradient_steps, batch_size=model.batch_size)
        return spent / done_steps * 1e6


def measure(name: str, steps: int, rounds: int, parts: bool, compiled: bool, top: int) -> list[str]:
    from suite.cases import by_name
    from suite.libraries import LitRun

    case = by_name(name)
    if compiled:
        import dataclasses

        case = dataclasses.replace(case, hyperparams={**case.hyperparams, "compile": True})
    run = LitRun(case, seed=0)
    starts = int(case.hyperparams.get("learning_starts", 100))
    run.learn(starts + max(steps // 4, 200))  # past the random warm-up; the first updates (and compile)
    bare = BareLoop(case, run.model)
    bare.run(min(steps, 400))
    lit_rounds: list[dict[str, float]] = []
    bare_rounds: list[float] = []
    for _ in range(rounds):
        lit_rounds.append(lit_round(run, steps, parts))
        bare_rounds.append(bare.run(steps))
    keys = list(lit_rounds[0])
    label = f"{name}{' compile=True' if compiled else ''}"
    lines = [f"{label}: CPU us per env step, median of {rounds} rounds of {steps} steps (range)"]
    for key in keys:
        values = [r[key] for r in lit_rounds]
        lines.append(
            f"  lit-sb3 {key:<14} {statistics.median(values):8.1f} ({min(values):.1f}-{max(values):.1f})"
        )
    lines.append(
        f"  bare loop collect    {statistics.median(bare_rounds):8.1f} ({min(bare_rounds):.1f}-{max(bare_rounds):.1f})"
    )
    collect = statistics.median(r["collect"] for r in lit_rounds)
    lines.append(f"  collection lit/bare  {collect / statistics.median(bare_rounds):8.2f}x")
    if top:
        profiler = cProfile.Profile()
        lit_round(run, steps, False, profiler)
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(top)
        lines.append(stream.getvalue())
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=["dqn-default", "sac-default"])
    parser.add_argument(
        "--steps", type=int, default=0, help="env steps per round (default: DQN 4000, SAC 300)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--parts", action="store_true", help="time explore, env.step and add inside collection"
    )
    parser.add_argument("--compile", action="store_true", help="lit-sb3 with compile=True")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="collection's N top functions")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    for name in args.cases:
        steps = args.steps or (4000 if name.startswith(("dqn", "qrdqn")) else 300)
        print(
            "\n".join(measure(name, steps, args.rounds, args.parts, args.compile, args.cprofile)), flush=True
        )


if __name__ == "__main__":
    main()
