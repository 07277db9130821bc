"""``PolicyConformance``: what a plugin that adds a policy alias to an existing algorithm must pass."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from lit_sb3_core.testing._algorithm import check_arguments_unchanged, sample_observations
from lit_sb3_core.testing._plugin import PluginConformance

__all__ = ["PolicyConformance"]


class PolicyConformance(PluginConformance):
    """Inherited checks for a policy-alias plugin (``lit_sb3_register_policies``).

    Attributes:
        algo_name: the algorithm the alias is registered for (``"ppo"``); its plugin must be installed.
        policy_alias: the alias the plugin registers (``"WideMlpPolicy"``).
        distribution: the plugin's distribution name.
        entry_point: its entry-point name; by default the only one the distribution declares.
        env_ids: envs (ids or factories) a model with this policy learns on; the first is used for
            the save/load and reproducibility checks.
        algo_kwargs: small hyperparameters for the algorithm so each check trains in seconds.
        policy_kwargs: arguments for the policy class.
        learn_steps: environment steps for the checks that train.
        skip: ``{check name: reason}`` for inherited checks that cannot apply.
    """

    algo_name: ClassVar[str] = ""
    policy_alias: ClassVar[str] = ""
    env_ids: ClassVar[tuple[Any, ...]] = ("CartPole-v1",)
    algo_kwargs: ClassVar[dict[str, Any]] = {}
    policy_kwargs: ClassVar[dict[str, Any] | None] = None
    learn_steps: ClassVar[int] = 256
    required_attributes: ClassVar[tuple[str, ...]] = ("algo_name", "policy_alias", "distribution")

    # helpers ----------------------------------------------------------------------------------------
    def policy_class(self) -> type[Any]:
        from lit_sb3_core.registry.registry import get_policy_class

        cls = get_policy_class(self.algo_name, self.policy_alias)
        assert cls is not None, (
            f"no policy {self.policy_alias!r} is registered for {self.algo_name!r}: register it with "
            f"registry.add(algo={self.algo_name!r}, alias={self.policy_alias!r}, target='package.module:Class') "
            "in lit_sb3_register_policies"
        )
        return cls

    def make_model(self, env_id: Any = None, **overrides: Any) -> Any:
        """A model of ``algo_name`` built with this plugin's policy alias."""
        from lit_sb3_core import make_algo

        kwargs: dict[str, Any] = {"policy": self.policy_alias, "seed": 0, **copy.deepcopy(self.algo_kwargs)}
        if self.policy_kwargs is not None:
            kwargs["policy_kwargs"] = copy.deepcopy(self.policy_kwargs)
        kwargs.update(copy.deepcopy(overrides))
        pristine = copy.deepcopy(kwargs)
        model = make_algo(self.algo_name, **({} if env_id is None else {"env": env_id}), **kwargs)
        check_arguments_unchanged(kwargs, pristine, f"{type(model).__name__}(policy={self.policy_alias!r})")
        return model

    sample_observations = staticmethod(sample_observations)

    # registration -----------------------------------------------------------------------------------
    def test_registers_alias(self) -> None:
        from lit_sb3_core.registry.registry import list_policies

        assert self.policy_alias in list_policies(self.algo_name), (
            f"{self.policy_alias!r} is not among the aliases plugins registered for {self.algo_name!r}: "
            f"{list_policies(self.algo_name)}"
        )
        label = f"policy:{self.algo_name}/{self.policy_alias}"
        assert label in self.plugin_info().provides, (
            f"{self.distribution} does not provide {label}; it provides {self.plugin_info().provides}"
        )

    def test_alias_resolves_to_a_module_class(self) -> None:
        import torch

        from lit_sb3_core import get_algo_class

        cls = self.policy_class()
        assert isinstance(cls, type) and issubclass(cls, torch.nn.Module), (
            f"{self.policy_alias!r} resolves to {cls!r}, which is not a torch.nn.Module subclass"
        )
        own = get_algo_class(self.algo_name).policy_aliases
        assert self.policy_alias not in own, (
            f"{self.policy_alias!r} is already one of {self.algo_name}'s own aliases ({sorted(own)}), which take "
            "precedence: the registered policy would never be used. Choose another alias."
        )

    def test_model_uses_the_policy(self) -> None:
        model = self.make_model(self.env_ids[0])
        assert type(model.policy) is self.policy_class(), (
            f"{self.algo_name}(policy={self.policy_alias!r}) built a {type(model.policy).__name__}, "
            f"not {self.policy_class().__name__}"
        )
        assert model.hparams["policy"] == self.policy_alias, (
            "the alias (not a class) is the saved hyperparameter"
        )
        json.dumps(dict(model.hparams))

    # training ---------------------------------------------------------------------------------------
    def test_learn_and_predict(self) -> None:
        for env_id in self.env_ids:
            model = self.make_model(env_id).learn(self.learn_steps)
            assert model.num_timesteps >= self.learn_steps
            obs = self.sample_observations(model)
            actions, _ = model.predict(obs, deterministic=True)
            assert len(actions) == len(next(iter(obs.values())) if isinstance(obs, dict) else obs)
            for action in actions:
                assert model.action_space.contains(np.asarray(action, dtype=model.action_space.dtype)), (
                    f"{env_id}: predict gave {action!r}, which is not in {model.action_space}"
                )

    def test_learning_changes_the_policy(self) -> None:
        import torch

        model = self.make_model(self.env_ids[0])
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(self.learn_steps)
        after = list(model.policy.parameters())
        assert any(not torch.equal(a, b) for a, b in zip(before, after)), (
            f"training {self.algo_name} with {self.policy_alias} left every parameter unchanged: are the "
            "policy's parameters registered (nn.Module attributes / nn.ModuleList)?"
        )

    def test_seed_reproducible(self) -> None:
        import torch

        params = []
        for _ in range(2):
            model = self.make_model(self.env_ids[0]).learn(self.learn_steps)
            params.append(torch.cat([p.detach().flatten() for p in model.policy.parameters()]))
        assert torch.equal(params[0], params[1]), "the same seed gave different parameters"

    def test_save_load_round_trip(self, tmp_path: Path) -> None:
        import torch

        from lit_sb3_core import load

        model = self.make_model(self.env_ids[0]).learn(self.learn_steps)
        path = tmp_path / "model.zip"
        model.save(path)
        loaded = load(path)
        assert type(loaded.policy) is self.policy_class(), (
            "the loaded model does not use the registered policy"
        )
        obs = self.sample_observations(model, 20)
        np.testing.assert_array_equal(
            model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0]
        )
        for a, b in zip(model.policy.state_dict().values(), loaded.policy.state_dict().values()):
            assert torch.equal(a, b)
