"""``AlgorithmConformance``: what every algorithm plugin must pass, as one base class to subclass."""

from __future__ import annotations

import copy
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


_NOT_DETERMINISTIC = (
    "predict(obs, deterministic=True) gave different actions for the same observations: with "
    "deterministic=True, act with the distribution's mode (or the greedy action) and add no exploration "
    "noise"
)


def _rebuild_advice(cls: type, hparams: dict[str, Any], source: str, exc: Exception) -> str:
    """What to change so that ``cls(**hparams)`` works, from the constructor's signature."""
    import inspect

    # A constructor with **kwargs passes them on: it takes what the next constructor up the chain takes.
    parameters: dict[str, inspect.Parameter] = {}
    takes_any = True
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        own = inspect.signature(vars(klass)["__init__"]).parameters
        parameters.update({name: p for name, p in own.items() if p.kind is not inspect.Parameter.VAR_KEYWORD})
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in own.values()):
            takes_any = False
            break
    extra = [] if takes_any else sorted(set(hparams) - set(parameters))
    missing = sorted(
        name
        for name, p in parameters.items()
        if name not in ("self", "env")
        and p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        and name not in hparams
    )
    lines = [
        f"{cls.__name__}(**hyperparameters) with the hyperparameters from {source} failed: "
        f"{type(exc).__name__}: {exc}",
        "Model files, checkpoints and LightningCLI configs rebuild the model this way, so the saved "
        f"hyperparameters must be exactly {cls.__name__}.__init__'s arguments.",
    ]
    if extra:
        lines.append(
            f"Saved, but not arguments of {cls.__name__}.__init__: {extra}. Either take them in __init__ (and "
            "pass them on to super().__init__), or stop saving them: RLAlgorithm keeps only the arguments "
            "your constructor takes, so these were written into self.hparams after super().__init__(); "
            "delete that line, or write the key only when the constructor took it "
            "(`if name in self.hparams: self.hparams[name] = ...`)."
        )
    if missing:
        lines.append(
            f"Arguments of {cls.__name__}.__init__ without a default that were not saved: {missing}. Do not "
            "pop them from self.hparams (or give them defaults)."
        )
    if not extra and not missing:
        lines.append(
            "The keys fit, so a saved value was refused: save each one in the form the constructor takes "
            "back (plain JSON: numbers, strings, lists, dicts; classes as 'package.module:Class')."
        )
    return "\n".join(lines)


def _same(a: Any, b: Any) -> bool:
    """``a == b`` for plain values; values without a plain equality (arrays, tensors) count as the same."""
    try:
        return bool(a == b)
    except Exception:
        return True


