"""One on-policy iteration of lit-sb3, phase by phase, beside a bare hand-written loop doing the same arithmetic.

    python benchmarks/profile_on_policy.py                          # ppo-zoo-8env and a2c-zoo-cartpole
    python benchmarks/profile_on_policy.py --cases ppo-zoo-8env --iterations 40 --repeats 5 --ops 12 --cprofile 20

For each case (the benchmark suite's hyperparameters and envs, one torch thread), lit-sb3 trains one
``learn`` of ``--warmup`` iterations and then ``--iterations`` timed ones in the same ``learn`` (so
Lightning's fit set-up is outside the timed part), with timers (thread CPU time) around the loop's phases:

* rollout: the policy's forward (sampling included), observation/action conversions, the vector env's step,
  episode bookkeeping, the buffer's writes, the rest of the rollout loop's own lines; GAE/returns;
* update: minibatch gathers, the policy's evaluation of a minibatch, the loss, backward, clipping, the
  optimizer's step, the iteration's metrics;
* Lightning and the loop: ``training_step``'s own lines (budget, progress, ``log_iteration``) and what
  Lightning does between two ``training_step`` calls.

The bare loop (``bare_iteration``) is the same algorithm written by hand with no library around it: the
same gymnasium envs stepped in a list, the same networks as plain ``nn.Sequential``s, the same sampling,
GAE, minibatches, clipped loss and optimizer (torch's fused Adam / foreach RMSprop through
``Optimizer.step``), timed the same way. The two alternate in one process, ``--repeats`` rounds; medians
(ranges) in CPU us per env step. ``--ops`` adds torch.profiler's operator counts per env step for both
(operator time under load is inflated; read the counts), ``--cprofile N`` lit-sb3's N heaviest functions.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import functools
import io
import pstats
import statistics
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import profile_updates

clock = profile_updates.clock
CASES = ["ppo-zoo-8env", "a2c-zoo-cartpole"]


class Timers(profile_updates.Timers):
    """profile_updates' timers (CPU seconds and calls by label), and timers around generators."""

    def wrap_generator(self, owner: Any, name: str, label: str) -> None:
        """Time each ``next`` of the generator a method returns (minibatch gathers are lazy)."""
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
            iterator = iter(original(*args, **kwargs))
            while True:
                start = clock()
                try:
                    item = next(iterator)
                except StopIteration:
                    if self.active:
                        self.seconds[label] += clock() - start
                    return
                if self.active:
                    self.seconds[label] += clock() - start
                    self.calls[label] += 1
                yield item

        setattr(owner, name, timed)


def _median_range(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.0f}-{max(values):.0f})"


# --- lit-sb3, instrumented --------------------------------------------------------------------------------


