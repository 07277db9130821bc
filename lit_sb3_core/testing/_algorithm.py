"""``AlgorithmConformance``: what every algorithm plugin must pass, as one base class to subclass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from lit_sb3_core.testing._plugin import PluginConformance

__all__ = ["AlgorithmConformance", "sample_observations"]


def sample_observations(model: Any, n: int = 5) -> Any:
    """``n`` observations from the model's observation space, batched (a dict of arrays for Dict)."""
    space = model.observation_space
    space.seed(123)
    samples = [space.sample() for _ in range(n)]
    if isinstance(samples[0], dict):
        return {key: np.stack([s[key] for s in samples]) for key in samples[0]}
    return np.stack(samples)


def _first(obs: Any) -> Any:
    return {key: value[0] for key, value in obs.items()} if isinstance(obs, dict) else obs[0]


class AlgorithmConformance(PluginConformance):
    """Inherited checks for an algorithm plugin. Set the class attributes below in your subclass.

    Attributes:
        algo_name: the registry name the plugin registers (``"ppo"``).
        distribution: the plugin's distribution name (``"lit-sb3-ppo"``).
        entry_point: the entry-point name in group ``lit_sb3``; defaults to ``algo_name``.
        env_ids: one gymnasium env id (or env factory) per kind of space the algorithm supports; every
            check that trains runs on the first, the learn/predict check on each of them.
        algo_kwargs: small hyperparameters so each check trains in seconds.
        learn_steps: environment steps for the checks that train.
        space_policies: policy alias to use per observation kind for the declared-spaces check, e.g.
            ``{"Dict": "MultiInputPolicy"}``; by default Dict observations use the algorithm's first
            ``MultiInput*`` alias, everything else the constructor's default policy.
        skip: ``{check name: reason}`` for inherited checks that cannot apply to this algorithm.
    """

    algo_name: ClassVar[str] = ""
    env_ids: ClassVar[tuple[Any, ...]] = ("CartPole-v1",)
    algo_kwargs: ClassVar[dict[str, Any]] = {}
    learn_steps: ClassVar[int] = 256
    space_policies: ClassVar[dict[str, str]] = {}
    required_attributes: ClassVar[tuple[str, ...]] = ("algo_name", "distribution")

    # helpers ----------------------------------------------------------------------------------------
    def default_entry_point(self) -> str | None:
        return self.algo_name

    def algo_class(self) -> type[Any]:
        from lit_sb3_core import get_algo_class

        return get_algo_class(self.algo_name)

    def make_model(self, env_id: Any = None, **overrides: Any) -> Any:
        """A fresh model from the registry with this class's small hyperparameters."""
        from lit_sb3_core import make_algo

        kwargs = {"seed": 0, **self.algo_kwargs, **overrides}
        if env_id is not None:
            kwargs["env"] = env_id
        return make_algo(self.algo_name, **kwargs)

    sample_observations = staticmethod(sample_observations)

    def check_predictions(self, model: Any, label: str) -> None:
        """Single and batched predictions are valid actions, and deterministic ones repeat."""
        obs = self.sample_observations(model)
        action, _ = model.predict(_first(obs), deterministic=True)
        assert model.action_space.contains(np.asarray(action, dtype=model.action_space.dtype)), (
            f"{label}: predict gave {action!r}, which is not in {model.action_space}"
        )
        actions, _ = model.predict(obs, deterministic=False)
        assert len(actions) == 5, f"{label}: predict on a batch of 5 observations gave {len(actions)} actions"
        for one in actions:
            assert model.action_space.contains(np.asarray(one, dtype=model.action_space.dtype)), (
                f"{label}: predict gave {one!r}, which is not in {model.action_space}"
            )
        first, _ = model.predict(obs, deterministic=True)
        again, _ = model.predict(obs, deterministic=True)
        np.testing.assert_array_equal(first, again, err_msg=f"{label}: deterministic predictions differ")

    def policy_for(self, observation_kind: str) -> str | None:
        """The policy alias the declared-spaces check uses for ``observation_kind`` (None: the default)."""
        if observation_kind in self.space_policies:
            return self.space_policies[observation_kind]
        if observation_kind == "Dict":
            aliases = sorted(
                a for a in getattr(self.algo_class(), "policy_aliases", {}) if a.startswith("MultiInput")
            )
            return aliases[0] if aliases else None
        return None

    # discovery --------------------------------------------------------------------------------------
    def test_registers_name(self) -> None:
        from lit_sb3_core import algo_spec, list_algos

        assert self.algo_name in list_algos(), f"{self.algo_name!r} is not in list_algos(): {list_algos()}"
        spec = algo_spec(self.algo_name.upper())
        assert spec.name == self.algo_name
        assert spec.plugin == self.plugin_entry_point().name, (
            f"{self.algo_name!r} is registered by plugin {spec.plugin!r} ({spec.distribution}), "
            f"not by {self.distribution}"
        )

    def test_target_is_rl_algorithm(self) -> None:
        from lit_sb3_core import RLAlgorithm

        cls = self.algo_class()
        assert isinstance(cls, type) and issubclass(cls, RLAlgorithm), (
            f"{self.algo_name!r} resolves to {cls!r}, which is not a subclass of lit_sb3_core.RLAlgorithm"
        )
        assert cls.algo_name == self.algo_name, "set the ClassVar algo_name to the registry name"

    # training ---------------------------------------------------------------------------------------
    def test_learn_and_predict(self) -> None:
        for env_id in self.env_ids:
            model = self.make_model(env_id).learn(self.learn_steps)
            assert model.num_timesteps >= self.learn_steps
            self.check_predictions(model, str(env_id))

    def test_learn_and_predict_on_declared_spaces(self) -> None:
        from lit_sb3_core.testing.envs import space_cases

        cls = self.algo_class()
        cases = space_cases(cls.supported_observation_spaces, cls.supported_action_spaces)
        assert cases, (
            f"{cls.__name__} declares no space the kit knows: supported_observation_spaces="
            f"{cls.supported_observation_spaces}, supported_action_spaces={cls.supported_action_spaces}"
        )
        for case in cases:
            overrides = {"policy": policy} if (policy := self.policy_for(case.observation_kind)) else {}
            try:
                model = self.make_model(case, **overrides).learn(self.learn_steps)
            except Exception as exc:
                raise AssertionError(
                    f"{cls.__name__} declares support for {case.label} but failed on them: "
                    f"{type(exc).__name__}: {exc}. Fix it, or narrow supported_observation_spaces / "
                    "supported_action_spaces."
                ) from exc
            assert model.num_timesteps >= self.learn_steps
            self.check_predictions(model, case.label)

    def test_undeclared_spaces_refused(self) -> None:
        from lit_sb3_core.errors import ConfigurationError
        from lit_sb3_core.testing.envs import ACTION_SPACES, OBSERVATION_SPACES, SpaceCase

        cls = self.algo_class()
        observation = next(
            k for k, s in OBSERVATION_SPACES.items() if isinstance(s, cls.supported_observation_spaces)
        )
        action = next(k for k, s in ACTION_SPACES.items() if isinstance(s, cls.supported_action_spaces))
        cases = [
            SpaceCase(observation, k)
            for k, s in ACTION_SPACES.items()
            if not isinstance(s, cls.supported_action_spaces)
        ]
        cases += [
            SpaceCase(k, action)
            for k, s in OBSERVATION_SPACES.items()
            if not isinstance(s, cls.supported_observation_spaces)
        ]
        for case in cases:
            try:
                self.make_model(case)
            except ConfigurationError:
                continue
            raise AssertionError(
                f"{cls.__name__} does not declare {case.label} but accepted them: RLAlgorithm refuses undeclared "
                "spaces with a ConfigurationError; keep calling super().check_spaces()."
            )

    def test_hyperparameters_saved_as_plain_values(self) -> None:
        model = self.make_model(self.env_ids[0])
        hparams = dict(model.hparams)
        try:
            json.dumps(hparams)
        except TypeError as exc:
            raise AssertionError(
                f"the saved hyperparameters must be plain JSON values (numbers, strings, lists, dicts): {exc}. "
                "Store classes as import strings ('package.module:Class')."
            ) from exc
        for key, value in self.algo_kwargs.items():
            assert key in hparams, f"hyperparameter {key!r} not saved: self.hparams has {sorted(hparams)}"
            assert hparams[key] == value, f"hyperparameter {key!r} saved as {hparams[key]!r}, given {value!r}"

    def test_hyperparameters_rebuild_the_model(self) -> None:
        import torch

        model = self.make_model(self.env_ids[0])
        hparams = dict(model.hparams)
        try:
            rebuilt = type(model)(env=self.env_ids[0], **hparams)
        except TypeError as exc:
            raise AssertionError(
                f"{type(model).__name__}(**model.hparams) failed ({exc}): the saved hyperparameters must be "
                "the constructor's arguments (model files, checkpoints and LightningCLI configs rebuild "
                "the model from them). Drop extra keys from self.hparams."
            ) from exc
        assert dict(rebuilt.hparams) == hparams, "rebuilding from the hyperparameters changed them"
        for a, b in zip(model.policy.state_dict().values(), rebuilt.policy.state_dict().values()):
            assert torch.equal(a, b), "the same hyperparameters (and seed) built a different initial policy"

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
        for loaded in (self.algo_class().load(path), load(path)):
            assert type(loaded) is type(model)
            obs = self.sample_observations(model, 20)
            np.testing.assert_array_equal(
                model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0]
            )
            for a, b in zip(model.policy.state_dict().values(), loaded.policy.state_dict().values()):
                assert torch.equal(a, b)
            assert loaded.num_timesteps == model.num_timesteps
            assert dict(loaded.hparams) == json.loads(json.dumps(dict(model.hparams)))
        continued = load(path).learn(self.learn_steps, env=self.env_ids[0], reset_num_timesteps=False)
        assert continued.num_timesteps >= model.num_timesteps + self.learn_steps

    def test_distributed_training(self, tmp_path: Path) -> None:
        """Two CPU processes on Lightning's DDP (gloo): the global budget holds and the weights agree."""
        import base64
        import functools
        import os
        import pickle
        import subprocess
        import sys

        import gymnasium as gym

        env = self.env_ids[0]
        if isinstance(env, str) and env in gym.registry:
            # The spec carries the entry point, so ids registered by the test's own modules work too.
            env = functools.partial(gym.make, gym.spec(env))
        try:
            payload = base64.b64encode(pickle.dumps(env)).decode()
        except Exception as exc:
            raise AssertionError(
                f"the DDP check starts its ranks in new processes and sends them env_ids[0] = {env!r} by "
                f"pickle, which failed ({exc}): use an env id or a module-level factory first in env_ids"
            ) from exc
        config = {
            "algo": self.algo_name,
            "kwargs": self.algo_kwargs,
            "env": payload,
            "steps": self.learn_steps,
            "out": str(tmp_path / "rank"),
        }
        # The ranks import the test's modules (env factories) from the same places as this process.
        path = os.pathsep.join(p for p in sys.path if p)
        proc = subprocess.run(
            [sys.executable, "-m", "lit_sb3_core.testing._ddp_worker", json.dumps(config)],
            check=False,
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": path},
        )
        assert proc.returncode == 0, f"training on 2 DDP processes failed:\n{proc.stderr[-4000:]}"
        ranks = [json.loads((tmp_path / f"rank.{r}.json").read_text()) for r in (0, 1)]
        steps = {r["num_timesteps"] for r in ranks}
        assert len(steps) == 1 and steps.pop() >= self.learn_steps, (
            f"the ranks disagree on the global step count or fell short of max_steps={self.learn_steps}: {ranks}"
        )
        assert ranks[0]["weights_sha256"] == ranks[1]["weights_sha256"], (
            "the ranks ended with different weights: gradients (or updates) were not shared over the ranks"
        )
        assert ranks[0]["initial_weights_sha256"] == ranks[1]["initial_weights_sha256"], (
            "the ranks started from different weights"
        )
        assert ranks[0]["weights_sha256"] != ranks[0]["initial_weights_sha256"], (
            "training on 2 DDP processes left the weights unchanged"
        )

    def test_checkpoint_resume(self, tmp_path: Path) -> None:
        from lightning.pytorch.callbacks import Callback, ModelCheckpoint

        from lit_sb3_core import RLEnvDataModule, RLTrainer

        class CountBatches(Callback):
            count = 0
            iterations_at_start: ClassVar[list[int]] = []

            def on_train_start(self, trainer: Any, pl_module: Any) -> None:
                CountBatches.iterations_at_start.append(pl_module.iterations)

            def on_train_batch_end(self, *args: Any) -> None:
                CountBatches.count += 1

        def fit(model: Any, steps: int, ckpt_path: Path | None = None) -> None:
            # The resumed run gets the same (but non-saving) ModelCheckpoint: its state is in the checkpoint.
            saving = {"save_last": True} if ckpt_path is None else {"save_top_k": 0}
            RLTrainer(
                max_steps=steps,
                default_root_dir=tmp_path,
                enable_progress_bar=False,
                callbacks=[ModelCheckpoint(dirpath=tmp_path / "ckpt", **saving), CountBatches()],
            ).fit(model, datamodule=RLEnvDataModule(train_env=self.env_ids[0]), ckpt_path=ckpt_path)

        model = self.make_model()
        fit(model, self.learn_steps)
        first_steps, first_batches = model.num_timesteps, CountBatches.count
        resumed = self.make_model()
        fit(resumed, 2 * first_steps, ckpt_path=tmp_path / "ckpt" / "last.ckpt")
        assert resumed.num_timesteps >= 2 * first_steps
        # Continuing (not restarting) means the second run only took the remaining batches, and its
        # iteration count went on from the first run's.
        assert CountBatches.count - first_batches <= first_batches
        assert CountBatches.iterations_at_start == [0, model.iterations]
        assert resumed.iterations > model.iterations
