"""TQC specifics: the truncation of the target atoms, one update checked by hand, learning on Pendulum,
sb3-contrib's defaults, the entropy temperature, shared features extractors, bad input."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_core import evaluate_policy
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import BaseFeaturesExtractor, ReplayBuffer, quantile_huber_loss
from lit_sb3_tqc import TQC, truncated_quantiles
from lit_sb3_tqc import tqc as tqc_module


def seeded_env(env_id: str, seed: int = 0) -> gym.vector.VectorEnv:
    """An evaluation env with a fixed random stream: Pendulum's returns depend on the start states."""
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make(env_id)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=seed)
    return env


SMALL = {
    "learning_starts": 50,
    "buffer_size": 2000,
    "batch_size": 32,
    "policy_kwargs": {"net_arch": [32, 32], "n_quantiles": 10},
    "seed": 0,
}


def test_truncated_quantiles_by_hand() -> None:
    # Two samples, two critics of three atoms each. Dropping the top atom per network keeps 2 * (3 - 1) = 4
    # of the 6 pooled atoms: the smallest, in increasing order, wherever they came from.
    quantiles = torch.tensor(
        [
            [[1.0, 5.0, 3.0], [4.0, 0.0, 6.0]],  # pooled sorted: 0 1 3 4 | 5 6 dropped
            [[-1.0, -2.0, 9.0], [8.0, 7.0, -3.0]],  # pooled sorted: -3 -2 -1 7 | 8 9 dropped
        ]
    )
    kept = truncated_quantiles(quantiles, 4)
    torch.testing.assert_close(kept, torch.tensor([[0.0, 1.0, 3.0, 4.0], [-3.0, -2.0, -1.0, 7.0]]))
    # Dropping nothing keeps every atom, sorted.
    everything = truncated_quantiles(quantiles, 6)
    torch.testing.assert_close(everything[0], torch.tensor([0.0, 1.0, 3.0, 4.0, 5.0, 6.0]))


def test_unordered_truncation_keeps_the_same_atoms() -> None:
    """``ordered=False`` (the compiled critic loss) keeps the same smallest atoms, in some order."""
    generator = torch.Generator().manual_seed(0)
    quantiles = torch.randn(64, 2, 25, generator=generator)
    quantiles[0, 1, :3] = quantiles[0, 0, 0]  # ties with the dropped ones
    ordered = truncated_quantiles(quantiles, 46)
    unordered = truncated_quantiles(quantiles, 46, ordered=False)
    assert unordered.shape == (64, 46)
    torch.testing.assert_close(torch.sort(unordered, dim=1).values, ordered, rtol=0, atol=0)


def test_truncating_the_targets_is_truncating_the_atoms() -> None:
    """The critic loss truncates after the soft Bellman map (rewards + (1 - dones) * discount * (atom -
    alpha log pi)): non-decreasing in the atom, so its smallest targets are exactly sb3-contrib's targets
    of the smallest atoms, in the same order, for ended episodes (all targets equal) and a zero discount."""
    generator = torch.Generator().manual_seed(1)
    atoms = torch.randn(32, 2, 25, generator=generator) * 10
    log_prob = torch.randn(32, 1, generator=generator)
    rewards = torch.randn(32, 1, generator=generator)
    dones = (torch.rand(32, 1, generator=generator) < 0.3).float()
    discounts = torch.rand(32, 1, generator=generator)
    discounts[:4] = 0.0
    ent_coef = torch.tensor(0.2)
    theirs = truncated_quantiles(atoms, 46) - ent_coef * log_prob
    theirs = rewards + (1.0 - dones) * discounts * theirs
    ours = rewards + (1.0 - dones) * discounts * (atoms.reshape(32, -1) - ent_coef * log_prob)
    torch.testing.assert_close(truncated_quantiles(ours, 46), theirs, rtol=0, atol=0)


