"""``TRPO(compile=True)``: each critic minibatch step as one compiled program, learning what eager TRPO learns.

The equivalence runs compile with inductor (a C++ build: half a minute to a minute of a loaded CPU cold), so
they are marked slow; the argument checks run by default. Inductor's caches go to a temporary folder, not the
user's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from gymnasium import spaces

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import BaseFeaturesExtractor
from lit_sb3_trpo import TRPO

torch.set_num_threads(1)


class SharedExtractor(BaseFeaturesExtractor):
    """A features extractor with weights, shared by actor and critic: the critic step must not train it."""

    def __init__(self, observation_space: spaces.Box, features_dim: int = 8) -> None:
        super().__init__(observation_space, features_dim)
        self.linear = torch.nn.Linear(int(observation_space.shape[0]), features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.linear(observations))


def test_compile_must_be_true_false_or_auto() -> None:
    with pytest.raises(ConfigurationError, match="compile must be True, False or 'auto'"):
        TRPO("MlpPolicy", "CartPole-v1", compile="yes")


def test_an_optimizer_it_cannot_compile_is_refused_before_the_critic_trains() -> None:
    model = TRPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=64,
        batch_size=64,
        compile=True,
        policy_kwargs={"optimizer_class": torch.optim.SGD},
    )
    critic = [p.detach().clone() for name, p in model.policy.named_parameters() if "value" in name]
    with pytest.raises(ConfigurationError, match="Adam, AdamW and RMSprop"):
        model.learn(64)
    after = [p for name, p in model.policy.named_parameters() if "value" in name]
    for before, now in zip(critic, after, strict=True):
        assert torch.equal(before, now)


def test_ddp_is_refused_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    model = TRPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, compile=True)
    monkeypatch.setattr(TRPO, "world_size", 2)
    with pytest.raises(ConfigurationError, match="compile=False under DDP"):
        model.compiled_critic_step([])


def _trained(compiled: bool, env_id: str, steps: int, **overrides: Any) -> TRPO:
    # Built and trained one after the other: both start from the same global RNG state.
    model = TRPO(
        "MlpPolicy",
        env_id,
        n_steps=256,
        batch_size=64,
        n_critic_updates=3,
        learning_rate="lin_1e-3",
        seed=0,
        device="cpu",
        compile=compiled,
        **overrides,
    )
    model.learn(steps)
    return model


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "overrides", "rollouts"),
    [
        ("CartPole-v1", {"policy_kwargs": {"features_extractor_class": SharedExtractor}}, 4),
        # Pendulum: 2 rollouts, so both runs collect the same data (the second rollout is collected after one
        # policy step on the first, which no compiled step has touched yet) and the second update's critic
        # and policy steps read critic values only the compiled program computed. From the third rollout on,
        # continuous actions carry the weights' rounding into the states and the policy step amplifies it:
        # measured with two versions of the compiled Adam that differ in rounding only (bias corrections,
        # 55cd9d4), the states were 4e-5 / 3e-4 apart after 3 rollouts and 8e-4 / 1e-4 after 4, the Adam
        # moments at 0.04 / 0.8, then 3.5 / 0.4 of their tolerance: a draw. After 2 (the newer Adam): states
        # equal, moments at 0.005 of their tolerance, weights 0.05.
        ("Pendulum-v1", {}, 2),
        # gSDE's policy step amplifies float rounding: eager TRPO against itself with single-tensor instead of
        # fused Adam (rounding only) drifts to 1e-2 of the actor's weights after 4 rollouts, 1.5e-4 after 2
        # (measured); the compiled run, 2e-5 after 2.
        ("Pendulum-v1", {"use_sde": True, "sde_sample_freq": 4}, 2),
    ],
    ids=["cartpole-shared-extractor", "pendulum", "pendulum-gsde"],
)
def test_a_compiled_trpo_learns_the_weights_the_eager_one_learns(
    env_id: str, overrides: dict[str, Any], rollouts: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same seed, 2 or 4 rollouts (a policy step and 12 critic minibatch steps each, at a decaying learning
    rate): the same actor and critic weights, Adam state (none for the actor's parameters, the shared
    extractor's included), logged metrics and Lightning step count within float rounding, so the same
    rollouts too."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    eager = _trained(False, env_id, 256 * rollouts, **overrides)
    compiled = _trained(True, env_id, 256 * rollouts, **overrides)
    assert compiled.n_updates == eager.n_updates == rollouts
    assert compiled.trainer.global_step == eager.trainer.global_step == rollouts * 3 * 4
    assert any(path.is_file() for path in tmp_path.rglob("*")), "inductor cached nothing on disk"
    # The last rollout's states: equal on Pendulum after 2 rollouts; a different rollout would be off by their
    # own size.
    torch.testing.assert_close(
        compiled.rollout_buffer.observations, eager.rollout_buffer.observations, rtol=1e-4, atol=1e-3
    )
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    ours_state = compiled.optimizers().optimizer.state_dict()["state"]
    theirs_state = eager.optimizers().optimizer.state_dict()["state"]
    names = [name for name, _ in eager.policy.named_parameters()]
    trained = {names[index] for index in theirs_state}
    assert trained == {names[index] for index in ours_state}
    assert trained and all("value" in name for name in trained)  # the actor's parameters have no state
    scale = max(float(state["exp_avg_sq"].abs().max()) for state in theirs_state.values())
    for index, state in theirs_state.items():
        torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-5)
        torch.testing.assert_close(
            ours_state[index]["exp_avg_sq"], state["exp_avg_sq"], rtol=1e-3, atol=1e-4 * scale
        )
        assert float(ours_state[index]["step"]) == float(state["step"]) == rollouts * 3 * 4
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-3, abs=1e-6), key