class LitProbe:
    """A lit-sb3 model of the case with timers around its phases; ``run`` times ``iterations`` of one learn."""

    def __init__(self, case: Any, compile: bool = False) -> None:
        from suite.libraries import LitRun

        import lit_sb3_core.sdk.fast_path as fast_path
        import lit_sb3_core.sdk.on_policy as on_policy
        from lit_sb3_core.sdk import compiled_update

        self.case = case
        if compile:
            case = dataclasses.replace(case, hyperparams={**case.hyperparams, "compile": True})
        self.run_ = LitRun(case, seed=0)
        self.model = self.run_.model
        self.timers = timers = Timers()
        model = self.model
        # Module functions the loops call by name: timed where they are looked up.
        timers.wrap(on_policy, "obs_to_tensor", "rollout: obs to tensor")
        timers.wrap(on_policy, "to_numpy", "rollout: actions to numpy")
        timers.wrap(fast_path, "clip_grad_norm", "update: gradient clipping")
        timers.wrap(fast_path, "direct_step", "update: optimizer step")
        timers.wrap(compiled_update.CompiledStep, "__call__", "update: compiled minibatch step")
        self._iterations = 0
        self._timed_from = 0
        self._gaps: list[float] = []
        self._last_end: float | None = None
        self._first_start: float | None = None
        self._end: float = 0.0
        original_step = model.training_step

        def training_step(batch: Any, batch_idx: int) -> Any:
            start = clock()
            if timers.active and self._last_end is not None:
                self._gaps.append(start - self._last_end)
            if self._iterations == self._timed_from and not timers.active:
                timers.active = True
                self._first_start = start
            try:
                return original_step(batch, batch_idx)
            finally:
                end = clock()
                self._iterations += 1
                if timers.active:
                    timers.seconds["training_step"] += end - start
                    self._last_end = self._end = end

        object.__setattr__(model, "training_step", training_step)
        for name, label in [
            ("collect_rollout", "rollout"),
            ("rollout_forward", "rollout: policy forward and sampling"),
            ("_record_episode_ends", "rollout: episode ends"),
            ("train_on_rollout", "update"),
            ("evaluate_minibatch", "update: policy evaluation of the minibatch"),
            ("minibatch_loss", "update: loss"),
            ("optimizer_step", "update: optimizer_step"),
        ]:
            # Compiled, the evaluation and the loss run inside the program: a timer there would break its graph.
            if hasattr(model, name) and not (compile and name in ("evaluate_minibatch", "minibatch_loss")):
                timers.wrap(model, name, label)
        timers.wrap(model.metrics, "log_iteration", "loop: log_iteration")
        timers.wrap(model.budget, "update_progress", "loop: budget")
        timers.wrap(model.budget, "stop_if_reached", "loop: budget")
        timers.wrap(model.prediction, "to_env_actions", "rollout: env actions")
        self._env_wrapped = False

    def _wrap_env(self) -> None:
        """The env and the buffer exist from the first fit on."""
        model, timers = self.model, self.timers
        timers.wrap(model.vector_env, "step", "rollout: env step")
        timers.wrap(model.rollout, "add", "rollout: buffer add")
        timers.wrap(model.rollout, "compute_returns_and_advantage", "GAE and returns")
        timers.wrap_generator(model.rollout, "minibatches", "update: minibatch gathers")
        self._env_wrapped = True

    def run(self, warmup: int, iterations: int) -> dict[str, float]:
        """CPU us per env step by phase over ``iterations`` iterations after ``warmup`` ones, in one learn."""
        model = self.model
        if not self._env_wrapped:
            self.run_.learn(self.case.n_envs * model.n_steps)  # builds the env and the buffer
            self._wrap_env()
        timers = self.timers
        timers.seconds.clear()
        timers.calls.clear()
        timers.active = False
        self._iterations, self._gaps, self._last_end = 0, [], None
        self._timed_from = warmup
        rollout_steps = self.case.n_envs * model.n_steps
        batch_steps = rollout_steps * max(1, getattr(model, "_iterations_per_batch", 1))
        model.learn(total_timesteps=batch_steps * (warmup + iterations), env=self.run_.datamodule)
        timers.active = False
        assert self._first_start is not None
        total = self._end - self._first_start
        env_steps = batch_steps * (self._iterations - warmup)
        return self._phases(total, env_steps)

    def _phases(self, total: float, env_steps: int) -> dict[str, float]:
        s = self.timers.seconds
        us = 1e6 / env_steps
        rollout_parts = [
            "rollout: policy forward and sampling",
            "rollout: obs to tensor",
            "rollout: actions to numpy",
            "rollout: env actions",
            "rollout: env step",
            "rollout: episode ends",
            "rollout: buffer add",
        ]
        out = {part: s[part] * us for part in rollout_parts}
        out["rollout: the loop's own lines"] = (
            s["rollout"] - s["GAE and returns"] - sum(s[p] for p in rollout_parts)
        ) * us
        out["GAE and returns"] = s["GAE and returns"] * us
        backward = s["update: optimizer_step"] - s["update: gradient clipping"] - s["update: optimizer step"]
        update_parts = {
            "update: minibatch gathers": s["update: minibatch gathers"],
            "update: policy evaluation of the minibatch": s["update: policy evaluation of the minibatch"],
            "update: loss": s["update: loss"],
            "update: zero_grad + backward": backward,
            "update: gradient clipping": s["update: gradient clipping"],
            "update: optimizer step": s["update: optimizer step"],
            "update: compiled minibatch step": s["update: compiled minibatch step"],
        }
        if not s["update: policy evaluation of the minibatch"]:  # A2C: evaluation and loss are one method
            del update_parts["update: policy evaluation of the minibatch"], update_parts["update: loss"]
            update_parts["update: evaluation and loss"] = 0.0
        accounted = sum(update_parts.values())
        for key, value in update_parts.items():
            out[key] = value * us
        if "update: evaluation and loss" in out:
            out["update: evaluation and loss"] = (s["update"] - accounted) * us
        else:
            out["update: metrics and the loop's own lines"] = (s["update"] - accounted) * us
        out["loop: log_iteration"] = s["loop: log_iteration"] * us
        out["loop: budget"] = s["loop: budget"] * us
        out["loop: training_step's own lines"] = (
            s["training_step"] - s["rollout"] - s["update"] - s["loop: log_iteration"] - s["loop: budget"]
        ) * us
        out["Lightning between training_steps"] = sum(self._gaps) * us
        out["total"] = total * us
        return out


