"""Each use of Lightning beyond its documented API (``engine/lightning_internals.py``) still does what lit-sb3
relies on, checked against the installed Lightning with plain LightningModules (no lit-sb3 algorithm), so a
Lightning upgrade that changes one fails here, by name."""

from __future__ import annotations

import signal
from typing import Any

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import Callback

from lit_sb3_core.engine import lightning_internals as internals

STEPS = 4


class _Counter(L.LightningModule):
    """Manual optimization, stepping the wrapped torch optimizer between the step-counter hooks."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.automatic_optimization = False
        self.hook_names: list[Any] = []
        self.counters_present: list[bool] = []

    def on_train_start(self) -> None:
        self.hook_names.append(getattr(self, internals.HOOK_NAME_ATTRIBUTE))

    def training_step(self, batch: Any, batch_idx: int) -> None:
        optimizer = self.optimizers()
        self.counters_present.append(internals.has_step_counters(optimizer))
        loss = self.layer(torch.ones(1, 2)).sum()
        optimizer.optimizer.zero_grad()
        loss.backward()
        internals.count_optimizer_step(optimizer, optimizer.optimizer.step)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self) -> Any:
        return range(100)

    def val_dataloader(self) -> Any:
        return range(1)

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self.validated_at = [*getattr(self, "validated_at", []), self.trainer.global_step]


def _trainer(**kwargs: Any) -> L.Trainer:
    options: dict[str, Any] = {
        "max_steps": STEPS,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        "accelerator": "cpu",
        "limit_val_batches": 1,
    }
    options.update(kwargs)
    return L.Trainer(**options)


def test_direct_steps_keep_lightnings_step_counter() -> None:
    model = _Counter()
    trainer = _trainer(limit_val_batches=0)
    trainer.fit(model)
    assert model.counters_present == [True] * STEPS
    # Without the hooks, global_step would stay 0 and max_steps would never end the run.
    assert trainer.global_step == STEPS


def test_lightning_records_the_running_hook_under_that_attribute() -> None:
    model = _Counter()
    _trainer(limit_val_batches=0).fit(model)
    assert model.hook_names == ["on_train_start"]


def test_the_validation_interval_can_be_set_once_fit_starts() -> None:
    class SetsInterval(Callback):
        def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
            internals.set_validation_interval(trainer, 2)  # where RLTrainer.fit sets it

    model = _Counter()
    trainer = _trainer(max_steps=6, callbacks=[SetsInterval()])
    trainer.fit(model)
    assert model.validated_at == [2, 4, 6]


def test_sigterm_exception_stops_fit_as_lightnings_own_check_does() -> None:
    seen: list[BaseException] = []

    class Watch(Callback):
        def on_exception(
            self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException
        ) -> None:
            seen.append(exception)

    class Stops(_Counter):
        def training_step(self, batch: Any, batch_idx: int) -> None:
            if batch_idx == 1:
                raise internals.SIGTERMException()
            super().training_step(batch, batch_idx)

    trainer = _trainer(limit_val_batches=0, callbacks=[Watch()])
    with pytest.raises(SystemExit):
        trainer.fit(Stops())
    assert len(seen) == 1 and isinstance(seen[0], internals.SIGTERMException)
    assert trainer.global_step == 1 and trainer.interrupted
    assert isinstance(trainer.received_sigterm, bool)  # the public flag a rollout polls


def test_ctrl_c_ends_fit_with_an_exit_that_is_recognised() -> None:
    class Interrupts(_Counter):
        def training_step(self, batch: Any, batch_idx: int) -> None:
            raise KeyboardInterrupt

    trainer = _trainer(limit_val_batches=0)
    handler = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as raised:
            trainer.fit(Interrupts())
    finally:
        signal.signal(signal.SIGINT, handler)  # Lightning ignores Ctrl+C while it shuts down
    assert raised.value.code == 1
    assert internals.ended_by_ctrl_c(raised.value, trainer)
    assert not internals.ended_by_ctrl_c(SystemExit(1), trainer)


def test_is_overridden_sees_module_and_callback_hooks() -> None:
    class Hooked(_Counter):
        def on_before_backward(self, loss: torch.Tensor) -> None:
            pass

    class HookedCallback(Callback):
        def on_after_backward(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
            pass

    assert internals.is_overridden("on_before_backward", Hooked(), L.LightningModule)
    assert not internals.is_overridden("on_before_backward", _Counter(), L.LightningModule)
    assert internals.is_overridden("on_after_backward", HookedCallback(), Callback)
    assert not internals.is_overridden("on_after_backward", Callback(), Callback)


def test_attached_trainer_uses_the_public_property() -> None:
    model = _Counter()
    assert internals.attached_trainer(model) is None
    trainer = _trainer(limit_val_batches=0)
    trainer.fit(model)
    assert internals.attached_trainer(model) is trainer
    with internals.detached_from_trainer(model):
        assert internals.attached_trainer(model) is None
    assert internals.attached_trainer(model) is trainer and model.optimizers() is not None


class _WithHyperparameters(L.LightningModule):
    def __init__(self, width: int = 2) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = torch.nn.Linear(width, 1)
        self.loaded_checkpoints: list[dict[str, Any]] = []

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.loaded_checkpoints.append(checkpoint)


def test_a_module_is_rebuilt_from_a_checkpoint_read_elsewhere() -> None:
    saved = _WithHyperparameters(width=3)
    checkpoint = {
        "pytorch-lightning_version": L.__version__,
        "hyper_parameters": dict(saved.hparams),
        "state_dict": saved.state_dict(),
    }
    checkpoint = internals.migrate_checkpoint(checkpoint)
    assert checkpoint["hyper_parameters"] == {"width": 3} and "state_dict" in checkpoint
    rebuilt = internals.module_from_checkpoint(_WithHyperparameters, checkpoint, strict=True)
    assert isinstance(rebuilt, _WithHyperparameters) and rebuilt.hparams["width"] == 3
    assert torch.equal(rebuilt.layer.weight, saved.layer.weight)
    assert rebuilt.loaded_checkpoints == [checkpoint]  # the module's own hook ran, as in load_from_checkpoint
    assert callable(internals.DEFAULT_MAP_LOCATION)  # torch.load's map_location, as Lightning passes it
