"""``lit-sb3 train``: train a registered algorithm on an environment, then evaluate it.

The quickest path from install to a trained agent: tuned hyperparameters from the algorithm's
``tuned_hyperparameters`` (rl-zoo3's, where the plugin ships them), a progress bar in environment steps,
TensorBoard logs, a final evaluation table and an optional model file.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["configure_train", "run_train"]


def configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--algo", default="ppo", help="registered algorithm name (see `lit-sb3 algos`)")
    parser.add_argument("--env", default="CartPole-v1", help="gymnasium environment id")
    parser.add_argument("--steps", type=int, default=None, help="environment-step budget (default: tuned)")
    parser.add_argument("--n-envs", type=int, default=None, help="parallel environments (default: tuned)")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--hp", nargs="*", default=[], metavar="KEY=VALUE", help="hyperparameter overrides, values as JSON"
    )
    parser.add_argument(
        "--no-tuned", action="store_true", help="ignore the algorithm's tuned hyperparameters"
    )
    parser.add_argument("--eval-episodes", type=int, default=10, help="episodes in the final evaluation")
    parser.add_argument("--save", default=None, help="write the trained model to this .zip file")
    parser.add_argument("--log-dir", default="runs", help="TensorBoard logs go to LOG_DIR/lightning_logs")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1 is fastest for small networks)"
    )


def _parse_overrides(pairs: list[str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"lit-sb3 train: --hp expects KEY=VALUE, got {pair!r}.")
        try:
            overrides[key] = json.loads(text)
        except json.JSONDecodeError:
            overrides[key] = text
    return overrides


def run_train(args: argparse.Namespace) -> int:
    import torch

    from lit_sb3_core.engine.datamodule import RLEnvDataModule
    from lit_sb3_core.engine.trainer import RLTrainer
    from lit_sb3_core.engine.tuned import split_tuned
    from lit_sb3_core.registry.registry import get_algo_class

    torch.set_num_threads(max(1, args.threads))
    cls = get_algo_class(args.algo)
    table = {} if args.no_tuned else getattr(cls, "tuned_hyperparameters", {})
    tuned = (
        split_tuned(cls, table[args.env]) if args.env in table else {"model": {}, "data": {}, "trainer": {}}
    )
    data = {"n_envs": 1, **tuned["data"]}
    if args.n_envs:
        data["n_envs"] = args.n_envs
    steps = args.steps or int(tuned["trainer"].get("max_steps", 100_000))
    hyperparameters = {**tuned["model"], **_parse_overrides(args.hp), "seed": args.seed}
    source = "tuned for " + args.env if args.env in table else "defaults"
    print(f"Training {cls.__name__} ({source}) on {args.env} for {steps} steps with {data['n_envs']} env(s).")
    if hyperparameters:
        print("Hyperparameters: " + ", ".join(f"{k}={v!r}" for k, v in sorted(hyperparameters.items())))
    model = cls(**hyperparameters)
    datamodule = RLEnvDataModule(train_env=args.env, seed=args.seed, **data)
    trainer = RLTrainer(
        max_steps=steps,
        run_name=f"{cls.algo_name or args.algo}_{args.env}",
        default_root_dir=args.log_dir,
        enable_progress_bar=True,
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=datamodule)
    print(f"Final evaluation over {args.eval_episodes} episodes (deterministic actions):")
    trainer.test(model, env=args.env, n_eval_episodes=args.eval_episodes)
    if args.save:
        model.save(args.save)
        print(f"Saved the model to {args.save}")
    print(f"TensorBoard logs: tensorboard --logdir {trainer.log_dir}")
    datamodule.close()
    return 0
