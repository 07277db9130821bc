"""``RLProgressBar``: Lightning's tqdm bar, counting environment steps toward ``max_steps`` while training and
episodes while evaluating (``Evaluating: 7/10 episodes, mean reward 481.2``)."""

from __future__ import annotations

import sys
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import TQDMProgressBar
from lightning.pytorch.callbacks.progress.tqdm_progress import Tqdm

__all__ = ["RLProgressBar", "print_metrics"]


# An evaluation bar (tqdm puts ", " before a postfix).
_EPISODE_FORMAT = "{desc}: {n_fmt}/{total_fmt} episodes{postfix} [{elapsed}]"


class RLProgressBar(TQDMProgressBar):
    """Shows ``num_timesteps / max_steps`` with fps and the mean episode return beside it while training;
    during validation and test (whole episodes in one Lightning batch) it counts finished episodes.

    Args:
        refresh_rate: redraw every this many iterations (Lightning batches).
    """

    _episode_bar: Tqdm | None = None  # the evaluation bar counting episodes, while a loop runs

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

    # evaluation: one Lightning batch runs every episode; the model reports each finished one -------------
    def init_validation_tqdm(self) -> Tqdm:
        return self._episode_tqdm(has_main_bar=self.trainer.state.fn != "validate")

    def init_test_tqdm(self) -> Tqdm:
        return self._episode_tqdm(has_main_bar=False)

    def _episode_tqdm(self, has_main_bar: bool) -> Tqdm:
        return Tqdm(
            desc="Evaluating",
            position=2 * self.process_position + has_main_bar,
            disable=self.is_disabled,
            leave=not has_main_bar,
            dynamic_ncols=True,
            file=sys.stdout,
            bar_format=_EPISODE_FORMAT,
        )

    def on_validation_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, *_: Any) -> None:
        self._start_episodes(self.val_progress_bar, pl_module)

    def on_validation_batch_end(self, *_: Any) -> None:
        self._episode_bar = None

    def on_test_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, *_: Any) -> None:
        self._start_episodes(self.test_progress_bar, pl_module)

    def on_test_batch_end(self, *_: Any) -> None:
        self._episode_bar = None

    def _start_episodes(self, bar: Tqdm, pl_module: L.LightningModule) -> None:
        options = getattr(pl_module, "evaluation_options", None) or {}
        bar.reset(total=int(options.get("n_eval_episodes", 10)))
        self._episode_bar = bar

    def episode_finished(self, episode_rewards: list[float]) -> None:
        """Called by the model after each finished evaluation episode, with the returns so far."""
        bar = getattr(self, "_episode_bar", None)
        if bar is None or bar.disable or not episode_rewards:
            return
        bar.n = len(episode_rewards)
        mean = sum(episode_rewards) / len(episode_rewards)
        bar.set_postfix_str(f"mean reward {mean:.1f}", refresh=True)

    def get_metrics(self, trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, Any]:
        metrics = {k: v for k, v in super().get_metrics(trainer, pl_module).items() if k != "v_num"}
        metrics.pop("rollout/ep_rew_mean", None)
        record = getattr(pl_module, "last_metrics", None)  # an RLAlgorithm's most recent metric record
        if isinstance(record, dict):
            if "time/fps" in record:
                metrics["fps"] = int(record["time/fps"])
            if "rollout/ep_rew_mean" in record:
                metrics["ep_rew_mean"] = f"{record['rollout/ep_rew_mean']:.1f}"
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
