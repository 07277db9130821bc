"""sb3-contrib's ``ActionMasker``: the MaskablePPO plugin's wrapper that gives an env ``action_masks()``."""

from __future__ import annotations

try:
    from lit_sb3_ppo_mask.action_masks import ActionMasker
except ImportError as exc:  # pragma: no cover - the plugin ships with lit-sb3
    raise ImportError("ActionMasker comes with MaskablePPO: pip install lit-sb3-ppo-mask") from exc

__all__ = ["ActionMasker"]
