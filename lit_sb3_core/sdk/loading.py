"""``lit_sb3_core.load``: any lit-sb3 model file, typed as what it is, an ``RLAlgorithm``.

The engine reads model files against its protocol (``engine/protocol.py``), since it cannot import the
SDK's base classes; this is the same function seen from the SDK, where the algorithm type is known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from lit_sb3_core.engine import model_file
from lit_sb3_core.sdk.algorithm import RLAlgorithm

__all__ = ["load"]


def load(
    path: str | Path,
    env: Any = None,
    device: str | None = None,
    custom_objects: dict[str, Any] | None = None,
    print_system_info: bool = False,
    force_reset: bool = True,
    **overrides: Any,
) -> RLAlgorithm:
    """Load any lit-sb3 model file; its algorithm is found through the registry from the file itself.

    ``env`` (optional) must have the spaces the model was saved for and becomes what ``learn`` trains
    on; ``custom_objects`` and ``overrides`` replace stored values, as in ``RLAlgorithm.load``. Loading
    never unpickles anything. An SB3 file does not name its algorithm: load it with the algorithm's class.
    """
    return cast(
        RLAlgorithm,
        model_file.load(
            path,
            env=env,
            device=device,
            custom_objects=custom_objects,
            print_system_info=print_system_info,
            force_reset=force_reset,
            **overrides,
        ),
    )
