"""``CallbackConformance``: what a plugin that registers a named callback must pass."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any, ClassVar

import pytest

from lit_sb3_core.testing._plugin import PluginConformance

__all__ = ["CallbackConformance"]


def _counting(hook: Any, name: str, calls: dict[str, int]) -> Any:
    """``hook``, counting its calls in ``calls[name]`` (``functools.wraps`` keeps Lightning's override checks)."""

    @functools.wraps(hook)
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return hook(*args, **kwargs)

    return counted


class CallbackConformance(PluginConformance):
    """Inherited checks for a callback plugin (``lit_sb3_register_callbacks``).

    The callback is trained with a small algorithm run (PPO on CartPole by default, so ``lit-sb3-ppo``
    must be installed; set ``algo_name``/``algo_kwargs``/``env_id`` for another).

    Attributes:
        callback_name: the name the plugin registers (``"print_progress"``).
        distribution: the plugin's distribution name.
        entry_point: its entry-point name; by default the only one the distribution declares.
        callback_kwargs: arguments for ``make_callback(callback_name, **callback_kwargs)``.
        stop_kwargs: arguments with which the callback asks to stop (returns False) within
            ``learn_steps`` environment steps; ``None`` for a callback that never stops training (then
            skip ``test_returning_false_stops_training`` with that reason).
        algo_name / algo_kwargs / env_id: the run the callback is attached to.
        learn_steps: environment steps of that run.
        skip: ``{check name: reason}`` for inherited checks that cannot apply.

    Every check runs in a fresh temporary working directory. Override :meth:`check_callback_ran` to
    assert what your callback does (a file it writes, a metric it logs); by default it checks that a
    Lightning hook the callback's class implements was called.
    """

    callback_name: ClassVar[str] = ""
    callback_kwargs: ClassVar[dict[str, Any]] = {}
    stop_kwargs: ClassVar[dict[str, Any] | None] = None
    algo_name: ClassVar[str] = "ppo"
    algo_kwargs: ClassVar[dict[str, Any]] = {"n_steps": 64, "batch_size": 64, "n_epochs": 1}
    env_id: ClassVar[Any] = "CartPole-v1"
    learn_steps: ClassVar[int] = 256
    required_attributes: ClassVar[tuple[str, ...]] = ("callback_name", "distribution")

    # helpers ----------------------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _callback_workdir(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Each check runs in a fresh temporary directory, so callbacks may write to relative paths."""
        monkeypatch.chdir(tmp_path)

    def make_callback(self, **overrides: Any) -> Any:
        """The callback from the registry, with ``callback_kwargs`` and ``overrides``."""
        from lit_sb3_core import make_callback

        return make_callback(self.callback_name, **{**self.callback_kwargs, **overrides})

    def make_model(self) -> Any:
        from lit_sb3_core import make_algo

        return make_algo(self.algo_name, env=self.env_id, seed=0, **copy.deepcopy(self.algo_kwargs))

    @staticmethod
    def watch(callback: Any) -> dict[str, int]:
        """Count calls of the Lightning hooks ``callback``'s class implements; returns the live counts."""
        from lightning.pytorch.callbacks import Callback

        calls: dict[str, int] = {}
        for name in dir(Callback):
            if not name.startswith("on_") or getattr(type(callback), name) is getattr(Callback, name):
                continue
            calls[name] = 0
            setattr(callback, name, _counting(getattr(callback, name), name, calls))
        return calls

    def check_callback_ran(self, callback: Any, model: Any, calls: dict[str, int]) -> None:
        """Assert that ``callback`` took part in the run that trained ``model``; override for more."""
        assert calls, (
            f"{type(callback).__name__} implements no Lightning hook (on_train_batch_end, ...): it can never run; "
            "subclass lit_sb3_core.sb3.callbacks.RLCallback and implement _on_step"
        )
        assert any(calls.values()), f"none of {type(callback).__name__}'s hooks {sorted(calls)} was called"

    # registration -----------------------------------------------------------------------------------
    def test_registers_name(self) -> None:
        from lit_sb3_core import list_callbacks

        assert self.callback_name in list_callbacks(), f"{self.callback_name!r} is not in {list_callbacks()}"
        label = f"callback:{self.callback_name}"
        provides = self.plugin_info().provides
        assert label in provides, f"{self.distribution} does not provide {label}; it provides {provides}"

    def test_make_callback_builds_a_lightning_callback(self) -> None:
        from lightning.pytorch.callbacks import Callback

        from lit_sb3_core import make_callback

        callback = self.make_callback()
        assert isinstance(callback, Callback), (
            f"make_callback({self.callback_name!r}) gave a {type(callback).__name__}, not a Lightning Callback: "
            "subclass lit_sb3_core.sb3.callbacks.RLCallback (or lightning.pytorch.callbacks.Callback)"
        )
        again = make_callback(self.callback_name.upper(), **self.callback_kwargs)
        assert type(again) is type(callback), "callback names are looked up case-insensitively"

    # running ----------------------------------------------------------------------------------------
    def test_runs_during_learn(self) -> None:
        callback = self.make_callback()
        calls = self.watch(callback)
        model = self.make_model().learn(self.learn_steps, callback=callback)
        assert model.num_timesteps >= self.learn_steps, "the callback stopped a run that should have finished"
        self.check_callback_ran(callback, model, calls)

    def test_runs_with_rl_trainer(self, tmp_path: Path) -> None:
        from lit_sb3_core import RLEnvDataModule, RLTrainer

        callback = self.make_callback()
        calls = self.watch(callback)
        model = self.make_model()
        trainer = RLTrainer(
            max_steps=self.learn_steps,
            callbacks=[callback],
            default_root_dir=tmp_path,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(model, datamodule=RLEnvDataModule(train_env=self.env_id, seed=0))
        assert model.num_timesteps >= self.learn_steps
        self.check_callback_ran(callback, model, calls)

    def test_returning_false_stops_training(self, tmp_path: Path) -> None:
        from lit_sb3_core import RLEnvDataModule, RLTrainer

        if self.stop_kwargs is None:
            raise AssertionError(
                f"set {type(self).__name__}.stop_kwargs to arguments with which the callback stops training "
                "within learn_steps, or skip this check with the reason it never stops: "
                "skip = {'test_returning_false_stops_training': '...'}"
            )
        budget = 8 * self.learn_steps
        model = self.make_model().learn(budget, callback=self.make_callback(**self.stop_kwargs))
        assert model.num_timesteps < budget, (
            f"with stop_kwargs={self.stop_kwargs} the callback did not stop learn(): it ran all {budget} steps"
        )
        model = self.make_model()
        trainer = RLTrainer(
            max_steps=budget,
            callbacks=[self.make_callback(**self.stop_kwargs)],
            default_root_dir=tmp_path,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(model, datamodule=RLEnvDataModule(train_env=self.env_id, seed=0))
        assert model.num_timesteps < budget, "the callback did not stop RLTrainer.fit"
