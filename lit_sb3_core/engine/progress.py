"""``RLProgressBar``: Lightning's tqdm bar, counting environment steps toward ``max_steps``."""

from __future__ import annotations

from typing import Any

import lightning as L
from lightning.pytorch.callbacks import TQDMProgressBar

__all__ = ["RLProgressBar", "print_metrics"]


class RLProgressBar(TQDMProgressBar):
    """Shows ``num_timesteps / max_steps`` with fps and the mean episode return beside it.

    Args:
        refresh_rate: redraw every this many iterations (Lightning batches).
    """

    def on_train_epoch_start(self, trainer: L.Trainer, *_: Any) -> None:
        super().on_train_epoch_start(trainer)
        bar = self.train_progress_bar
        bar.total = int(getattr(trainer, "rl_total_timesteps", 0)) or None
        bar.initial = int(getattr(trainer.lightning_module, "num_timesteps", 0))
        bar.n = bar.initial
        bar.unit = "step"
        bar.set_description("Training")

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *_: Any) -> None:
        bar = self.train_progress_bar
        iterations = getattr(pl_module, "iterations", 0)
        if bar is not None and not bar.disable and iterations % max(self.refresh_rate, 1) == 0:
            bar.n = min(int(getattr(pl_module, "num_timesteps", 0)), bar.total or 1 << 62)
            bar.set_postfix(self.get_metrics(trainer, pl_module), refresh=False)
            bar.refresh()

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        bar = self.train_progress_bar
        if bar is not None and not bar.disable:
            bar.n = min(int(getattr(pl_module, "num_timesteps", 0)), bar.total or 1 << 62)
        super().on_train_epoch_end(trainer, pl_module)

    def get_metrics(self, trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, Any]:
        metrics = {k: v for k, v in super().get_metrics(trainer, pl_module).items() if k != "v_num"}
        metrics.pop("rollout/ep_rew_mean", None)
        shown = getattr(pl_module, "progress_bar_metrics", None)
        if callable(shown):
            metrics.update(shown())
        return metrics


def print_metrics(record: dict[str, float]) -> None:
    """One metric record as SB3's console table (``verbose=1``)."""
    width = max(len(key) for key in record)
    lines = ["-" * (width + 16)]
    for key in sorted(record):
        value = record[key]
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        lines.append(f"| {key:<{width}} | {text:>10} |")
    lines.append("-" * (width + 16))
    print("\n".join(lines))
