"""Interruptions: Ctrl+C and SIGTERM stop a long rollout at the next step, save a checkpoint that resumes,
close the envs, flush the logs, and exit with Lightning's status. Real processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import _fault_envs as fe
import pytest
import torch

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer
from lit_sb3_core.engine.faults import InterruptCheckpoint

TESTS = Path(__file__).resolve().parents[1]  # tests/, where _fault_envs.py is

CHILD = textwrap.dedent(
    """
    import json, signal, sys, torch
    # A test run started in the background (`pytest &` in a script) has SIGINT ignored, and children
    # inherit that; a user's terminal gives Python its Ctrl+C handler, so give the child that handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    torch.set_num_threads(1)
    from lightning.pytorch.callbacks import Callback
    from lit_sb3 import PPO, RLEnvDataModule, RLTrainer
    import _fault_envs as fe

    root, folder, max_steps, fast_steps, ckpt = sys.argv[1:6]
    restored = {}

    class RecordStart(Callback):
        def on_train_start(self, trainer, pl_module):
            restored.update(num_timesteps=pl_module.num_timesteps, iterations=pl_module.iterations)

    model = PPO(n_steps=64, batch_size=64, n_epochs=2, seed=0)
    datamodule = RLEnvDataModule(
        train_env=fe.SlowAfter, env_kwargs={"folder": folder, "fast_steps": int(fast_steps)}, seed=0
    )
    trainer = RLTrainer(
        max_steps=int(max_steps), default_root_dir=root, enable_progress_bar=False, callbacks=[RecordStart()]
    )
    trainer.fit(model, datamodule=datamodule, ckpt_path=None if ckpt == "none" else ckpt)
    print(json.dumps({"num_timesteps": model.num_timesteps, "iterations": model.iterations, "restored": restored}))
    """
)


def _child(tmp_path: Path, folder: Path, max_steps: int, fast_steps: int, ckpt: str) -> subprocess.Popen[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)])}
    folder.mkdir(exist_ok=True)
    command = [
        sys.executable,
        str(script),
        str(tmp_path / "root"),
        str(folder),
        str(max_steps),
        str(fast_steps),
        ckpt,
    ]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(
    ("sig", "status", "said"),
    [(signal.SIGINT, 1, "Ctrl+C"), (signal.SIGTERM, 0, "SIGTERM")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_mid_rollout_stops_at_the_next_step_saves_and_resumes_in_another_process(
    tmp_path: Path, sig: signal.Signals, status: int, said: str
) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    # Three fast iterations of 64 steps; the fourth rollout turns slow after step 200 (56 steps * 50 ms left).
    first = tmp_path / "first"
    child = _child(tmp_path, first, 100_000, 200, "none")
    deadline = time.monotonic() + 300
    while not (first / "slow").exists():
        assert child.poll() is None, child.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the child never reached the slow phase"
        time.sleep(0.01)
    sent_during = int((first / "at").read_text())
    child.send_signal(sig)
    _, stderr = child.communicate(timeout=120)

    # Lightning's status: sys.exit(1) after Ctrl+C; SIGTERMException, a SystemExit without a code, after SIGTERM.
    assert child.returncode == status, stderr[-3000:]
    slow_from, closed_at = int((first / "slow").read_text()), int((first / "closed").read_text())
    assert slow_from == 201
    # Stopped at the next step (the step in progress when the signal was sent, or the one after, since the
    # child keeps stepping while the parent sends), not at the end of the rollout (step 256); env closed.
    assert sent_during <= closed_at <= sent_during + 2 < 256, (sent_during, closed_at)
    checkpoint = tmp_path / "root" / "lightning_logs" / "run_1" / "checkpoints" / "interrupted.ckpt"
    assert f"interrupted by {said} after 192 environment steps; saved {checkpoint}" in stderr
    state = torch.load(checkpoint, weights_only=True)  # a plain, safe checkpoint
    assert (state["lit_sb3"]["num_timesteps"], state["lit_sb3"]["iterations"]) == (192, 3)
    events = EventAccumulator(str(checkpoint.parents[1])).Reload()
    assert [e.step for e in events.Scalars("time/fps")] == [64, 128, 192], "the logs were not flushed"

    # Resume in a new process (explicit path for SIGINT, "last" for SIGTERM) and finish the budget.
    resumed = _child(
        tmp_path, tmp_path / "second", 320, 10**9, str(checkpoint) if sig == signal.SIGINT else "last"
    )
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr[-3000:]
    result = json.loads(stdout.strip().splitlines()[-1])
    assert result["restored"] == {"num_timesteps": 192, "iterations": 3}
    assert (result["num_timesteps"], result["iterations"]) == (320, 5)


@pytest.fixture
def sigint_handler_restored():
    handler = signal.getsignal(signal.SIGINT)
    yield handler
    signal.signal(signal.SIGINT, handler)


def test_learn_lets_ctrl_c_through_as_sb3_does_and_the_model_stays_usable(
    tmp_path: Path, sigint_handler_restored: object
) -> None:
    env = fe.CtrlCAtStep(at=40)
    model = PPO(n_steps=16, batch_size=16, n_epochs=1, seed=0)
    with pytest.raises(KeyboardInterrupt):  # not Lightning's SystemExit(1): `except KeyboardInterrupt` works
        model.learn(1000, env=lambda: env)
    assert signal.getsignal(signal.SIGINT) is sigint_handler_restored, "Ctrl+C was left ignored"
    assert env.closed, "the env was not closed"
    # The unfinished third rollout is dropped: the model describes its last complete iteration.
    assert (model.num_timesteps, model.iterations) == (32, 2)
    model.save(tmp_path / "after_ctrl_c.zip")
    assert PPO.load(tmp_path / "after_ctrl_c.zip").num_timesteps == 32
    model.learn(32, env=fe.Healthy, reset_num_timesteps=False)
    assert model.num_timesteps == 64


def test_fit_saves_a_checkpoint_on_ctrl_c_and_exits_like_lightning(
    tmp_path: Path, sigint_handler_restored: object
) -> None:
    model = PPO(n_steps=16, batch_size=16, n_epochs=1, seed=0)
    trainer = RLTrainer(max_steps=1000, default_root_dir=tmp_path, enable_progress_bar=False)
    with pytest.raises(SystemExit) as info:
        trainer.fit(model, datamodule=RLEnvDataModule(train_env=lambda: fe.CtrlCAtStep(at=40)))
    assert info.value.code == 1 and trainer.interrupted
    # Lightning ignores SIGINT while it shuts down; RLTrainer gives Ctrl+C its handler back (in a notebook
    # the next Ctrl+C must work, and processes started later must not inherit an ignored SIGINT).
    assert signal.getsignal(signal.SIGINT) is sigint_handler_restored, "Ctrl+C was left ignored"
    (callback,) = [cb for cb in trainer.callbacks if isinstance(cb, InterruptCheckpoint)]
    assert callback.saved_path is not None and callback.saved_path.name == "interrupted.ckpt"
    resumed = PPO.load_from_checkpoint(callback.saved_path, weights_only=True)
    assert resumed.num_timesteps == 32


def test_no_interrupt_checkpoint_without_checkpointing(tmp_path: Path) -> None:
    assert not any(
        isinstance(cb, InterruptCheckpoint)
        for cb in RLTrainer(max_steps=10, enable_checkpointing=False, logger=False).callbacks
    )
    assert any(isinstance(cb, InterruptCheckpoint) for cb in RLTrainer(max_steps=10, logger=False).callbacks)
    off = RLTrainer(max_steps=10, logger=False, checkpoint_on_interrupt=False)
    assert not any(isinstance(cb, InterruptCheckpoint) for cb in off.callbacks)
