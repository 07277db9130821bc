"""The SDK's named extension points (issue 27): KL divergence for every action distribution, an optimizer
factory and ``optimizer_step`` on every base, extra algorithm state in model files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import distributions as D

from lit_sb3_core import sdk
from lit_sb3_core.sdk import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
    StateDependentNoise,
    kl_divergence,
)


def _pairs() -> dict[str, tuple[Distribution, Distribution, torch.Tensor]]:
    """Two values of each SDK distribution and torch.distributions' KL between them, per sample."""
    g = torch.Generator().manual_seed(0)
    logits_p, logits_q = torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g)
    mean_p, mean_q = torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g)
    log_std_p, log_std_q = torch.randn(3, generator=g), torch.randn(3, generator=g)
    nvec = [2, 3]
    multi = sum(
        D.kl_divergence(D.Categorical(logits=a), D.Categorical(logits=b))
        for a, b in zip(logits_p.split(nvec, -1), logits_q.split(nvec, -1))
    )
    noise = StateDependentNoise(3)
    noise.make_head(4, log_std_init=-1.0)
    latent = torch.randn(6, 4, generator=g)
    sde_p = noise.distribution(mean_p, torch.randn(4, 3, generator=g) * 0.3, latent)
    sde_q = noise.distribution(mean_q, torch.randn(4, 3, generator=g) * 0.3, latent)
    return {
        "categorical": (
            CategoricalDistribution(logits_p),
            CategoricalDistribution(logits_q),
            D.kl_divergence(D.Categorical(logits=logits_p), D.Categorical(logits=logits_q)),
        ),
        "multi_categorical": (
            MultiCategoricalDistribution(logits_p, nvec),
            MultiCategoricalDistribution(logits_q, nvec),
            multi,
        ),
        "bernoulli": (
            BernoulliDistribution(logits_p),
            BernoulliDistribution(logits_q),
            D.kl_divergence(D.Bernoulli(logits=logits_p), D.Bernoulli(logits=logits_q)).sum(-1),
        ),
        "diag_gaussian": (
            DiagGaussianDistribution(mean_p, log_std_p),
            DiagGaussianDistribution(mean_q, log_std_q),
            D.kl_divergence(D.Normal(mean_p, log_std_p.exp()), D.Normal(mean_q, log_std_q.exp())).sum(-1),
        ),
        "gsde": (
            sde_p,
            sde_q,
            D.kl_divergence(D.Normal(sde_p.mean, sde_p.std), D.Normal(sde_q.mean, sde_q.std)).sum(-1),
        ),
    }


@pytest.mark.parametrize("kind", sorted(_pairs()))
def test_kl_divergence_matches_torch_distributions(kind: str) -> None:
    old, new, expected = _pairs()[kind]
    kl = kl_divergence(old, new)
    assert kl.shape == (6,)
    torch.testing.assert_close(kl, expected)
    torch.testing.assert_close(kl_divergence(old, old), torch.zeros(6), atol=1e-6, rtol=0)


def test_kl_divergence_refuses_what_it_cannot_compute() -> None:
    from lit_sb3_core.errors import ConfigurationError

    categorical = CategoricalDistribution(torch.randn(2, 3))
    with pytest.raises(ConfigurationError, match="same class, got CategoricalDistribution and Bernoulli"):
        kl_divergence(categorical, BernoulliDistribution(torch.randn(2, 3)))

    class Uniform(Distribution):
        def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
            return torch.zeros(len(actions))

        def entropy(self) -> None:
            return None

        def sample(self) -> torch.Tensor:
            return torch.zeros(1)

        def mode(self) -> torch.Tensor:
            return torch.zeros(1)

    with pytest.raises(ConfigurationError, match=r"Uniform has no KL divergence: implement kl_divergence"):
        kl_divergence(Uniform(), Uniform())