def check_arguments_unchanged(given: dict[str, Any], pristine: dict[str, Any], cls_name: str) -> None:
    """Constructing ``cls_name`` left the keyword arguments it was given as they were (``pristine``).

    A constructor that changes a caller's dict in place (``policy_kwargs.pop("width")``) saves hyperparameters
    without what it took out, and hands every later caller of the same dict a different model.
    """
    changed = [key for key in pristine if key not in given or not _same(given[key], pristine[key])]
    if changed:
        details = "; ".join(f"{key}: given {pristine[key]!r}, left as {given.get(key)!r}" for key in changed)
        raise AssertionError(
            f"constructing {cls_name} changed the arguments it was given ({details}). A constructor must not "
            "change its arguments in place: the caller's dict (a config, the kit's algo_kwargs) then builds a "
            "different model the next time, and the saved hyperparameters lose what was taken out, so model "
            "files stop loading. Copy before changing (policy_kwargs = dict(policy_kwargs or {}); "
            "width = policy_kwargs.pop('width', 8)), and save what you took out as an argument of your own."
        )


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
        space_policies: ``{observation kind: policy alias}`` for the declared-spaces check, the kind being
            the gymnasium space class name (``"Box"``, ``"Discrete"``, ``"MultiDiscrete"``,
            ``"MultiBinary"``, ``"Dict"``), e.g. ``{"Dict": "MultiInputPolicy"}``; by default Dict
            observations use the algorithm's first ``MultiInput*`` alias, everything else the
            constructor's default policy.
        stochastic_policy: whether ``predict(obs, deterministic=False)`` samples (PPO, SAC, DQN's epsilon);
            set False for algorithms whose policy is deterministic (TD3, DDPG, ARS), where the check only
            asks that deterministic predictions repeat.
        skip: ``{check name: reason}`` for inherited checks that cannot apply to this algorithm.
    """

    algo_name: ClassVar[str] = ""
    env_ids: ClassVar[tuple[Any, ...]] = ("CartPole-v1",)
    algo_kwargs: ClassVar[dict[str, Any]] = {}
    learn_steps: ClassVar[int] = 256
    space_policies: ClassVar[dict[str, str]] = {}
    stochastic_policy: ClassVar[bool] = True
    required_attributes: ClassVar[tuple[str, ...]] = ("algo_name", "distribution")

    # helpers ----------------------------------------------------------------------------------------
    def default_entry_point(self) -> str | None:
        return self.algo_name

    def algo_class(self) -> type[Any]:
        from lit_sb3_core import get_algo_class

        return get_algo_class(self.algo_name)

    def kit_kwargs(self) -> dict[str, Any]:
        """A fresh deep copy of ``algo_kwargs``: no construction sees what another one did to its arguments."""
        return copy.deepcopy(dict(self.algo_kwargs))

    def make_model(self, env_id: Any = None, **overrides: Any) -> Any:
        """A fresh model from the registry with this class's small hyperparameters.

        Every construction gets its own deep copy of ``algo_kwargs``, and is checked to leave it unchanged.
        """
        from lit_sb3_core import make_algo

        kwargs = {"seed": 0, **self.kit_kwargs(), **copy.deepcopy(overrides)}
        pristine = copy.deepcopy(kwargs)
        model = make_algo(self.algo_name, **({} if env_id is None else {"env": env_id}), **kwargs)
        check_arguments_unchanged(kwargs, pristine, type(model).__name__)
        return model

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
        np.testing.assert_array_equal(first, again, err_msg=f"{label}: {_NOT_DETERMINISTIC}")

    def collection_unit(self, model: Any) -> int | None:
        """The most environment steps ``model`` may run past its budget: one unit of collection.

        The budget is checked before every unit, as in SB3: an on-policy rollout (``n_steps * n_envs``), an
        off-policy ``train_freq`` chunk (``train_freq * n_envs`` steps), or the iteration another algorithm
        declares with ``env_steps_per_iteration``. None (episode-sized units, undeclared iterations): no
        upper bound is checked. Override it for an algorithm that collects in other units.
        """
        from lit_sb3_core.sdk import OffPolicyAlgorithm, OnPolicyAlgorithm

        n_envs = model.n_envs
        if isinstance(model, OnPolicyAlgorithm):
            return int(model.n_steps) * n_envs
        if isinstance(model, OffPolicyAlgorithm):
            frequency, unit = model.train_freq
            return int(frequency) * n_envs if unit == "step" else None
        return model.env_steps_per_iteration(n_envs)

    def check_budget(self, model: Any, budget: int, label: str) -> None:
        """``model`` reached ``budget`` environment steps and stopped within one collection unit of it."""
        steps = model.num_timesteps
        assert steps >= budget, (
            f"{label}: training for {budget} steps stopped at num_timesteps={steps}: count every env step "
            "in num_timesteps (n_envs per vector step, times world_size) and stop only once it reaches "
            "the budget (self.budget.stop_if_reached())."
        )
        unit = self.collection_unit(model)
        if unit is not None:
            assert steps - budget <= unit, (
                f"{label}: training for {budget} steps ran to num_timesteps={steps}, {steps - budget} past "
                f"the budget, more than one collection unit ({unit} env steps). Check the budget before "
                "every unit of collection: OnPolicyAlgorithm and OffPolicyAlgorithm do it in their "
                "training_step; a training_step of your own that loops over several units must stop once "
                "self.num_timesteps >= self.total_timesteps (and call self.budget.stop_if_reached())."
            )

    def rebuild(self, hparams: dict[str, Any], source: str, env: Any = None) -> Any:
        """``Cls(**hparams)``, as model files, checkpoints and LightningCLI configs rebuild a model.

        A failure names the keys to fix: saved but not taken by the constructor, or taken but not saved.
        """
        cls = self.algo_class()
        given, pristine = copy.deepcopy(hparams), copy.deepcopy(hparams)
        try:
            model = cls(**given) if env is None else cls(env=env, **given)
        except Exception as exc:
            raise AssertionError(_rebuild_advice(cls, pristine, source, exc)) from exc
        check_arguments_unchanged(given, pristine, cls.__name__)
        return model

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
            self.check_budget(model, self.learn_steps, f"learn on {env_id}")
            self.check_predictions(model, str(env_id))

    def test_learning_changes_the_weights(self, tmp_path: Path) -> None:
        """A short single-process fit moves some parameters of every optimizer (of the model, without any)."""
        import torch
        from lightning.pytorch.callbacks import Callback

        from lit_sb3_core import RLEnvDataModule, RLTrainer

        seen: dict[str, Any] = {"steps": []}
        hooks: list[Any] = []

        def counter(index: int) -> Any:
            def count(*args: Any) -> None:
                seen["steps"][index] += 1

            return count

        class Snapshot(Callback):
            def on_train_start(self, trainer: Any, pl_module: Any) -> None:
                # Count each optimizer's steps: parameters that two optimizers share move when either steps.
                seen["steps"] = [0] * len(trainer.optimizers)
                for index, optimizer in enumerate(trainer.optimizers):
                    hooks.append(optimizer.register_step_post_hook(counter(index)))
                names = {id(p): name for name, p in pl_module.named_parameters()}
                seen["before"] = {name: p.detach().clone() for name, p in pl_module.named_parameters()}
                seen["optimizers"] = [
                    (
                        type(optimizer).__name__,
                        [
                            (names.get(id(p), "<a parameter outside the model>"), p, p.detach().clone())
                            for group in optimizer.param_groups
                            for p in group["params"]
                        ],
                    )
                    for optimizer in trainer.optimizers
                ]

        model = self.make_model()
        env = self.env_ids[0]
        try:
            RLTrainer(
                max_steps=self.learn_steps,
                default_root_dir=tmp_path,
                logger=False,
                enable_checkpointing=False,
                enable_progress_bar=False,
                callbacks=[Snapshot()],
            ).fit(model, datamodule=RLEnvDataModule(train_env=env))
        finally:
            for hook in hooks:
                hook.remove()
        self.check_budget(model, self.learn_steps, f"RLTrainer.fit on {env}")
        fit = f"a {self.learn_steps}-step fit on {env}"
        hint = (
            "its update never ran. Step it with self.optimizer_step(optimizer, loss) (zero_grad, backward, "
            "step) in your update (train_on_rollout, train_on_buffer or training_step); if updates start late "
            "(learning_starts, gradient_steps), make algo_kwargs small enough that learn_steps="
            f"{self.learn_steps} includes some."
        )
        for index, ((kind, parameters), steps) in enumerate(zip(seen["optimizers"], seen["steps"])):
            if steps == 0 and parameters:  # (Lightning stands in a parameterless one for None)
                names = [name for name, _, _ in parameters]
                listed = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
                raise AssertionError(
                    f"{fit} never stepped optimizer {index} ({kind} over {listed}) of the "
                    f"{len(seen['steps'])} that configure_optimizers returns (steps per optimizer: "
                    f"{seen['steps']}): every optimizer a plugin returns must step. Call "
                    "self.optimizer_step(optimizer, loss) for it in each phase that computes its loss (an "
                    "auxiliary phase too; when two optimizers share parameters, the other one's steps move "
                    "them, so only the count shows it), or stop returning it from configure_optimizers. "
                    f"If its phase runs only every few iterations, make algo_kwargs small enough that "
                    f"learn_steps={self.learn_steps} includes one."
                )
        for index, (kind, parameters) in enumerate(seen["optimizers"]):
            if parameters and not any(not torch.equal(p.detach(), before) for _, p, before in parameters):
                names = [name for name, _, _ in parameters]
                listed = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
                raise AssertionError(
                    f"{fit} left every parameter of optimizer {index} ({kind} over {listed}) unchanged: {hint}"
                )
        after = dict(model.named_parameters())
        assert seen["before"], f"{type(model).__name__} has no parameters: the policy must be a torch module"
        assert any(not torch.equal(after[name].detach(), value) for name, value in seen["before"].items()), (
            f"{fit} left every parameter of {type(model).__name__} unchanged: {hint} An algorithm without "
            "an optimizer (ARS) must write the new weights into the policy's parameters."
        )

    def test_predict_honours_deterministic(self) -> None:
        """Deterministic predictions repeat; stochastic ones (for a stochastic policy) vary."""
        import torch

        model = self.make_model(self.env_ids[0]).learn(self.learn_steps)
        obs = self.sample_observations(model, 20)
        first, _ = model.predict(obs, deterministic=True)
        np.random.seed(0)
        torch.manual_seed(0)
        sampled = [model.predict(obs, deterministic=False)[0] for _ in range(100)]
        again, _ = model.predict(obs, deterministic=True)
        np.testing.assert_array_equal(
            first, again, err_msg=f"{_NOT_DETERMINISTIC} (after predict(obs, deterministic=False) calls)"
        )
        if self.stochastic_policy:
            assert any(not np.array_equal(actions, first) for actions in sampled), (
                "predict(obs, deterministic=False) gave the deterministic actions in 100 calls on 20 "
                f"observations of {self.env_ids[0]}: pass `deterministic` on to the policy (e.g. "
                "policy.predict_actions(obs, deterministic)) so that False samples (or explores). If "
                f"{type(model).__name__}'s policy is deterministic (as TD3's), set stochastic_policy = False "
                f"in {type(self).__name__}."
            )

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
            self.check_budget(model, self.learn_steps, f"learn on {case.label}")
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
        """Every argument the kit gives is saved as given (compared with a copy no constructor saw)."""
        pristine = self.kit_kwargs()
        model = self.make_model(self.env_ids[0])
        hparams = dict(model.hparams)
        try:
            json.dumps(hparams)
        except TypeError as exc:
            raise AssertionError(
                f"the saved hyperparameters must be plain JSON values (numbers, strings, lists, dicts): {exc}. "
                "Store classes as import strings ('package.module:Class')."
            ) from exc
        for key, value in pristine.items():
            assert key in hparams, f"hyperparameter {key!r} not saved: self.hparams has {sorted(hparams)}"
            assert _same(hparams[key], value), (
                f"hyperparameter {key!r} saved as {hparams[key]!r}, given {value!r}: save every argument as "
                "it was given (a constructor that takes a setting out of a dict argument must copy the dict "
                "first and save the setting as an argument of its own), or the model file rebuilds another model"
            )

    def test_hyperparameters_rebuild_the_model(self, tmp_path: Path) -> None:
        """``Cls(**hparams)`` from ``model.hparams`` and from a model file builds the same model.

        (The checkpoint's hyperparameters rebuild the model in ``test_checkpoint_resume``.)
        """
        import torch

        from lit_sb3_core.engine.model_file import read_model_file

        model = self.make_model(self.env_ids[0])
        hparams = dict(model.hparams)
        rebuilt = self.rebuild(hparams, "model.hparams", env=self.env_ids[0])
        assert dict(rebuilt.hparams) == hparams, (
            f"rebuilding from the hyperparameters changed them: {hparams} became {dict(rebuilt.hparams)}; "
            "save each value in the form the constructor takes back"
        )
        for a, b in zip(model.policy.state_dict().values(), rebuilt.policy.state_dict().values()):
            assert torch.equal(a, b), "the same hyperparameters (and seed) built a different initial policy"
        path = tmp_path / "model.zip"
        model.save(path)
        saved = read_model_file(path).metadata["hyperparameters"]
        from_file = self.rebuild(saved, f"the model file {path.name}", env=self.env_ids[0])
        assert dict(from_file.hparams) == saved, (
            f"rebuilding from the model file's hyperparameters changed them: {saved} became "
            f"{dict(from_file.hparams)}"
        )

    def test_logged_hyperparameters_rebuild_the_model(self, tmp_path: Path) -> None:
        """The ``hparams.yaml`` Lightning's loggers write in a fit (from ``hparams_initial``) rebuilds the model.

        It is what a run folder keeps of the model, and what LightningCLI-style tools read back with
        ``Algo(**yaml.safe_load(...))``; here CSV and TensorBoard loggers write it.
        """
        import yaml
        from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

        from lit_sb3_core import RLEnvDataModule, RLTrainer

        model = self.make_model()
        loggers = [CSVLogger(tmp_path / "csv"), TensorBoardLogger(tmp_path / "tensorboard")]
        RLTrainer(
            max_steps=self.learn_steps,
            default_root_dir=tmp_path,
            logger=loggers,
            enable_checkpointing=False,
            enable_progress_bar=False,
        ).fit(model, datamodule=RLEnvDataModule(train_env=self.env_ids[0]))
        expected = json.loads(json.dumps(dict(model.hparams)))
        for logger in loggers:
            path = Path(str(logger.log_dir)) / "hparams.yaml"
            assert path.is_file(), f"{type(logger).__name__} wrote no {path}"
            try:
                logged = yaml.safe_load(path.read_text())
            except yaml.YAMLError as exc:
                raise AssertionError(
                    f"{type(logger).__name__}'s {path.name} is not plain YAML ({exc}): save hyperparameters as "
                    "plain values (lists, not tuples; classes as 'package.module:Class')"
                ) from exc
            logged = logged or {}
            if logged != expected:
                only_file = sorted(set(logged) - set(expected))
                only_model = sorted(set(expected) - set(logged))
                differ = sorted(k for k in set(logged) & set(expected) if logged[k] != expected[k])
                raise AssertionError(
                    f"{type(logger).__name__}'s {path.name} is not the model's hyperparameters: only in the "
                    f"file {only_file}, only in model.hparams {only_model}, different {differ}. Lightning's "
                    "loggers write hparams_initial, which RLAlgorithm makes the saved hyperparameters: do not "
                    "override hparams_initial or call save_hyperparameters() again, and change self.hparams "
                    "only in __init__ (not in setup or other hooks)."
                )
            rebuilt = self.rebuild(logged, f"{type(logger).__name__}'s {path.name}", env=self.env_ids[0])
            assert json.loads(json.dumps(dict(rebuilt.hparams))) == logged, (
                f"rebuilding from {path.name} changed the hyperparameters: {logged} became {dict(rebuilt.hparams)}"
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
        """A model rebuilt from a checkpoint's hyperparameters resumes it: the counters go on from there."""
        import torch
        from lightning.pytorch.callbacks import Callback, ModelCheckpoint

        from lit_sb3_core import RLEnvDataModule, RLTrainer

        class Counters(Callback):
            batches = 0
            at_start: ClassVar[list[dict[str, int]]] = []

            def on_train_start(self, trainer: Any, pl_module: Any) -> None:
                Counters.at_start.append(_counters(pl_module))

            def on_train_batch_end(self, *args: Any) -> None:
                Counters.batches += 1

        def fit(model: Any, steps: int, ckpt_path: Path | None = None) -> None:
            # The resumed run gets the same (but non-saving) ModelCheckpoint: its state is in the checkpoint.
            saving = {"save_last": True} if ckpt_path is None else {"save_top_k": 0}
            RLTrainer(
                max_steps=steps,
                default_root_dir=tmp_path,
                enable_progress_bar=False,
                callbacks=[ModelCheckpoint(dirpath=tmp_path / "ckpt", **saving), Counters()],
            ).fit(model, datamodule=RLEnvDataModule(train_env=self.env_ids[0]), ckpt_path=ckpt_path)

        model = self.make_model()
        fit(model, self.learn_steps)
        first_batches, saved = Counters.batches, _counters(model)
        checkpoint = tmp_path / "ckpt" / "last.ckpt"
        hparams = torch.load(checkpoint, map_location="cpu", weights_only=True)["hyper_parameters"]
        resumed = self.rebuild(dict(hparams), f"the checkpoint {checkpoint.name}")
        fit(resumed, 2 * saved["num_timesteps"], ckpt_path=checkpoint)
        restart_hint = (
            "restore the counters from the checkpoint (call super().on_load_checkpoint(checkpoint) in "
            "on_load_checkpoint, and super().on_save_checkpoint(checkpoint) when saving) and do not reset "
            "them in on_fit_start or on_train_start"
        )
        assert Counters.at_start == [_counters(None), saved], (
            f"the resumed run started with counters {Counters.at_start[-1]}, but the checkpoint was written "
            f"at {saved}: {restart_hint}"
        )
        self.check_budget(resumed, 2 * saved["num_timesteps"], "the resumed run")
        # Continuing (not restarting) means the second run only took the remaining batches.
        assert Counters.batches - first_batches <= first_batches, (
            f"the resumed run took {Counters.batches - first_batches} batches for the second half of the "
            f"budget, the first run {first_batches} for the first half: it trained more than what remained; "
            f"{restart_hint}"
        )
        assert resumed.iterations > saved["iterations"], (
            f"the resumed run did not count its iterations on from {saved['iterations']} (it ends at "
            f"{resumed.iterations}): increment self.iterations once per iteration"
        )


def _counters(model: Any) -> dict[str, int]:
    """The counters a resumed run must continue (zeros for ``None``: a fresh run)."""
    if model is None:
        return {"num_timesteps": 0, "iterations": 0, "n_updates": 0}
    return {
        "num_timesteps": int(model.num_timesteps),
        "iterations": int(model.iterations),
        "n_updates": int(model.n_updates),
    }
