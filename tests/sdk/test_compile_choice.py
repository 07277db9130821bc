"""``compile="auto"``: a run compiles its update where compiling pays back (its budget reaches the
algorithm's ``compile_pays_after``, one process, settings and optimizers the compiled programs run, a C++
compiler for inductor), and otherwise runs eagerly and says why. The decisions are tested without
compiling; one slow test compiles for real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from lit_sb3 import A2C, DQN, PPO, SAC
from lit_sb3_a2c.rmsprop_tf_like import RMSpropTFLike
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk.compile_choice import check_compile, compiler_missing


@pytest.mark.parametrize("value", ["yes", 1, None, "Auto"])
def test_compile_takes_true_false_or_auto(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="compile must be True, False or 'auto'"):
        check_compile(value)
    with pytest.raises(ConfigurationError, match="compile must be True, False or 'auto'"):
        DQN("MlpPolicy", "CartPole-v1", compile=value)
    assert [check_compile(v) for v in (True, False, "auto")] == [True, False, "auto"]


def test_auto_runs_eagerly_below_the_budget_where_compiling_pays(capsys: pytest.CaptureFixture[str]) -> None:
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, n_epochs=1, compile="auto", verbose=1)
    assert PPO.compile_pays_after is not None and model.compile_pays_after == PPO.compile_pays_after
    model.learn(128)
    assert model.compile_update is False and model._compiled_step is None
    out = capsys.readouterr().out
    assert f"not compiling the update (the budget, 128 steps, is below the {PPO.compile_pays_after:,}" in out
    assert model.hparams["compile"] == "auto"  # saved as chosen: a loaded model decides again per run


@pytest.mark.parametrize("choice", [False, "auto"])
def test_a_saved_choice_comes_back(tmp_path: Path, choice: Any) -> None:
    model = DQN("MlpPolicy", "CartPole-v1", learning_starts=10, compile=choice)
    model.learn(20)
    model.save(tmp_path / "dqn.zip")
    assert DQN.load(tmp_path / "dqn.zip").compile_choice == choice


def test_auto_skips_settings_the_compiled_step_does_not_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """gSDE (SAC) and an optimizer outside Adam/AdamW/RMSprop (A2C's RMSpropTFLike) run eagerly under
    "auto" even past the budget; compile=True refuses them with the fix."""
    monkeypatch.setattr(SAC, "compile_pays_after", 1)
    monkeypatch.setattr(A2C, "compile_pays_after", 1)
    sac = SAC(
        "MlpPolicy", "Pendulum-v1", use_sde=True, learning_starts=8, batch_size=8, compile="auto", verbose=1
    )
    sac.learn(16)
    assert sac.compile_update is False
    assert "not compiling the update (gSDE's update is not compiled" in capsys.readouterr().out
    with pytest.raises(ConfigurationError, match="use_sde=False, or compile=False"):
        SAC("MlpPolicy", "Pendulum-v1", use_sde=True, compile=True)

    a2c = A2C(
        "MlpPolicy",
        "CartPole-v1",
        policy_kwargs={"optimizer_class": RMSpropTFLike},
        compile="auto",
        verbose=1,
    )
    a2c.learn(10)
    assert a2c.compile_update is False
    assert (
        "not compiling the update (compile=True compiles Adam, AdamW and RMSprop" in capsys.readouterr().out
    )


def test_auto_leaves_image_policies_eager(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pay-back was measured on MLP policies; images are convolution-bound (compile=True still compiles)."""
    from lit_sb3.common.envs import FakeImageEnv

    monkeypatch.setattr(DQN, "compile_pays_after", 1)
    env = FakeImageEnv(screen_height=36, screen_width=36)
    model = DQN("CnnPolicy", env, learning_starts=10, buffer_size=100, compile="auto", verbose=1)
    model.learn(20)
    assert model.compile_update is False
    assert "'auto' compiles policies on flat observations" in capsys.readouterr().out


def test_auto_runs_eagerly_without_a_cpp_compiler(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch._inductor.config as inductor_config

    assert compiler_missing() is None  # this machine builds with g++
    monkeypatch.setattr(DQN, "compile_pays_after", 1)
    model = DQN("MlpPolicy", "CartPole-v1", learning_starts=10, compile="auto", verbose=1)
    with inductor_config.patch({"cpp.cxx": ("no-such-c++-compiler",)}):  # torch's own config patch
        assert "install g++ or set CXX" in str(compiler_missing())
        model.learn(20)
    assert compiler_missing() is None
    assert model.compile_update is False and model._compiled_step is None
    assert "inductor finds no C++ compiler" in capsys.readouterr().out


@pytest.mark.slow
def test_auto_compiles_a_run_past_the_budget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Past ``compile_pays_after`` the run compiles; a later run below it goes back to the eager update
    (the compiled program stays built for the next long run)."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setattr(PPO, "compile_pays_after", 128)
    model = PPO(
        "MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, n_epochs=1, compile="auto", seed=0, verbose=1
    )
    model.learn(128)
    assert model.compile_update is True and model._compiled_step is not None
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(64, reset_num_timesteps=False)
    assert model.compile_update is False
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