def test_kl_divergence_is_an_sdk_name_used_by_trpo() -> None:
    from lit_sb3_trpo import trust_region

    assert "kl_divergence" in sdk.__all__
    assert trust_region.kl_divergence is sdk.kl_divergence
    old, new, expected = _pairs()["diag_gaussian"]
    torch.testing.assert_close(trust_region.mean_kl(old, new), expected.mean() / 3)  # sb3-contrib's mean


def test_every_algorithm_base_builds_optimizers_from_the_policy_settings() -> None:
    from lit_sb3_core import make_algo

    for name, env in (("ppo", "CartPole-v1"), ("a2c", "CartPole-v1"), ("dqn", "CartPole-v1")):
        model = make_algo(name, env=env, seed=0)
        head = model.make_optimizer(model.policy.parameters())
        assert type(head) is model.policy.optimizer_class
        assert head.param_groups[0]["lr"] == model.lr_schedule(1.0)
    assert sdk.OnPolicyAlgorithm.make_optimizer is sdk.RLAlgorithm.make_optimizer


def test_optimizer_step_outside_fit_is_plain_torch(tmp_path: Path) -> None:
    """A plain torch optimizer, before any fit and after one: zero, backward, clip, step (no Lightning)."""
    from lit_sb3_core import make_algo

    model = make_algo("ppo", env="CartPole-v1", seed=0, n_steps=32, batch_size=32, n_epochs=1)
    obs = torch.as_tensor(np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32))
    for when in ("before fit", "after fit"):
        optimizer = torch.optim.SGD(model.policy.value_net.parameters(), lr=0.1)
        before = model.policy.value_net.weight.detach().clone()
        loss = (model.policy.predict_values(obs) - 100.0).pow(2).mean()
        model.optimizer_step(optimizer, loss, max_grad_norm=0.5)
        step = model.policy.value_net.weight.detach() - before
        assert step.abs().sum() > 0, when
        # clipped to a global gradient norm of 0.5, then SGD's lr: the step is at most 0.05 long
        assert float(step.norm()) <= 0.05 + 1e-6, when
        model.learn(32)


def test_extra_state_survives_save_and_load(tmp_path: Path) -> None:
    from lit_sb3_core import load
    from lit_sb3_ppo.ppo import PPO

    class PhasedPPO(PPO):
        algo_name = "ppo"  # the file names ppo; loaded below with the class itself

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.auxiliary_phases = 0

        def train_on_rollout(self) -> dict[str, float]:
            self.auxiliary_phases += 1
            return super().train_on_rollout()

        def extra_state(self) -> dict[str, Any]:
            return {"auxiliary_phases": self.auxiliary_phases}

        def load_extra_state(self, state: dict[str, Any]) -> None:
            self.auxiliary_phases = int(state.get("auxiliary_phases", 0))

    model = PhasedPPO(env="CartPole-v1", seed=0, n_steps=32, batch_size=32, n_epochs=1).learn(96)
    assert model.auxiliary_phases == 3
    path = model.save(tmp_path / "model.zip") or tmp_path / "model.zip"
    loaded = PhasedPPO.load(path)
    assert loaded.auxiliary_phases == 3
    assert load(path).extra_state() == {}  # the registry's PPO has none: the key is ignored
    loaded.learn(32, env="CartPole-v1", reset_num_timesteps=False)
    assert loaded.auxiliary_phases == 4


def test_extra_state_must_be_plain_json(tmp_path: Path) -> None:
    from lit_sb3_core.errors import ModelFileError
    from lit_sb3_ppo.ppo import PPO

    class TensorState(PPO):
        def extra_state(self) -> dict[str, Any]:
            return {"counter": torch.zeros(1)}

    model = TensorState(env="CartPole-v1", seed=0)
    with pytest.raises(
        ModelFileError, match=r"extra_state\(\) must return plain JSON values.*register_buffer"
    ):
        model.save(tmp_path / "model.zip")
    assert not (tmp_path / "model.zip").exists()
