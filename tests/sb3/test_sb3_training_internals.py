"""SB3's training internals that user code calls on a model: ``model.train(gradient_steps=...)``,
``model._on_step()``, ``model.actor_target``, and the critic's ``features_extractor`` when shared."""

from __future__ import annotations

import copy

import pytest
import torch

from lit_sb3 import DQN, SAC, TD3
from lit_sb3_core.errors import ConfigurationError

TINY = {"policy_kwargs": {"net_arch": [8]}, "learning_starts": 0, "batch_size": 16, "seed": 0}


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_train_with_gradient_steps_updates_the_online_networks_only_when_tau_is_zero() -> None:
    model = TD3("MlpPolicy", "Pendulum-v1", policy_delay=1, **TINY).learn(32)
    assert model.actor_target is model.policy.actor_target
    critic = copy.deepcopy(list(model.critic.parameters()))
    critic_target = copy.deepcopy(list(model.critic_target.parameters()))
    actor_target = copy.deepcopy(list(model.actor_target.parameters()))
    updates = model.n_updates
    model.tau = 0.0
    assert model.train(gradient_steps=2, batch_size=8) is model
    assert model.n_updates == updates + 2
    assert not _same(critic, list(model.critic.parameters()))
    assert _same(critic_target, list(model.critic_target.parameters()))
    assert _same(actor_target, list(model.actor_target.parameters()))
    model.tau = 0.5
    model.train(gradient_steps=1)
    assert not _same(critic_target, list(model.critic_target.parameters()))


def test_train_without_gradient_steps_is_still_the_module_mode_switch() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", **TINY)
    assert model.train(False) is model
    assert not model.training and not model.policy.training
    model.train()
    assert model.training


def test_train_with_gradient_steps_on_an_empty_buffer_says_to_learn_first() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", **TINY)
    with pytest.raises(ConfigurationError, match=r"empty: collect transitions first with model.learn"):
        model.train(gradient_steps=1)


def test_on_step_applies_a_changed_target_update_interval_at_once() -> None:
    model = DQN("MlpPolicy", "CartPole-v1", target_update_interval=1000, **TINY).learn(64)
    online, target = model.q_net, model.q_net_target
    assert not _same(list(online.parameters()), list(target.parameters()))
    calls = model.n_calls
    model.target_update_interval = 1
    model._on_step()
    assert model.n_calls == calls + 1
    assert _same(list(online.parameters()), list(target.parameters()))  # tau=1: a full copy


def test_a_shared_critic_extractor_is_the_actors() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", policy_kwargs={"net_arch": [8], "share_features_extractor": True})
    assert model.critic.features_extractor is model.actor.features_extractor
    unshared = SAC("MlpPolicy", "Pendulum-v1", policy_kwargs={"net_arch": [8]})
    assert unshared.critic.features_extractor is not unshared.actor.features_extractor
    assert "features_extractor" in dict(unshared.critic.named_children())
