"""Runs that survive: stop at N steps, resume in a new process, and end where an uninterrupted run ends."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys, torch
    torch.set_num_threads(1)
    from lightning.pytorch.callbacks import ModelCheckpoint
    from lit_sb3 import PPO, RLEnvDataModule, RLTrainer, evaluate_policy

    import gymnasium as gym

    def evaluate(model):
        env = gym.make("CartPole-v1")
        env.reset(seed=123)  # evaluation episodes identical across processes
        return evaluate_policy(model, env, n_eval_episodes=5)[0]

    root, steps, resume = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    model = PPO(n_steps=64, batch_size=64, n_epochs=4, learning_rate="lin_0.003", seed=0)
    trainer = RLTrainer(
        max_steps=steps, default_root_dir=root, enable_progress_bar=False,
        callbacks=[ModelCheckpoint(every_n_train_steps=16, save_last=True)],
    )
    dm = RLEnvDataModule(train_env="CartPole-v1", n_envs=2, seed=0)
    restored = {}
    if resume != "none":
        from lightning.pytorch.callbacks import Callback
        class RecordStart(Callback):
            def on_train_start(self, trainer, pl_module):
                restored["num_timesteps"] = pl_module.num_timesteps
                restored["lr"] = trainer.optimizers[0].param_groups[0]["lr"]
                restored["eval"] = evaluate(pl_module)
                restored["ep_rew_window"] = len(pl_module.vector_env.return_queue)
        trainer.callbacks.append(RecordStart())
    trainer.fit(model, datamodule=dm, ckpt_path=None if resume == "none" else resume)
    print(json.dumps({
        "num_timesteps": model.num_timesteps,
        "iterations": model.iterations,
        "lr": trainer.optimizers[0].param_groups[0]["lr"],
        "eval": evaluate(model),
        "global_step": trainer.global_step,
        "restored": restored,
    }))
    """
)


def run(tmp_path: Path, root: str, steps: int, resume: str) -> dict:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path / root), str(steps), resume],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("resume", ["path", "last"])
def test_resume_in_a_new_process_continues_counters_schedules_and_returns(
    tmp_path: Path, resume: str
) -> None:
    n = 1024
    straight = run(tmp_path, "straight", 2 * n, "none")
    first = run(tmp_path, "split", n, "none")
    ckpt = str(tmp_path / "split" / "lightning_logs" / "run_1" / "checkpoints" / "last.ckpt")
    resumed = run(tmp_path, "split", 2 * n, ckpt if resume == "path" else "last")

    # Counters and schedules continue: the resumed run ends exactly where the uninterrupted one does.
    assert resumed["restored"]["num_timesteps"] == first["num_timesteps"] == n
    assert resumed["num_timesteps"] == straight["num_timesteps"] == 2 * n
    assert resumed["iterations"] == straight["iterations"]
    assert resumed["global_step"] == straight["global_step"]
    assert resumed["lr"] == pytest.approx(straight["lr"])
    # The restored policy is the checkpointed one: its evaluation continues from where the first run was.
    assert resumed["restored"]["eval"] == pytest.approx(first["eval"])
    assert resumed["restored"]["ep_rew_window"] > 0, "recent episode statistics were not restored"


def test_checkpoints_load_with_weights_only(tmp_path: Path) -> None:
    import torch

    run(tmp_path, "w", 256, "none")
    ckpt = tmp_path / "w" / "lightning_logs" / "run_1" / "checkpoints" / "last.ckpt"
    state = torch.load(ckpt, weights_only=True)
    assert state["lit_sb3"]["num_timesteps"] == 256
    assert state["hyper_parameters"]["learning_rate"] == "lin_0.003"
    from lit_sb3 import PPO

    model = PPO.load_from_checkpoint(ckpt, weights_only=True)
    assert model.num_timesteps == 256 and model.policy is not None
