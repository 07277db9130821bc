"""The conformance kit: what every lit-sb3 algorithm plugin must pass, as one base class to subclass.

A plugin's test module subclasses :class:`AlgorithmConformance`, sets a few attributes and inherits the
full check, exactly as a third party would::

    from lit_sb3_core.testing import AlgorithmConformance

    class TestPPOConformance(AlgorithmConformance):
        algo_name = "ppo"
        distribution = "lit-sb3-ppo"
        env_ids = ("CartPole-v1", "Pendulum-v1")
        algo_kwargs = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}

A check may be skipped only with a reason: ``skip = {"test_checkpoint_resume": "why it cannot apply"}``.
Install the extra with ``pip install lit-sb3-core[testing]``.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

__all__ = ["AlgorithmConformance", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "lit_sb3"


class AlgorithmConformance:
    """Inherited checks for an algorithm plugin. Set the class attributes below in your subclass.

    Attributes:
        algo_name: the registry name the plugin registers (``"ppo"``).
        distribution: the plugin's distribution name (``"lit-sb3-ppo"``).
        entry_point: the entry-point name in group ``lit_sb3``; defaults to ``algo_name``.
        env_ids: one gymnasium env id per kind of space the algorithm supports; every check that trains
            runs on each of them.
        algo_kwargs: small hyperparameters so each check trains in seconds.
        learn_steps: environment steps for the learn/predict checks.
        skip: ``{check name: reason}`` for inherited checks that cannot apply to this algorithm.
    """

    algo_name: ClassVar[str] = ""
    distribution: ClassVar[str] = ""
    entry_point: ClassVar[str | None] = None
    env_ids: ClassVar[tuple[str, ...]] = ("CartPole-v1",)
    algo_kwargs: ClassVar[dict[str, Any]] = {}
    learn_steps: ClassVar[int] = 256
    skip: ClassVar[dict[str, str]] = {}

    # helpers ----------------------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _conformance_setup(self, request: pytest.FixtureRequest) -> None:
        if not self.algo_name or not self.distribution:
            raise TypeError(f"{type(self).__name__} must set algo_name and distribution.")
        for name, reason in self.skip.items():
            if not isinstance(reason, str) or not reason.strip():
                raise TypeError(f"{type(self).__name__}.skip[{name!r}] needs a reason, got {reason!r}.")
        reason = self.skip.get(request.function.__name__)
        if reason:
            pytest.skip(reason)
        import torch

        torch.set_num_threads(1)

    def make_model(self, env_id: str | None = None, **overrides: Any) -> Any:
        """A fresh model from the registry with this class's small hyperparameters."""
        from lit_sb3_core import make_algo

        kwargs = {"seed": 0, **self.algo_kwargs, **overrides}
        if env_id is not None:
            kwargs["env"] = env_id
        return make_algo(self.algo_name, **kwargs)

    @staticmethod
    def sample_observations(model: Any, n: int = 5) -> Any:
        space = model.observation_space
        space.seed(123)
        samples = [space.sample() for _ in range(n)]
        if isinstance(samples[0], dict):
            return {key: np.stack([s[key] for s in samples]) for key in samples[0]}
        return np.stack(samples)

    # discovery --------------------------------------------------------------------------------------
    def test_entry_point_installed(self) -> None:
        name = self.entry_point or self.algo_name
        found = [
            ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name
        ]
        assert found, f"no entry point {name!r} in group {ENTRY_POINT_GROUP!r}: is {self.distribution} installed?"
        dist_names = {ep.dist.name for ep in found if ep.dist is not None}
        assert self.distribution in dist_names, f"entry point {name!r} comes from {dist_names}"

    def test_registers_name(self) -> None:
        from lit_sb3_core import algo_spec, list_algos

        assert self.algo_name in list_algos()
        assert algo_spec(self.algo_name.upper()).name == self.algo_name

    def test_plugin_loaded_without_errors(self) -> None:
        from lit_sb3_core import list_plugins

        mine = [info for info in list_plugins() if info.distribution == self.distribution]
        assert mine, f"{self.distribution} is not among the discovered plugins"
        for info in mine:
            assert info.status == "loaded", f"{info.name}: {info.status}: {info.error}"

    def test_plugin_module_imports_nothing_heavy(self) -> None:
        name = self.entry_point or self.algo_name
        (ep,) = [e for e in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP) if e.name == name]
        code = (
            f"import sys, importlib; importlib.import_module({ep.value.split(':')[0]!r}); "
            "print(sorted(m for m in ('torch', 'lightning', 'gymnasium') if m in sys.modules))"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[]", f"the plugin module imports {out.stdout.strip()}"

    def test_target_is_rl_algorithm(self) -> None:
        from lit_sb3_core import RLAlgorithm, get_algo_class

        cls = get_algo_class(self.algo_name)
        assert issubclass(cls, RLAlgorithm)
        assert cls.algo_name == self.algo_name, "set the ClassVar algo_name to the registry name"

    # training ---------------------------------------------------------------------------------------
    def test_learn_and_predict(self) -> None:
        for env_id in self.env_ids:
            model = self.make_model(env_id).learn(self.learn_steps)
            assert model.num_timesteps >= self.learn_steps
            obs = self.sample_observations(model)
            single = obs[0] if not isinstance(obs, dict) else {k: v[0] for k, v in obs.items()}
            action, _ = model.predict(single, deterministic=True)
            assert model.action_space.contains(np.asarray(action, dtype=model.action_space.dtype)), (
                f"{env_id}: {action!r} is not in {model.action_space}"
            )
            actions, _ = model.predict(obs, deterministic=False)
            assert len(actions) == 5

    def test_hyperparameters_saved_as_plain_values(self) -> None:
        model = self.make_model(self.env_ids[0])
        hparams = dict(model.hparams)
        json.dumps(hparams)
        for key, value in self.algo_kwargs.items():
            assert hparams[key] == value, f"hyperparameter {key!r} not saved"

    def test_seed_reproducible(self) -> None:
        import torch

        params = []
        for _ in range(2):
            model = self.make_model(self.env_ids[0]).learn(self.learn_steps)
            params.append(torch.cat([p.detach().flatten() for p in model.policy.parameters()]))
        assert torch.equal(params[0], params[1]), "the same seed gave different parameters"

    def test_save_load_round_trip(self, tmp_path: Path) -> None:
        import torch

        from lit_sb3_core import get_algo_class, load

        model = self.make_model(self.env_ids[0]).learn(self.learn_steps)
        path = tmp_path / "model.zip"
        model.save(path)
        for loaded in (get_algo_class(self.algo_name).load(path), load(path)):
            obs = self.sample_observations(model, 20)
            np.testing.assert_array_equal(
                model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0]
            )
            for a, b in zip(model.policy.state_dict().values(), loaded.policy.state_dict().values()):
                assert torch.equal(a, b)
            assert loaded.num_timesteps == model.num_timesteps
        continued = load(path).learn(self.learn_steps, env=self.env_ids[0], reset_num_timesteps=False)
        assert continued.num_timesteps >= model.num_timesteps + self.learn_steps

    def test_checkpoint_resume(self, tmp_path: Path) -> None:
        from lightning.pytorch.callbacks import Callback, ModelCheckpoint

        from lit_sb3_core import RLEnvDataModule, RLTrainer

        class CountIterations(Callback):
            count = 0

            def on_train_batch_end(self, *args: Any) -> None:
                CountIterations.count += 1

        def fit(model: Any, steps: int, ckpt_path: Path | None = None) -> None:
            RLTrainer(
                max_steps=steps,
                default_root_dir=tmp_path,
                enable_progress_bar=False,
                callbacks=[ModelCheckpoint(dirpath=tmp_path / "ckpt", save_last=True), CountIterations()],
            ).fit(model, datamodule=RLEnvDataModule(train_env=self.env_ids[0]), ckpt_path=ckpt_path)

        model = self.make_model()
        fit(model, self.learn_steps)
        first_steps, first_iterations = model.num_timesteps, CountIterations.count
        resumed = self.make_model()
        fit(resumed, 2 * first_steps, ckpt_path=tmp_path / "ckpt" / "last.ckpt")
        assert resumed.num_timesteps >= 2 * first_steps
        # Continuing (not restarting) means the second run only took the remaining iterations.
        assert CountIterations.count - first_iterations <= first_iterations
        assert resumed.iterations == CountIterations.count