# --- the bare loop ----------------------------------------------------------------------------------------


class BareLoop:
    """The case's algorithm written by hand: gymnasium envs in a list, ``nn.Sequential`` networks, numpy GAE."""

    def __init__(self, case: Any) -> None:
        import gymnasium as gym
        import numpy as np
        import torch
        from torch import nn

        hp = dict(case.hyperparams)
        self.algo = case.algo
        self.n_envs = case.n_envs
        defaults = {
            "ppo": {"n_steps": 2048, "batch_size": 64, "n_epochs": 10, "gamma": 0.99, "gae_lambda": 0.95},
            "a2c": {"n_steps": 5, "gamma": 0.99, "gae_lambda": 1.0},
        }[case.algo]
        cfg = {**defaults, **{k: v for k, v in hp.items() if k in defaults}}
        self.n_steps, self.gamma, self.gae_lambda = cfg["n_steps"], cfg["gamma"], cfg["gae_lambda"]
        self.batch_size, self.n_epochs = cfg.get("batch_size"), cfg.get("n_epochs", 1)
        from suite.measure import make_env

        del gym  # the suite's envs (its episode recorder too), as both libraries get them
        self.envs = [make_env(case, record=True) for _ in range(self.n_envs)]
        self.obs = np.stack([env.reset(seed=i)[0] for i, env in enumerate(self.envs)])
        self.starts = np.ones(self.n_envs, dtype=np.float32)
        self.ep_returns = np.zeros(self.n_envs)
        obs_dim = self.obs.shape[1]
        n_actions = int(self.envs[0].action_space.n)

        def mlp() -> nn.Module:
            return nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())

        torch.manual_seed(0)
        self.pi, self.vf = mlp(), mlp()
        self.action_net, self.value_net = nn.Linear(64, n_actions), nn.Linear(64, 1)
        params = [p for m in (self.pi, self.vf, self.action_net, self.value_net) for p in m.parameters()]
        self.params = params
        if case.algo == "ppo":
            self.optimizer: torch.optim.Optimizer = torch.optim.Adam(params, lr=3e-4, eps=1e-5, fused=True)
        else:
            self.optimizer = torch.optim.RMSprop(params, lr=7e-4, alpha=0.99, eps=1e-5, foreach=True)
        size = (self.n_steps, self.n_envs)
        self.b_obs = torch.zeros((*size, obs_dim))
        self.b_actions = torch.zeros(size, dtype=torch.long)
        self.b_values = torch.zeros(size)
        self.b_log_probs = torch.zeros(size)
        self.b_rewards = np.zeros(size, dtype=np.float32)
        self.b_starts = np.zeros(size, dtype=np.float32)
        self.np, self.torch = np, torch

    def forward(self, obs: Any) -> tuple[Any, Any]:
        torch = self.torch
        log_probs = torch.log_softmax(self.action_net(self.pi(obs)), -1)
        return log_probs, self.value_net(self.vf(obs)).squeeze(-1)

    def iteration(self, timers: Timers) -> None:
        np, torch = self.np, self.torch
        t = timers.seconds
        with torch.no_grad():
            for step in range(self.n_steps):
                t0 = clock()
                obs = torch.from_numpy(self.obs)
                log_probs, values = self.forward(obs)
                actions = torch.multinomial(log_probs.exp(), 1).squeeze(-1)
                log_prob = log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
                t1 = clock()
                env_actions = actions.numpy()
                results = [env.step(int(a)) for env, a in zip(self.envs, env_actions)]
                new_obs = []
                rewards = np.empty(self.n_envs, dtype=np.float32)
                dones = np.empty(self.n_envs, dtype=np.float32)
                for i, (o, r, term, trunc, _) in enumerate(results):
                    rewards[i] = r
                    dones[i] = term or trunc
                    self.ep_returns[i] += r
                    if term or trunc:
                        if trunc and not term:  # bootstrap the truncated episode, as the libraries do
                            with torch.no_grad():
                                rewards[i] += self.gamma * float(self.value_net(self.vf(torch.from_numpy(o))))
                        self.ep_returns[i] = 0.0
                        o, _ = self.envs[i].reset()
                    new_obs.append(o)
                t2 = clock()
                self.b_obs[step] = obs
                self.b_actions[step] = actions
                self.b_values[step] = values
                self.b_log_probs[step] = log_prob
                self.b_rewards[step] = rewards
                self.b_starts[step] = self.starts
                self.obs = np.stack(new_obs)
                self.starts = dones
                t3 = clock()
                t["rollout: policy forward and sampling"] += t1 - t0
                t["rollout: env step"] += t2 - t1
                t["rollout: buffer add"] += t3 - t2
            t0 = clock()
            last_values = self.value_net(self.vf(torch.from_numpy(self.obs))).squeeze(-1).numpy()
            values = self.b_values.numpy()
            advantages = np.zeros_like(self.b_rewards)
            last_gae = np.zeros(self.n_envs, dtype=np.float32)
            for step in reversed(range(self.n_steps)):
                if step == self.n_steps - 1:
                    non_terminal, next_values = 1.0 - self.starts, last_values
                else:
                    non_terminal, next_values = 1.0 - self.b_starts[step + 1], values[step + 1]
                delta = self.b_rewards[step] + self.gamma * next_values * non_terminal - values[step]
                last_gae = delta + self.gamma * self.gae_lambda * non_terminal * last_gae
                advantages[step] = last_gae
            adv = torch.from_numpy(advantages)
            returns = adv + self.b_values
            t["GAE and returns"] += clock() - t0
        total = self.n_steps * self.n_envs
        flat = (
            self.b_obs.reshape(total, -1),
            self.b_actions.reshape(-1),
            self.b_log_probs.reshape(-1),
            adv.reshape(-1),
            returns.reshape(-1),
        )
        for _ in range(self.n_epochs):
            t0 = clock()
            if self.algo == "ppo":
                order = torch.randperm(total)
                batches = [
                    tuple(f[order[s : s + self.batch_size]] for f in flat)
                    for s in range(0, total, self.batch_size)
                ]
            else:
                batches = [flat]
            t["update: minibatch gathers"] += clock() - t0
            for obs, actions, old_log_prob, advantages, rets in batches:
                t0 = clock()
                log_probs, values = self.forward(obs)
                log_prob = log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
                entropy = -(log_probs.exp() * log_probs).sum(-1)
                t1 = clock()
                if self.algo == "ppo":
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                    ratio = torch.exp(log_prob - old_log_prob)
                    surrogate = torch.min(advantages * ratio, advantages * torch.clamp(ratio, 0.8, 1.2))
                    policy_loss = -surrogate.mean()
                else:
                    policy_loss = -(advantages * log_prob).mean()
                value_loss = torch.nn.functional.mse_loss(rets, values)
                loss = policy_loss - 0.0 * entropy.mean() + 0.5 * value_loss
                t2 = clock()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                t3 = clock()
                torch.nn.utils.clip_grad_norm_(self.params, 0.5, foreach=True)
                t4 = clock()
                self.optimizer.step()
                t5 = clock()
                t["update: policy evaluation of the minibatch"] += t1 - t0
                t["update: loss"] += t2 - t1
                t["update: zero_grad + backward"] += t3 - t2
                t["update: gradient clipping"] += t4 - t3
                t["update: optimizer step"] += t5 - t4

    def run(self, warmup: int, iterations: int) -> dict[str, float]:
        timers = Timers()
        for _ in range(warmup):
            self.iteration(timers)
        timers.seconds.clear()
        start = clock()
        for _ in range(iterations):
            self.iteration(timers)
        total = clock() - start
        us = 1e6 / (iterations * self.n_steps * self.n_envs)
        out = {key: value * us for key, value in timers.seconds.items()}
        out["total"] = total * us
        return out


