"""``TQC(compile=True)``: SAC's compiled gradient step with TQC's quantile critic loss learns what the
eager TQC learns, in float32 and under bf16 autocast (slow: inductor compiles the program, a minute or more
of CPU cold)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_core import RLEnvDataModule, RLTrainer, evaluate_policy
from lit_sb3_tqc import TQC


def _tqc(compile: bool) -> TQC:
    """Tanh networks, not ReLU: a run's gradients are then continuous in its weights, so two runs whose weights
    differ by float rounding get gradients that differ by rounding too. With ReLU a hidden unit sitting on its
    kink for one stored transition opens in one run and stays shut in the other: measured at seed 0 (critic 0,
    layer 2, preactivation -5.3e-7 eager, +1.2e-7 compiled, from weights 9e-8 apart), every minibatch that
    draws that transition gave critic gradients 1e-3 apart, and an *eager* run given the compiled run's
    weights missed the eager run's Adam moments by as much as the compiled run did (2.7e-5, atol 1e-6)."""
    return TQC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=100,
        buffer_size=2_000,
        batch_size=64,
        learning_rate="lin_1e-3",
        seed=0,
        device="cpu",
        policy_kwargs={
            "net_arch": [32, 32],
            "n_quantiles": 5,
            "n_critics": 2,
            "activation_fn": torch.nn.Tanh,
        },
        compile=compile,
    )


@pytest.mark.slow
def test_a_compiled_tqc_learns_what_the_eager_one_learns(monkeypatch: Any, tmp_path: Path) -> None:
    """``learn(130)`` (30 gradient steps), then 60 more from the same buffer: the same weights and Adam
    states within float rounding (each model built right before its run: building seeds torch)."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _tqc(False)
    eager.learn(130)
    compiled = _tqc(True)
    compiled.learn(130)
    assert compiled.trainer.global_step == eager.trainer.global_step == 3 * 30
    for model in (eager, compiled):
        torch.manual_seed(1)  # the actor's draws
        np.random.seed(1)  # the minibatch indices: numpy's global generator, as SB3's buffers
        model.train(gradient_steps=60)
    assert compiled.n_updates == eager.n_updates == 90
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    for ours_optimizer, theirs_optimizer in zip(compiled.optimizers(), eager.optimizers(), strict=True):
        ours_state = ours_optimizer.optimizer.state_dict()["state"]
        for index, state in theirs_optimizer.optimizer.state_dict()["state"].items():
            assert float(ours_state[index]["step"]) == float(state["step"]) == 90
            torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-6)


def _tqc_score(precision: str, compile: bool) -> float:
    """TQC (64x64, 25 quantiles, 2 critics) on Pendulum for 4,000 steps at ``precision``; the mean return of
    10 episodes."""
    model = TQC(
        "MlpPolicy",
        learning_rate=1e-3,
        batch_size=128,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
        compile=compile,
    )
    RLTrainer(
        max_steps=4_000,
        precision=precision,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    ).fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1", seed=0))
    assert all(p.dtype == torch.float32 for p in model.policy.parameters()), "fp32 weights under autocast"
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Pendulum-v1")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=0)
    score, _ = evaluate_policy(model, env, n_eval_episodes=10)
    env.close()
    return float(score)


@pytest.mark.slow  # two 4,000-step TQC runs and a compile: ~2-3 min of CPU cold, less with inductor's cache
def test_a_compiled_tqc_learns_the_same_under_bf16_autocast(monkeypatch: Any, tmp_path: Path) -> None:
    """``compile=True`` with ``precision="bf16-mixed"`` (the benchmark's tqc-zoo-bf16-compiled) learns
    Pendulum as the eager float32 run does."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    scores = {
        "32-true": _tqc_score("32-true", compile=False),
        "bf16-mixed compiled": _tqc_score("bf16-mixed", compile=True),
    }
    # A random policy scores about -1200, a solved Pendulum about -150.
    assert scores["32-true"] > -700 and scores["bf16-mixed compiled"] > -700, scores
    assert abs(scores["bf16-mixed compiled"] - scores["32-true"]) < 250, scores
