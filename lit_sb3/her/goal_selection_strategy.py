"""SB3's ``GoalSelectionStrategy`` (``"future"``, ``"final"``, ``"episode"``): the HER plugin's."""

from __future__ import annotations

try:
    from lit_sb3_her.buffer import GoalSelectionStrategy
except ImportError as exc:  # pragma: no cover - the plugin ships with lit-sb3
    raise ImportError("GoalSelectionStrategy comes with the HER plugin: pip install lit-sb3-her") from exc

__all__ = ["GoalSelectionStrategy"]

# SB3's lookup from the strategy's name (``goal_selection_strategy="future"``) to the strategy.
KEY_TO_GOAL_STRATEGY = {strategy.key: strategy for strategy in GoalSelectionStrategy}

__all__ += ["KEY_TO_GOAL_STRATEGY"]
