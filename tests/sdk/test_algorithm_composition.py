"""RLAlgorithm is composed, not a pile of bases (issue 23): helpers are objects it holds, its public surface
has a bound, no part needs a ``# type: ignore``, and the fast path names no network class."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any, ClassVar

import lightning as L

from lit_sb3_core.nets.off_policy_policies import QNetwork
from lit_sb3_core.nets.torch_layers import FlattenExtractor, ignores_training_mode
from lit_sb3_core.sdk import OffPolicyAlgorithm, OnPolicyAlgorithm, RLAlgorithm
from lit_sb3_core.sdk.moved_names import REMOVED_IN, MovedName

SDK = Path(__file__).resolve().parents[2] / "lit_sb3_core" / "sdk"

# The bounds this layout reaches; lower them when a method or a base goes, never raise them. The methods
# left are SB3's (learn, predict, save, ...), the engine's protocol (engine/protocol.py) and the hooks
# plugins override (make_policy, setup_model, extra_state, ...); the rest live on helpers the algorithm
# holds (self.metrics, self.budget, self.ranks, self.normalizers, self.prediction, self.step_callbacks).
MAX_PUBLIC_METHODS = 30
MAX_MRO = {RLAlgorithm: 14, OnPolicyAlgorithm: 15, OffPolicyAlgorithm: 15}


def public_methods(cls: type) -> list[str]:
    """Public callables (functions, class and static methods) defined on ``cls`` or its bases, leaving out
    the names LightningModule (and so nn.Module) defines and properties (SB3's attribute views)."""
    lightning = set(dir(L.LightningModule))
    found = []
    for name in dir(cls):
        if name.startswith("_") or name in lightning:
            continue
        owner = next(klass for klass in cls.__mro__ if name in vars(klass))
        attribute = vars(owner)[name]
        if isinstance(attribute, MovedName):  # an old spelling kept for one release (counted below)
            continue
        if isinstance(attribute, (classmethod, staticmethod)) or inspect.isfunction(attribute):
            found.append(name)
    return found


def test_rl_algorithm_keeps_a_bounded_public_surface() -> None:
    methods = public_methods(RLAlgorithm)
    assert len(methods) <= MAX_PUBLIC_METHODS, f"{len(methods)} public methods: {methods}"


def moved_names(cls: type) -> dict[str, MovedName]:
    return {name: value for name, value in vars(cls).items() if isinstance(value, MovedName)}


def test_moved_names_warn_and_reach_the_helper() -> None:
    import gymnasium as gym
    import numpy as np
    import pytest

    from lit_sb3_ppo import PPO

    assert REMOVED_IN == "0.4"  # the release that drops them: remove the table in algorithm.py then
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, seed=0)
    obs = gym.make("CartPole-v1").observation_space.sample()
    for name, moved in moved_names(RLAlgorithm).items():
        with pytest.warns(
            DeprecationWarning, match=rf"RLAlgorithm\.{name} .*removed in 0\.4.*self\.{moved.new}"
        ):
            old = getattr(model, name)
        assert callable(old), name
    with pytest.warns(DeprecationWarning):
        assert model.normalize_obs(obs) is obs  # the old spelling still works
    with pytest.warns(DeprecationWarning):
        batched, single = model.batch_observation(obs)
    assert single and batched.shape == (1, 4)
    with pytest.warns(DeprecationWarning):
        assert np.array_equal(model.to_env_actions(np.array([1.0])), np.array([1]))
    with pytest.warns(DeprecationWarning):
        step_locals = model.step_locals(rewards=np.zeros(1))
    assert step_locals["self"] is model and "env" in step_locals


def test_a_subclass_overriding_a_moved_name_is_told() -> None:
    import pytest

    with pytest.warns(
        DeprecationWarning, match=r"Old\.normalize_obs overrides a moved name.*normalizers\.obs"
    ):

        class Old(RLAlgorithm):
            def normalize_obs(self, obs: Any, update: bool = False) -> Any:  # type: ignore[override]
                return obs


def test_the_class_hierarchy_stays_short() -> None:
    for cls, bound in MAX_MRO.items():
        chain = [klass.__name__ for klass in cls.__mro__]
        assert len(chain) <= bound, f"{cls.__name__}'s MRO has {len(chain)} classes: {chain}"


def test_helpers_are_held_not_inherited() -> None:
    from lit_sb3_core.sb3.model_logger import ModelLogger
    from lit_sb3_core.sdk.evaluation_step import Evaluation
    from lit_sb3_core.sdk.metric_logging import MetricRecords

    class Tiny(RLAlgorithm):
        policy_aliases: ClassVar[dict[str, Any]] = {"MlpPolicy": QNetwork}  # built only with an env

    model = Tiny()
    for helper in (ModelLogger, MetricRecords, Evaluation):
        assert helper not in Tiny.__mro__
        assert any(isinstance(value, helper) for value in vars(model).values()), helper.__name__


def test_no_type_ignore_in_the_sdk() -> None:
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(SDK.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "type: ignore" in line
    ]
    assert not offenders, offenders


def test_the_fast_path_imports_no_network_class() -> None:
    import importlib

    tree = ast.parse((SDK / "fast_path.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lit_sb3_core.nets"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                assert not isinstance(getattr(module, alias.name), type), (
                    f"fast_path.py imports the class {alias.name}; let the network declare what it needs"
                )


def test_networks_declare_that_they_ignore_the_training_mode() -> None:
    assert ignores_training_mode(QNetwork) and ignores_training_mode(FlattenExtractor)

    class WithDropout(QNetwork):  # a subclass may read the mode: it must say otherwise itself
        pass

    assert not ignores_training_mode(WithDropout)
