"""``CrossQ(compile=True)``: each gradient step (the joint critic pass, the actor and temperature losses, their
Adam steps, the Batch Renorm layers' mode switches and running statistics) as one compiled program learns
what the eager CrossQ learns, and learns Pendulum under bf16 autocast (the equivalence runs are slow:
inductor compiles two programs, with and without the actor's update, a minute or more of CPU cold)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_core import RLEnvDataModule, RLTrainer, evaluate_policy
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_crossq import CrossQ


def _compile_cache(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(folder))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)


def test_what_it_cannot_compile_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        CrossQ("MlpPolicy", compile="yes")
    with pytest.raises(ConfigurationError, match="use_sde=False, or compile=False"):
        CrossQ("MlpPolicy", use_sde=True, compile=True)
    model = CrossQ(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=10,
        batch_size=8,
        compile=True,
        device="cpu",
        policy_kwargs={"net_arch": [8], "optimizer_class": torch.optim.SGD},
    )
    with pytest.raises(ConfigurationError, match=r"optimizer_class=torch\.optim\.Adam"):
        model.learn(12)  # refused before anything is compiled


def _crossq(compile: bool, **overrides: Any) -> CrossQ:
    """Small CrossQ on Pendulum. Adam's ``eps`` is 1e-3 as in test_crossq_parity.py: the bias of a hidden
    unit active on the whole batch is cancelled by the Batch Renorm after it, so its true gradient is 0 and
    what either side computes is rounding noise, which Adam with ``eps=1e-8`` turns into full-size steps of
    either sign; with 1e-3 they stay as small as the noise."""
    kwargs: dict[str, Any] = {
        "learning_starts": 100,
        "buffer_size": 2_000,
        "batch_size": 64,
        "learning_rate": lambda progress: 1e-3 * (0.5 + 0.5 * progress),  # a schedule, not reaching 0
        "policy_delay": 2,
        "seed": 0,
        "device": "cpu",
        "policy_kwargs": {
            "net_arch": [32, 32],
            # Renormalizing from the 11th training pass of each layer on (critics: step 11, actor: step 22).
            "renorm_warmup_steps": 10,
            "optimizer_kwargs": {"betas": (0.5, 0.999), "eps": 1e-3},
        },
        **overrides,
    }
    return CrossQ("MlpPolicy", "Pendulum-v1", compile=compile, **kwargs)


@pytest.mark.slow
def test_a_compiled_crossq_learns_what_the_eager_one_learns(monkeypatch: Any, tmp_path: Path) -> None:
    """Same seed: ``learn(130)`` (30 gradient steps inside Lightning's loop, 15 of them with the actor, a
    decaying learning rate, a learned temperature, renormalization from step 11), then 20 more from the same
    replay buffer: the same weights, Batch Renorm statistics and step counts, Adam states, Lightning step
    counts and logged losses within float rounding (each model built right before its run: building one
    seeds torch).

    Not longer: from about 50 steps on, rounding differences grow by orders of magnitude within a few steps
    between any two spellings of the update (eager torch against the same program run uncompiled through
    ``torch.func``, too), as Batch Renorm divides by batch deviations that can be tiny."""
    _compile_cache(monkeypatch, tmp_path)
    eager = _crossq(False)
    eager.learn(130)
    compiled = _crossq(True)
    compiled.learn(130)
    assert compiled.trainer.global_step == eager.trainer.global_step == 30 + 2 * 15
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key
    for model in (eager, compiled):
        torch.manual_seed(1)  # the actor's draws
        np.random.seed(1)  # the minibatch indices: numpy's global generator, as SB3's buffers
        model.train(gradient_steps=20)
    assert compiled.n_updates == eager.n_updates == 50
    theirs = eager.policy.state_dict()
    for name, ours in compiled.policy.state_dict().items():
        torch.testing.assert_close(ours, theirs[name], rtol=1e-4, atol=1e-5, msg=name)
    assert int(theirs["critic.qf0.0.steps"]) == 50 and int(theirs["actor.latent_pi.0.steps"]) == 25
    for ours_optimizer, theirs_optimizer in zip(compiled.optimizers(), eager.optimizers(), strict=True):
        ours_state = ours_optimizer.optimizer.state_dict()["state"]
        theirs_state = theirs_optimizer.optimizer.state_dict()["state"]
        assert ours_state.keys() == theirs_state.keys()
        for index, state in theirs_state.items():
            assert float(ours_state[index]["step"]) == float(state["step"])
            torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-5)
    # every layer back in eval mode after the program, as after the eager step
    assert not any(norm.training for norm in compiled.policy.actor_norms + compiled.policy.critic_norms)


def _score(precision: str, compile: bool) -> float:
    """CrossQ (64x64 actor and critics, policy_delay 2) on Pendulum for 4,000 steps at ``precision``; the
    mean return of 10 episodes (test_crossq.py's learning test, under ``RLTrainer``)."""
    model = CrossQ(
        policy_delay=2, batch_size=64, policy_kwargs={"net_arch": [64, 64]}, seed=0, compile=compile
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
    assert all(b.dtype != torch.bfloat16 for b in model.policy.buffers()), "fp32 statistics under autocast"
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Pendulum-v1")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=0)
    score, _ = evaluate_policy(model, env, n_eval_episodes=10)
    env.close()
    return float(score)


@pytest.mark.slow  # two 4,000-step CrossQ runs and a compile: minutes of CPU cold
def test_a_compiled_crossq_learns_under_bf16_autocast(monkeypatch: Any, tmp_path: Path) -> None:
    """``compile=True`` with ``precision="bf16-mixed"`` learns Pendulum as the eager float32 run does (the
    Batch Renorm statistics of bf16 activations are kept in float32)."""
    _compile_cache(monkeypatch, tmp_path)
    scores = {
        "32-true": _score("32-true", compile=False),
        "bf16-mixed compiled": _score("bf16-mixed", compile=True),
    }
    # A random policy scores about -1200, a solved Pendulum about -150.
    assert scores["32-true"] > -400 and scores["bf16-mixed compiled"] > -400, scores
