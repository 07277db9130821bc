"""``use_sde`` inside ``policy_kwargs``, as SB3 and sb3-contrib treat it.

Off-policy algorithms with gSDE (SAC, TQC, CrossQ) write their own ``use_sde`` into the policy's keyword
arguments, so one given there is accepted and overridden. On-policy algorithms call the policy class with
``use_sde=self.use_sde, **policy_kwargs``: one given there is a ``TypeError`` ("multiple values"), whatever
the values. Each case is checked against the reference library when it is installed.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from lit_sb3 import A2C
from lit_sb3_core.errors import ConfigurationError, PolicyKwargsError
from lit_sb3_crossq import CrossQ
from lit_sb3_ppo import PPO
from lit_sb3_sac import SAC
from lit_sb3_tqc import TQC
from lit_sb3_trpo import TRPO

OFF_POLICY = {"SAC": SAC, "TQC": TQC, "CrossQ": CrossQ}
ON_POLICY = {"PPO": PPO, "A2C": A2C, "TRPO": TRPO}


def reference(name: str) -> Any:
    """The SB3 / sb3-contrib class of that name, or a skip where it is not installed."""
    module = "stable_baselines3" if name in ("SAC", "PPO", "A2C") else "sb3_contrib"
    return getattr(pytest.importorskip(module), name)


@pytest.mark.parametrize("name", OFF_POLICY)
@pytest.mark.parametrize(("in_kwargs", "given"), [(True, False), (False, True), (True, True)])
def test_off_policy_algorithms_override_a_use_sde_in_policy_kwargs(
    name: str, in_kwargs: bool, given: bool
) -> None:
    policy_kwargs = {"net_arch": [8], "use_sde": in_kwargs}
    model = OFF_POLICY[name](
        env="Pendulum-v1", use_sde=given, learning_starts=16, batch_size=8, policy_kwargs=dict(policy_kwargs)
    )
    assert model.use_sde is given
    assert model.policy.actor.use_sde is given
    assert (model.policy.actor.sde_noise is not None) is given
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = reference(name)("MlpPolicy", "Pendulum-v1", use_sde=given, policy_kwargs=dict(policy_kwargs))
    assert theirs.actor.use_sde is given  # sb3-contrib / SB3 build the same actor
    # It trains as the algorithm's use_sde says: gSDE's log std is a parameter of its own that the actor
    # loss moves.
    log_std = model.policy.actor.log_std
    before = (log_std if given else log_std.weight).detach().clone()
    model.learn(32)
    after = log_std if given else log_std.weight
    assert model.n_updates > 0 and not after.detach().equal(before)


@pytest.mark.parametrize("name", ON_POLICY)
@pytest.mark.parametrize(("in_kwargs", "given"), [(True, False), (False, True), (True, True)])
def test_on_policy_algorithms_refuse_a_use_sde_in_policy_kwargs_with_sb3s_type_error(
    name: str, in_kwargs: bool, given: bool
) -> None:
    policy_kwargs = {"use_sde": in_kwargs}
    with pytest.raises(TypeError, match="multiple values for keyword argument 'use_sde'"):
        reference(name)("MlpPolicy", "Pendulum-v1", use_sde=given, policy_kwargs=dict(policy_kwargs))
    with pytest.raises(
        PolicyKwargsError, match=rf"policy_kwargs cannot hold use_sde.*{name}\(use_sde=\.\.\.\)"
    ):
        ON_POLICY[name](env="Pendulum-v1", use_sde=given, policy_kwargs=dict(policy_kwargs))
    assert issubclass(PolicyKwargsError, TypeError) and issubclass(PolicyKwargsError, ConfigurationError)


def test_unknown_on_policy_policy_kwargs_are_sb3s_type_error() -> None:
    with pytest.raises(TypeError, match="net_arch_typo"):
        reference("PPO")("MlpPolicy", "Pendulum-v1", policy_kwargs={"net_arch_typo": [8]})
    with pytest.raises(PolicyKwargsError, match=r"policy_kwargs do not fit ActorCriticPolicy.*net_arch_typo"):
        PPO(env="Pendulum-v1", policy_kwargs={"net_arch_typo": [8]})