# --- reports ----------------------------------------------------------------------------------------------


def _aten_ops_per_env_step(run: Callable[[], int]) -> tuple[float, list[tuple[str, float]]]:
    """aten operators per env step over ``run()`` (which returns its env steps), and the most called ones."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        steps = run()
    events = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    total = sum(e.count for e in events) / steps
    top = sorted(((e.key, e.count / steps) for e in events), key=lambda kv: -kv[1])
    return total, top


def profile_case(
    name: str, warmup: int, iterations: int, repeats: int, ops: int, top: int, compile: bool = False
) -> list[str]:
    from suite.cases import by_name

    case = by_name(name)
    lit, bare = LitProbe(case, compile), BareLoop(case)
    results: dict[str, list[dict[str, float]]] = {"lit": [], "bare": []}
    for repeat in range(repeats):
        order = [("lit", lit), ("bare", bare)]
        for label, probe in order if repeat % 2 == 0 else order[::-1]:
            results[label].append(probe.run(warmup, iterations))
    keys = list(results["lit"][0])
    lines = [
        f"### {name}: {case.algo} on {case.env} ({case.config}), {case.n_envs} envs"
        + (", lit-sb3 with compile=True" if compile else ""),
        "",
        f"CPU us per env step, {iterations} iterations after {warmup} of warm-up, median (range) of {repeats} "
        "alternating rounds:",
        "",
        "| phase | lit-sb3 | bare loop |",
        "|---|--:|--:|",
    ]
    for key in keys:
        lit_v = _median_range([r[key] for r in results["lit"]])
        bare_vals = [r[key] for r in results["bare"] if key in r]
        bare_v = _median_range(bare_vals) if bare_vals else "–"
        lines.append(f"| {key} | {lit_v} | {bare_v} |")
    lines.append("")
    if ops:
        rollout_steps = case.n_envs * lit.model.n_steps

        def lit_run() -> int:
            n = max(1, getattr(lit.model, "_iterations_per_batch", 1)) * rollout_steps * iterations
            lit.model.learn(total_timesteps=n, env=lit.run_.datamodule)
            return n

        def bare_run() -> int:
            t = Timers()
            for _ in range(iterations):
                bare.iteration(t)
            return iterations * rollout_steps

        for label, run in (("lit-sb3 (whole learn, fit set-up included)", lit_run), ("bare loop", bare_run)):
            total, most = _aten_ops_per_env_step(run)
            lines.append(
                f"aten operators per env step, {label}: {total:.1f}; most called: "
                + ", ".join(f"`{k}` {v:.2f}" for k, v in most[:ops])
            )
            lines.append("")
    if top:
        profiler = cProfile.Profile()
        profiler.enable()
        lit.run(0, iterations)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        body = out.getvalue()
        lines += [
            f"lit-sb3's top {top} functions by own time (cProfile, {iterations} iterations):",
            "",
            "```",
        ]
        lines += [line.rstrip() for line in body[body.find("   ncalls") :].splitlines() if line.strip()]
        lines += ["```", ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=CASES)
    parser.add_argument("--warmup", type=int, default=4, help="Lightning batches before the timed ones")
    parser.add_argument("--iterations", type=int, default=30, help="timed Lightning batches per round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ops", type=int, default=0, metavar="N", help="operator counts, N most called")
    parser.add_argument("--compile", action="store_true", help="lit-sb3 with compile=True (PPO)")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="lit-sb3's N top functions")
    args = parser.parse_args(argv)
    import torch

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread\n")
    for name in args.cases:
        lines = profile_case(
            name, args.warmup, args.iterations, args.repeats, args.ops, args.cprofile, args.compile
        )
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
