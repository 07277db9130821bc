"""TRPO: an update identical to sb3-contrib's, the trust region holds, clear errors, learning CartPole."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
import torch
from gymnasium import spaces

from lit_sb3_core import evaluate_policy, tuned_hyperparameters
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import BaseFeaturesExtractor
from lit_sb3_trpo import TRPO
from lit_sb3_trpo.trust_region import mean_kl


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _seeded_env(env_id: str, seed: int) -> gym.Env:
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env


class LinearExtractor(BaseFeaturesExtractor):
    """A features extractor with weights, shared by actor and critic."""

    def __init__(self, observation_space: spaces.Box, features_dim: int = 8) -> None:
        super().__init__(observation_space, features_dim)
        self.linear = torch.nn.Linear(int(observation_space.shape[0]), features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.linear(observations))


def _actor_and_critic_state(model: TRPO) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    state = {k: v.clone() for k, v in model.policy.state_dict().items()}
    critic = {k: v for k, v in state.items() if "value" in k}
    return {k: v for k, v in state.items() if k not in critic}, critic


# the update ----------------------------------------------------------------------------------------
_SB3_CONTRIB_CASES = [("CartPole-v1", {}), ("Pendulum-v1", {}), ("Pendulum-v1", {"use_sde": True})]


@pytest.mark.parametrize(
    ("env_id", "extra"),
    [
        *_SB3_CONTRIB_CASES,
        # compile=True: the critic's minibatch steps as compiled programs (inductor builds them: slow).
        *(
            pytest.param(env_id, {**extra, "compile": True}, marks=pytest.mark.slow)
            for env_id, extra in _SB3_CONTRIB_CASES
        ),
    ],
)
def test_one_update_matches_sb3_contrib(
    env_id: str, extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Same weights and rollout in, same weights and metrics out as sb3-contrib's TRPO.train()."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    extra = dict(extra)
    ours_only = {"compile": extra.pop("compile", False)}
    from stable_baselines3.common.logger import Logger

    # Both start conjugate gradients from 1e-4 * randn_like(flat gradient); a zero start makes the two
    # runs comparable. Only 1-D tensors are zeroed: Gaussian action sampling (2-D) stays random.
    randn_like = torch.randn_like
    monkeypatch.setattr(
        torch, "randn_like", lambda t, **kw: torch.zeros_like(t) if t.dim() == 1 else randn_like(t, **kw)
    )
    hyperparameters = {
        "n_steps": 128,
        "batch_size": 128,  # one critic minibatch per epoch: the shuffling order cannot matter
        "n_critic_updates": 3,
        "cg_max_steps": 10,
        "cg_damping": 0.05,
        "target_kl": 0.02,
        "gamma": 0.95,
        **extra,
    }
    model = TRPO(env=env_id, seed=5, **hyperparameters, **ours_only)
    initial = copy.deepcopy(model.policy.state_dict())
    model.learn(128)
    assert model.n_updates == 1

    reference = sb3_contrib.TRPO("MlpPolicy", env_id, device="cpu", **hyperparameters)
    reference.policy.load_state_dict(initial)
    reference.set_logger(Logger(folder=None, output_formats=[]))
    ours, theirs = model.rollout, reference.rollout_buffer
    theirs.observations[:] = ours.observations.numpy().reshape(theirs.observations.shape)
    theirs.actions[:] = ours.actions.numpy().reshape(theirs.actions.shape)
    for name in ("values", "log_probs", "advantages", "returns"):
        getattr(theirs, name)[:] = getattr(ours, name).numpy()
    theirs.pos, theirs.full, theirs.generator_ready = 128, True, False
    reference.train()

    # Conjugate gradients amplify float32 rounding (summation order differs): compare each parameter's
    # change, which must agree to 1% of its size.
    ours_after = model.policy.state_dict()
    for key, value in reference.policy.state_dict().items():
        ours_delta, theirs_delta = ours_after[key] - initial[key], value - initial[key]
        gap = float((ours_delta - theirs_delta).norm())
        assert gap <= 1e-2 * float(theirs_delta.norm()) + 1e-6, (key, gap, float(theirs_delta.norm()))
    logged = reference.logger.name_to_value
    assert logged["train/is_line_search_success"] == model.last_metrics["train/is_line_search_success"] == 1.0
    for key in ("train/policy_objective", "train/kl_divergence_loss", "train/value_loss"):
        assert model.last_metrics[key] == pytest.approx(logged[key], rel=1e-3, abs=1e-6), key


def test_policy_step_stays_inside_the_trust_region() -> None:
    target_kl = 0.002
    model = TRPO(
        env="Pendulum-v1", n_steps=256, batch_size=64, n_critic_updates=1, target_kl=target_kl, seed=0
    )
    before = copy.deepcopy(model.policy)
    model.learn(256)
    buffer = model.rollout
    obs = buffer.observations.reshape(-1, *buffer.observations.shape[2:])
    actions = buffer.actions.reshape(-1, *buffer.actions.shape[2:])
    with torch.no_grad():
        old, new = before.get_distribution(obs), model.policy.get_distribution(obs)
        kl = float(mean_kl(new, old))
        advantages = buffer.advantages.reshape(-1)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        old_log_prob = buffer.log_probs.reshape(-1)
        surrogate = float((advantages * torch.exp(new.log_prob(actions) - old_log_prob)).mean())
    assert model.last_metrics["train/is_line_search_success"] == 1.0
    assert 0.0 < kl < target_kl
    assert kl == pytest.approx(model.last_metrics["train/kl_divergence_loss"], rel=1e-4)
    assert surrogate > 0.0  # the surrogate of the unchanged policy is E[A] = 0
    assert surrogate == pytest.approx(model.last_metrics["train/policy_objective"], rel=1e-4)


def test_failed_line_search_restores_actor_and_critic_cannot_move_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import lit_sb3_trpo.trpo as trpo_module

    real_solver = trpo_module.conjugate_gradient
    # Walking against the natural gradient lowers the surrogate at every trial: the line search must fail.
    monkeypatch.setattr(trpo_module, "conjugate_gradient", lambda *a, **kw: -real_solver(*a, **kw))
    model = TRPO(
        env="CartPole-v1",
        n_steps=64,
        batch_size=32,
        n_critic_updates=3,
        seed=0,
        policy_kwargs={"features_extractor_class": LinearExtractor},
    )
    actor_before, critic_before = _actor_and_critic_state(model)
    assert any(k.startswith("features_extractor") for k in actor_before)
    model.learn(64)
    actor_after, critic_after = _actor_and_critic_state(model)
    for key, value in actor_before.items():
        assert torch.equal(actor_after[key], value), f"{key} moved"
    assert any(not torch.equal(critic_after[k], v) for k, v in critic_before.items()), "critic did not train"
    metrics = model.last_metrics
    assert metrics["train/is_line_search_success"] == 0.0 and metrics["train/kl_divergence_loss"] == 0.0


def test_sub_sampling_uses_part_of_the_rollout() -> None:
    model = TRPO(
        env="CartPole-v1", n_steps=64, batch_size=64, n_critic_updates=1, sub_sampling_factor=4, seed=0
    )
    model.learn(64)
    assert model.last_metrics["train/is_line_search_success"] in (0.0, 1.0)
    with pytest.raises(ConfigurationError, match="sub_sampling_factor"):
        TRPO(env="CartPole-v1", n_steps=4, batch_size=4, sub_sampling_factor=4).learn(4)


_DDP_SCRIPT = """
import torch
torch.set_num_threads(1)
from lit_sb3 import TRPO, RLEnvDataModule, RLTrainer
model = TRPO(n_steps=128, batch_size=64, n_critic_updates=2, seed=0)
trainer = RLTrainer(max_steps=1024, accelerator="cpu", devices=2, strategy="ddp", logger=False,
                    enable_progress_bar=False, enable_checkpointing=False)
trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1"))
flat = torch.cat([p.detach().flatten() for p in model.policy.parameters()])
with open(f"rank{trainer.global_rank}.txt", "w") as f:
    f.write(f"{model.num_timesteps} {model.iterations} {flat.double().sum().item():.10e}")
"""


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")
def test_ddp_ranks_take_identical_steps(tmp_path: Path) -> None:
    """Two CPU ranks (gloo), plain strategy="ddp": every rank ends with the same actor and critic."""
    script = tmp_path / "ddp_trpo.py"
    script.write_text(_DDP_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False
    )
    files = [tmp_path / f"rank{rank}.txt" for rank in (0, 1)]
    assert out.returncode == 0 and all(f.exists() for f in files), out.stderr[-4000:]
    (steps0, iterations0, sum0), (steps1, iterations1, sum1) = (f.read_text().split() for f in files)
    assert (
        int(steps0) == int(steps1) >= 1024 and iterations0 == iterations1 == "4"
    )  # 2 ranks x 128 steps per iteration
    assert sum0 == sum1, "the ranks' parameters diverged"


# configuration -------------------------------------------------------------------------------------
def test_hyperparameters_are_trpo_arguments_only() -> None:
    model = TRPO(env="CartPole-v1", target_kl=0.05)
    hparams = dict(model.hparams)
    json.dumps(hparams)
    assert hparams["target_kl"] == 0.05 and hparams["learning_rate"] == 1e-3
    assert not {"ent_coef", "vf_coef", "max_grad_norm"} & set(hparams)
    TRPO(**hparams)  # what loading a model file does


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"line_search_shrinking_factor": 1.0}, "line_search_shrinking_factor"),
        ({"target_kl": 0.0}, "target_kl"),
        ({"cg_max_steps": 0}, "cg_max_steps"),
        ({"cg_damping": -0.1}, "cg_damping"),
        ({"batch_size": 0}, "batch_size"),
        ({"n_critic_updates": 1.5}, "n_critic_updates"),
        ({"sub_sampling_factor": 0}, "sub_sampling_factor"),
        ({"env": "CartPole-v1", "use_sde": True}, "gSDE needs Box actions"),
        ({"env": "Pendulum-v1", "policy_kwargs": {"use_sde": True}}, "policy_kwargs cannot hold use_sde"),
    ],
)
def test_bad_hyperparameters_are_explained(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        TRPO(**kwargs)


def test_batch_size_not_dividing_the_rollout_warns() -> None:
    with pytest.warns(UserWarning, match="batch_size=48"):
        TRPO(env="CartPole-v1", n_steps=64, batch_size=48, n_critic_updates=1).learn(64)


def test_rollout_size_is_checked_at_construction_as_in_sb3() -> None:
    """Given an env, the rollout size is known when the model is built: a one-step rollout with advantage
    normalization is refused there (an AssertionError too, as sb3-contrib asserts), and a batch larger than
    the rollout warns and trains the critic on the whole rollout."""
    with pytest.raises(AssertionError, match="n_steps \\* n_envs must be greater than 1"):
        TRPO(env="Pendulum-v1", n_steps=1)
    TRPO(env="Pendulum-v1", n_steps=1, normalize_advantage=False, batch_size=1)
    with pytest.warns(
        UserWarning, match=r"batch_size=8 is larger than the rollout \(6 = n_steps \* n_envs\)"
    ):
        model = TRPO(env="Pendulum-v1", n_steps=6, batch_size=8, n_critic_updates=2, seed=0)
    with pytest.warns(UserWarning, match="batch_size=8 is larger than the rollout"):
        model.learn(12)
    assert model.num_timesteps == 12 and math.isfinite(model.last_metrics["train/value_loss"])


def test_tuned_hyperparameters_construct() -> None:
    for env_id in TRPO.tuned_hyperparameters:
        split = tuned_hyperparameters("trpo", env_id)  # refuses keys neither TRPO nor the datamodule takes
        TRPO(**split["model"])
        assert split["data"]["n_envs"] == 2 and split["trainer"]["max_steps"] > 0
    assert TRPO.tuned_hyperparameters["CartPole-v1"]["cg_damping"] == 1e-3


# learning ------------------------------------------------------------------------------------------
def test_learns_cartpole_quickly() -> None:
    """rl-zoo3's CartPole hyperparameters, 40% of their budget: far above a random policy (~22)."""
    tuned = dict(TRPO.tuned_hyperparameters["CartPole-v1"])
    n_envs = tuned.pop("n_envs")
    tuned.pop("n_timesteps")
    model = TRPO(env="CartPole-v1", seed=1, **tuned)
    before, _ = evaluate_policy(model, _seeded_env("CartPole-v1", 100), n_eval_episodes=10)
    model.learn(40_000, n_envs=n_envs)
    after, _ = evaluate_policy(model, _seeded_env("CartPole-v1", 100), n_eval_episodes=10)
    assert model.last_metrics["rollout/ep_rew_mean"] > 100
    assert after >= 200 and after > before + 100, (before, after)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_learns_pendulum_with_rl_zoo_budget(seed: int) -> None:
    tuned = dict(TRPO.tuned_hyperparameters["Pendulum-v1"])
    n_envs, n_timesteps = tuned.pop("n_envs"), tuned.pop("n_timesteps")
    model = TRPO(env="Pendulum-v1", seed=seed, **tuned).learn(n_timesteps, n_envs=n_envs)
    mean_reward, _ = evaluate_policy(model, _seeded_env("Pendulum-v1", 1000 + seed), n_eval_episodes=10)
    assert mean_reward > -400, mean_reward