def test_one_update_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spy on one gradient step and recompute its critic targets and actor loss from the paper's formulas."""
    model = TQC(
        env="Pendulum-v1",
        learning_starts=20,
        batch_size=8,
        gamma=0.9,
        ent_coef=0.1,
        top_quantiles_to_drop_per_net=2,
        policy_kwargs={"net_arch": [16], "n_quantiles": 5, "n_critics": 3},
        seed=0,
    )
    policy = model.policy
    seen: dict[str, Any] = {"log_prob": [], "target_out": [], "loss_args": [], "records": {}}

    sample = ReplayBuffer.sample

    def spy_sample(self: ReplayBuffer, batch_size: int) -> Any:
        seen["data"] = sample(self, batch_size)
        return seen["data"]

    action_log_prob = policy.actor.action_log_prob

    def spy_action_log_prob(obs: torch.Tensor, noise: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        actions, log_prob = action_log_prob(obs, noise)
        seen["log_prob"].append((obs, actions.detach().clone(), log_prob.detach().clone()))
        return actions, log_prob

    target_forward = policy.critic_target.forward

    def spy_target(obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        out = target_forward(obs, actions)
        seen["target_out"].append(out.clone())
        return out

    def spy_loss(current: torch.Tensor, target: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        seen["loss_args"].append((current.detach().clone(), target.clone(), kwargs))
        return quantile_huber_loss(current, target, **kwargs)

    record = model.record

    def spy_record(name: str, value: torch.Tensor) -> None:
        seen["records"][name] = value.detach().clone()
        record(name, value)

    monkeypatch.setattr(ReplayBuffer, "sample", spy_sample)
    monkeypatch.setattr(policy.actor, "action_log_prob", spy_action_log_prob)
    monkeypatch.setattr(policy.critic_target, "forward", spy_target)
    monkeypatch.setattr(tqc_module, "quantile_huber_loss", spy_loss)
    model.record = spy_record  # type: ignore[method-assign]
    model.learn(21)  # one gradient step, after the 21st environment step

    assert model.n_updates == 1 and len(seen["log_prob"]) == 2 and len(seen["target_out"]) == 1
    data = seen["data"]
    # The critics' step samples a' ~ pi(s') first, then the actor's step samples at s (the paper's order).
    next_log_prob = seen["log_prob"][0][2].reshape(-1, 1)
    next_atoms = seen["target_out"][0].numpy()
    assert next_atoms.shape == (8, 3, 5)
    # 3 critics x 5 atoms pooled; the 3 x 2 largest dropped; 9 kept.
    kept = torch.as_tensor(np.sort(next_atoms.reshape(8, 15), axis=1)[:, :9])
    expected = data.rewards + (1 - data.dones) * 0.9 * (kept - 0.1 * next_log_prob)
    current, target, kwargs = seen["loss_args"][0]
    assert current.shape == (8, 3, 5) and target.shape == (8, 1, 9)
    torch.testing.assert_close(target.squeeze(1), expected)
    # averaged over atoms, as sb3-contrib; the targets take no gradient
    assert kwargs == {"sum_over_quantiles": False, "constant_target": True}
    torch.testing.assert_close(
        seen["records"]["critic_loss"], quantile_huber_loss(current, target, sum_over_quantiles=False)
    )
    # Actor loss: alpha * log pi - the mean of every atom of every critic, with the critic as it was after
    # its own step (the actor's step and the target update do not change it).
    observations, actions_pi, log_prob = seen["log_prob"][1]
    with torch.no_grad():
        mean_atoms = policy.critic(observations, actions_pi).mean(dim=(1, 2))
    expected_actor_loss = (0.1 * log_prob - mean_atoms).mean()
    torch.testing.assert_close(seen["records"]["actor_loss"], expected_actor_loss)


def test_learns_pendulum() -> None:
    """Smaller networks and fewer atoms than the default, rl-zoo3's learning rate: far better than random."""
    model = TQC(
        learning_rate=1e-3,
        batch_size=128,
        policy_kwargs={"net_arch": [64, 64], "n_quantiles": 10},
        seed=0,
    )
    model.learn(5000, env="Pendulum-v1")
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    assert mean_reward > -400, mean_reward  # a random policy scores about -1200


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reaches_rl_zoo_level_with_tuned_hyperparameters(seed: int) -> None:
    hyperparameters = dict(TQC.tuned_hyperparameters["Pendulum-v1"])
    steps = hyperparameters.pop("n_timesteps")
    model = TQC(seed=seed, **hyperparameters).learn(steps, env="Pendulum-v1")
    mean_reward, _ = evaluate_policy(model, seeded_env("Pendulum-v1"), n_eval_episodes=10)
    print(f"TQC Pendulum-v1 seed {seed}: {mean_reward:.1f}")
    assert mean_reward >= -200, mean_reward


def test_defaults_are_sb3_contribs() -> None:
    model = TQC(env="Pendulum-v1")
    assert model.lr_schedule(1.0) == 3e-4 and model.top_quantiles_to_drop_per_net == 2
    assert (model.ent_coef, model.target_entropy, model.target_update_interval) == ("auto", -1.0, 1)
    critic = model.policy.critic
    assert (critic.n_critics, critic.n_quantiles, critic.quantiles_total) == (2, 25, 50)
    assert model.n_target_quantiles == 46
    assert critic(torch.zeros(4, 3), torch.zeros(4, 1)).shape == (4, 2, 25)
    assert model.policy.actor.latent_pi[0].out_features == 256 and critic.qf0[0].out_features == 256
    assert TQC.tuned_hyperparameters["Pendulum-v1"] == {"n_timesteps": 20_000, "learning_rate": 1e-3}
    contrib = pytest.importorskip("sb3_contrib")
    ours = inspect.signature(TQC).parameters
    for name, parameter in inspect.signature(contrib.TQC).parameters.items():
        if name in ("policy", "env", "_init_setup_model"):
            continue
        assert name in ours, name
        assert ours[name].default == parameter.default, name


def test_entropy_temperature_and_logged_metrics() -> None:
    learned = TQC(env="Pendulum-v1", ent_coef="auto_0.1", **SMALL).learn(120)
    metrics = learned.last_metrics
    for key in (
        "train/actor_loss",
        "train/critic_loss",
        "train/ent_coef",
        "train/ent_coef_loss",
        "train/n_updates",
        "train/learning_rate",
    ):
        assert key in metrics, key
    assert metrics["train/ent_coef"] != pytest.approx(0.1)  # it moved
    fixed = TQC(env="Pendulum-v1", ent_coef=0.2, **SMALL).learn(120)
    assert fixed.last_metrics["train/ent_coef"] == 0.2 and "train/ent_coef_loss" not in fixed.last_metrics
    assert len(fixed.trainer.optimizers) == 2


class LinearExtractor(BaseFeaturesExtractor):
    """A features extractor with weights (MlpPolicy's flattening has none), to share between networks."""

    def __init__(self, observation_space: gym.Space) -> None:
        super().__init__(observation_space, 8)
        self.linear = torch.nn.Linear(3, 8)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(obs))


def test_gsde_exploration_as_sac() -> None:
    model = TQC(env="Pendulum-v1", use_sde=True, **SMALL)
    assert model.policy.actor.sde_noise is not None
    model.learn(120)
    assert model.n_updates == 70 and "train/std" in model.last_metrics


def test_shared_features_extractor_and_polyak_target(monkeypatch: pytest.MonkeyPatch) -> None:
    kwargs = {"net_arch": [16], "n_quantiles": 4, "share_features_extractor": True}
    model = TQC(
        env="Pendulum-v1",
        tau=0.5,
        **{**SMALL, "policy_kwargs": {**kwargs, "features_extractor_class": LinearExtractor}},
    )
    policy = model.policy
    # SB3's view: the borrowed extractor counts in the critic's parameters (first), not in its optimizer's.
    names = [name for name, _ in policy.critic.named_parameters()]
    assert names[:2] == ["features_extractor.linear.weight", "features_extractor.linear.bias"]
    assert not any(p is q for p in policy.critic.optimizer_parameters() for q in policy.actor.parameters())
    assert policy.critic.features(torch.ones(2, 3)).requires_grad is False  # trained by the actor only
    extractor_before = policy.actor.features_extractor.linear.weight.clone()
    model.learn(60)
    # The actor's loss trains the shared extractor.
    assert not torch.equal(extractor_before, policy.actor.features_extractor.linear.weight)
    # One more environment step and update: the target (its own copy of the extractor included) moves
    # exactly halfway toward the updated critic and the actor's extractor.
    target = [p.clone() for p in policy.critic_target.parameters()]
    model.learn(1, reset_num_timesteps=False)
    online = list(policy.critic.parameters())
    assert len(online) == len(target) == 2 + 2 * 4  # the extractor's weight and bias, 2 networks of 2 layers
    for old, source, new in zip(target, online, policy.critic_target.parameters()):
        torch.testing.assert_close(new, 0.5 * old + 0.5 * source.detach())
        assert not new.requires_grad


def test_target_update_interval_counts_gradient_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    import lit_sb3_sac.sac as sac_module  # TQC runs SAC's update loop with its own critic loss

    calls = []
    update_target = sac_module.update_target
    monkeypatch.setattr(sac_module, "update_target", lambda *args: calls.append(update_target(*args)))
    model = TQC(env="Pendulum-v1", train_freq=2, gradient_steps=2, target_update_interval=2, **SMALL)
    model.learn(60)  # 5 chunks of 2 steps after learning_starts, 2 gradient steps each
    assert model.n_updates == 10 and len(calls) == 5  # the first of each chunk's 2 steps, as sb3-contrib


def test_unsupported_spaces_and_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="does not support Discrete"):
        TQC(env="CartPole-v1")
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(ConfigurationError, match="top_quantiles_to_drop_per_net"):
            TQC(top_quantiles_to_drop_per_net=bad)
    with pytest.raises(
        ConfigurationError,
        match="top_quantiles_to_drop_per_net=3 must be less than the critic's n_quantiles=3",
    ):
        TQC(env="Pendulum-v1", top_quantiles_to_drop_per_net=3, policy_kwargs={"n_quantiles": 3})
    with pytest.raises(ConfigurationError, match="n_quantiles"):
        TQC(env="Pendulum-v1", policy_kwargs={"n_quantiles": 0})
    with pytest.raises(ConfigurationError, match="ent_coef"):
        TQC(ent_coef="auto_0")
    with pytest.raises(ConfigurationError, match="quantiles"):
        TQC(env="Pendulum-v1", policy="lit_sb3_sac.policies:SACPolicy")
