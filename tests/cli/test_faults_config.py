"""Bad configuration: refused up front (or at the first use of a user's schedule) with a ConfigurationError
that names the value and the fix. Cases already covered elsewhere: n_steps * n_envs < 2
(test_on_policy.py), a batch size that does not divide the rollout (lit-sb3-ppo's test_ppo.py), unsupported
spaces (test_ppo_spaces.py, test_dqn.py), unknown algorithms and callbacks (test_registry.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from lit_sb3 import PPO, EvalCallback, RLEnvDataModule, RLTrainer, evaluate_policy
from lit_sb3_core.errors import ConfigurationError, LitSb3Error, UnknownNameError

SMALL = {"n_steps": 16, "batch_size": 16, "n_epochs": 1}


@pytest.fixture(scope="module")
def model() -> PPO:
    return PPO(env="CartPole-v1", **SMALL)


CASES: dict[str, tuple[Callable[[PPO], Any], str]] = {
    "learn(0)": (lambda m: m.learn(0), r"total_timesteps must be a positive integer, got 0"),
    "learn(-5)": (lambda m: m.learn(-5), r"total_timesteps must be a positive integer, got -5"),
    "learn(1.5)": (lambda m: m.learn(1.5), r"total_timesteps must be a positive integer, got 1.5"),
    "RLTrainer(max_steps=0)": (
        lambda m: RLTrainer(max_steps=0),
        r"max_steps=\.\.\.\) must be a positive integer, got 0\. It is the number of environment steps",
    ),
    "RLTrainer(max_epochs=1)": (lambda m: RLTrainer(max_steps=10, max_epochs=1), r"does not take max_epochs"),
    "RLTrainer(n_eval_episodes=0)": (
        lambda m: RLTrainer(max_steps=10, n_eval_episodes=0),
        r"n_eval_episodes",
    ),
    "n_envs=0": (lambda m: RLEnvDataModule(train_env="CartPole-v1", n_envs=0), r"n_envs must be a positive"),
    "vectorization='threads'": (
        lambda m: RLEnvDataModule(vectorization="threads"),  # type: ignore[arg-type]
        r"'sync', 'async' or 'envpool'",
    ),
    "evaluate_policy(n_eval_episodes=0)": (
        lambda m: evaluate_policy(m, "CartPole-v1", n_eval_episodes=0),
        r"n_eval_episodes must be a positive",
    ),
    "validate(n_eval_episodes=0)": (
        lambda m: RLTrainer(max_steps=10, logger=False).validate(m, env="CartPole-v1", n_eval_episodes=0),
        r"n_eval_episodes must be a positive",
    ),
    "EvalCallback(n_eval_episodes=0)": (
        lambda m: EvalCallback("CartPole-v1", n_eval_episodes=0),
        r"n_eval_episodes must be a positive",
    ),
    "learning_rate=-1": (lambda m: PPO(learning_rate=-1.0), r"learning_rate must be a finite, non-negative"),
    "learning_rate=nan": (
        lambda m: PPO(learning_rate=float("nan")),
        r"learning_rate must be a finite, non-negative",
    ),
    "learning_rate='lin_abc'": (
        lambda m: PPO(learning_rate="lin_abc"),
        r"learning_rate='lin_abc' is not a valid schedule",
    ),
    "learning_rate=[1e-3]": (
        lambda m: PPO(learning_rate=[1e-3]),
        r"learning_rate must be a number, 'lin_<start>'",
    ),  # type: ignore[arg-type]
    "clip_range='fast'": (lambda m: PPO(clip_range="fast"), r"clip_range='fast' is not a valid schedule"),
    "n_steps=0": (lambda m: PPO(n_steps=0), r"n_steps must be a positive integer"),
    "gamma=1.5": (lambda m: PPO(gamma=1.5), r"gamma must be a number in \[0, 1\]"),
    "batch_size=1": (
        lambda m: PPO(batch_size=1),
        r"batch_size must be greater than 1 with normalize_advantage=True",
    ),
    # Every number finite, every range and relation checked (issue 17: accepted silently before).
    "vf_coef=nan": (lambda m: PPO(vf_coef=float("nan")), r"vf_coef must be a finite number >= 0, got nan"),
    "ent_coef=inf": (lambda m: PPO(ent_coef=float("inf")), r"ent_coef must be a finite number >= 0, got inf"),
    "max_grad_norm=-1": (
        lambda m: PPO(max_grad_norm=-1),
        r"max_grad_norm must be a finite number > 0 or None, got -1",
    ),
    "n_epochs=True": (lambda m: PPO(n_epochs=True), r"n_epochs must be a positive integer, got True"),
    "normalize_advantage='yes'": (
        lambda m: PPO(normalize_advantage="yes"),
        r"normalize_advantage must be True or False, got 'yes'",
    ),
    "target_kl=-1": (lambda m: PPO(target_kl=-1.0), r"target_kl must be a finite number > 0 or None"),
    "gamma=nan": (lambda m: PPO(gamma=float("nan")), r"gamma must be a number in \[0, 1\], got nan"),
    "sde_sample_freq=-2": (lambda m: PPO(sde_sample_freq=-2), r"sde_sample_freq must be an integer >= -1"),
    "DQN(exploration_fraction=nan)": (
        lambda m: _algo("DQN")(exploration_fraction=float("nan")),
        r"exploration_fraction must be a number in \[0, 1\]",
    ),
    "DQN(max_grad_norm=0)": (
        lambda m: _algo("DQN")(max_grad_norm=0),
        r"max_grad_norm must be a finite number > 0",
    ),
    "TD3(target_policy_noise=inf)": (
        lambda m: _algo("TD3")(target_policy_noise=float("inf")),
        r"target_policy_noise must be a finite number >= 0, got inf",
    ),
    "TD3(policy_delay=0)": (
        lambda m: _algo("TD3")(policy_delay=0),
        r"policy_delay must be a positive integer",
    ),
    "A2C(rms_prop_eps=-1)": (
        lambda m: _algo("A2C")(rms_prop_eps=-1.0),
        r"rms_prop_eps must be a finite number >= 0",
    ),
    "TRPO(target_kl=0)": (lambda m: _algo("TRPO")(target_kl=0.0), r"target_kl must be a finite number > 0"),
    "ARS(n_delta=0)": (lambda m: _algo("ARS")(n_delta=0), r"n_delta must be a positive integer"),
    "TQC(top_quantiles_to_drop_per_net=-1)": (
        lambda m: _algo("TQC")(top_quantiles_to_drop_per_net=-1),
        r"top_quantiles_to_drop_per_net must be a non-negative integer",
    ),
    "QRDQN(policy_kwargs n_quantiles=0)": (
        lambda m: _algo("QRDQN")(env="CartPole-v1", policy_kwargs={"n_quantiles": 0}),
        r"n_quantiles must be a positive integer",
    ),
    "RecurrentPPO(batch_size=1)": (
        lambda m: _algo("RecurrentPPO")(batch_size=1),
        r"batch_size must be greater than 1 with normalize_advantage=True",
    ),
    "MaskablePPO(use_masking=1)": (
        lambda m: _algo("MaskablePPO")(use_masking=1),
        r"use_masking must be True or False",
    ),
    "CrossQ(batch_size=1)": (lambda m: _algo("CrossQ")(batch_size=1), r"batch_size must be an integer >= 2"),
    # The validators that were written inline until issue 23 moved them onto foundation/checks.py.
    "make_vector_env(n_envs=0)": (
        lambda m: _make_vector_env("CartPole-v1", n_envs=0),
        r"n_envs must be a positive",
    ),
    "SAC(learning_starts=-1)": (
        lambda m: _algo("SAC")(learning_starts=-1),
        r"learning_starts must be a non-negative integer, got -1",
    ),
    "SAC(gradient_steps=-2)": (
        lambda m: _algo("SAC")(gradient_steps=-2),
        r"gradient_steps must be an integer >= -1, got -2\. .* -1 for as many as environment steps",
    ),
    "SAC(target_entropy=nan)": (
        lambda m: _algo("SAC")(target_entropy=float("nan")),
        r"target_entropy must be a finite number, got nan\. Or 'auto'",
    ),
    "SAC(net_arch=[64, 0])": (
        lambda m: _algo("SAC")(env="Pendulum-v1", policy_kwargs={"net_arch": [64, 0]}).learn(1),
        r"net_arch must be a list of positive layer sizes such as \[256, 256\], got \[64, 0\]",
    ),
    "PPO(net_arch=dict(pi=[-1]))": (
        lambda m: PPO(env="CartPole-v1", policy_kwargs={"net_arch": {"pi": [-1]}}, **SMALL).learn(16),
        r"net_arch\['pi'\] must be a list of positive layer sizes such as \[64, 64\], got \[-1\]",
    ),
    "OU noise theta=-1": (
        lambda m: _algo("TD3")(action_noise={"type": "ou", "sigma": 0.1, "theta": -1.0}, env="Pendulum-v1"),
        r"Action noise theta must be a finite number >= 0, got -1",
    ),
    "TQC drops every atom": (
        lambda m: _algo("TQC")(
            env="Pendulum-v1", top_quantiles_to_drop_per_net=3, policy_kwargs={"n_quantiles": 3}
        ),
        r"top_quantiles_to_drop_per_net=3 must be less than the critic's n_quantiles=3\. Dropping them all",
    ),
    "envpool atari frame_stack=0": (
        lambda m: _envpool_task("PongNoFrameskip-v4", {"frame_stack": 0}),
        r"atari\['frame_stack'\] must be a positive integer, got 0\. envpool stacks at least one frame",
    ),
    "step_timeout=0": (
        lambda m: RLEnvDataModule(train_env="CartPole-v1", step_timeout=0),
        r"step_timeout must be a finite number > 0 or None, got 0. It is the seconds",
    ),
    "step_timeout=nan": (
        lambda m: RLEnvDataModule(train_env="CartPole-v1", step_timeout=float("nan")),
        r"step_timeout must be a finite number > 0 or None, got nan",
    ),
}


def _make_vector_env(source: str, n_envs: int) -> Any:
    from lit_sb3_core.envs.make import make_vector_env

    return make_vector_env(source, n_envs=n_envs)


def _envpool_task(env_id: str, atari: dict[str, Any]) -> Any:
    pytest.importorskip("envpool")
    from lit_sb3_core.envs.atari import parse_atari
    from lit_sb3_core.envs.envpool_env import envpool_task

    return envpool_task(env_id, parse_atari(atari))


def _algo(name: str) -> Any:
    import lit_sb3

    return getattr(lit_sb3, name)


@pytest.mark.parametrize("case", list(CASES))
def test_bad_configuration_is_a_configuration_error(case: str, model: PPO) -> None:
    call, message = CASES[case]
    with pytest.raises(ConfigurationError, match=message) as info:
        call(model)
    assert isinstance(info.value, LitSb3Error) and isinstance(info.value, ValueError)


def test_every_bad_value_names_its_argument() -> None:
    """The shared validators set ``field``, so a loader can say where in a file the value was."""
    with pytest.raises(ConfigurationError) as info:
        PPO(vf_coef=float("nan"))
    assert info.value.field == "vf_coef"


def test_a_batch_larger_than_the_rollout_warns_and_trains_on_the_whole_rollout() -> None:
    model = PPO(n_steps=16, batch_size=10**9, n_epochs=1)
    with pytest.warns(
        UserWarning, match=r"batch_size=1000000000 is larger than the rollout \(32 = n_steps \* n_envs\)"
    ):
        model.learn(64, env="CartPole-v1", n_envs=2)
    assert model.n_updates == 2  # one minibatch (the whole rollout) per epoch, as SB3 trains


def test_more_devices_than_cpu_cores_warns() -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with pytest.warns(
        UserWarning, match=rf"devices={cores + 6}\) on CPU starts {cores + 6} training processes"
    ):
        RLTrainer(max_steps=10, accelerator="cpu", devices=cores + 6, logger=False, strategy="ddp_spawn")


@pytest.mark.parametrize(
    ("schedule", "shown"),
    [
        (lambda progress: -1.0, "-1.0"),
        (lambda progress: float("nan"), "nan"),
        (lambda progress: "fast", "'fast'"),
    ],
    ids=["negative", "nan", "not-a-number"],
)
def test_a_user_schedule_returning_a_bad_value_is_named_at_first_use(schedule: Any, shown: str) -> None:
    # SB3 lets torch say "Invalid learning rate: -1.0" (or trains on NaN).
    model = PPO(learning_rate=schedule, **SMALL)
    with pytest.raises(
        ConfigurationError,
        match=rf"The learning_rate schedule .* returned {shown} at "
        r"progress_remaining=1; a schedule must return finite, non-negative",
    ):
        model.learn(32, env="CartPole-v1")


def test_a_valid_user_schedule_is_used_as_given() -> None:
    seen: list[float] = []

    def schedule(progress: float) -> float:
        seen.append(progress)
        return 1e-3 * progress

    model = PPO(learning_rate=schedule, **SMALL)
    assert len(seen) == 1001, "sampled once when built, to be kept in hparams and model files as numbers"
    seen.clear()
    model.learn(32, env="CartPole-v1")
    assert seen[0] == 1.0 and min(seen) < 1.0
    assert model.trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(1e-3 * model.progress_remaining)


@pytest.mark.parametrize("env", [None, "CartPole-v1"], ids=["no-env", "with-env"])
def test_an_unknown_policy_alias_is_refused_at_construction(env: str | None) -> None:
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown PPO policy 'MlpPolicyy'\. Did you mean 'MlpPolicy'\?\n"
        r"Available PPO policies: CnnPolicy, MlpPolicy, MultiInputPolicy\.",
    ):
        PPO("MlpPolicyy", env=env)
    with pytest.raises(KeyError):  # SB3 raises ValueError("Policy MlpPolicyy unknown"); ours is a KeyError
        PPO("MlpPolicyy", env=env)


@pytest.mark.parametrize("model", ["os.system", "this.x", "builtins.exec"])
def test_the_command_line_never_imports_a_model_it_names(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from lit_sb3_core.cli.main import main

    imported = "this" in sys.modules
    assert main(["fit", "--model", model, "--data.train_env", "CartPole-v1", "--trainer.max_steps", "8"]) == 2
    err = capsys.readouterr().err
    assert f"--model={model!r} is not allowed" in err and "lit-sb3 algos" in err
    assert ("this" in sys.modules) == imported


def test_a_config_naming_a_class_outside_the_allowed_packages_is_refused_unimported(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from lit_sb3_core.cli.main import main

    config = tmp_path / "run.yaml"
    config.write_text(
        "model: PPO\ndata:\n  train_env: CartPole-v1\ntrainer:\n  max_steps: 8\n  logger: false\n"
        "  callbacks:\n    - class_path: this.Foo\n"
    )
    imported = "this" in sys.modules
    with pytest.raises(SystemExit) as info:  # jsonargparse's parse error: usage and status 2
        main(["fit", "--config", str(config)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Importing 'this.Foo' is not allowed" in err
    assert ("this" in sys.modules) == imported
    # --allow-import lets a user name their own package's classes (this one then imports, and has no Foo).
    with pytest.raises(SystemExit):
        main(["fit", "--config", str(config), "--allow-import", "this"])
    assert "Importing 'this.Foo' is not allowed" not in capsys.readouterr().err
