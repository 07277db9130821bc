"""``export`` and its override point ``export_policy_module`` (a part of RLAlgorithm).

The engine (``lit_sb3_core.engine.exporters``) writes the graph; the algorithm only says which module maps
observations to its policy's actions.
"""

from __future__ import annotations

import copy
from pathlib import Path

from lit_sb3_core.engine.exporters import DeterministicPolicy, PolicyModule, export_policy

__all__ = ["PolicyExport"]


class PolicyExport:
    """RLAlgorithm's policy export (a part of RLAlgorithm)."""

    def export(self, path: str | Path, format: str = "onnx", opset: int | None = None) -> Path:
        """Write the deterministic policy as a standalone graph: raw observations in, env actions out.

        ``format`` is ``"onnx"``, ``"torchscript"`` or ``"torch-export"``; observation normalization, image
        scaling, action rescaling/clipping and argmax are part of the graph, so its outputs equal
        ``predict(obs, deterministic=True)``. See ``lit_sb3_core.engine.exporters``. Returns the path.
        """
        self.require_policy()  # type: ignore[attr-defined]
        return export_policy(self, path, format, opset)

    def export_policy_module(self) -> PolicyModule:
        """The module ``export`` writes: override when the policy needs more than observations.

        The default is ``policy.predict_actions(obs, deterministic=True)`` on a copy of the policy in eval
        mode. An algorithm whose policy takes extra inputs (RecurrentPPO's LSTM state, MaskablePPO's masks)
        or whose ``to_env_actions`` differs returns its own ``PolicyModule``: a module
        ``forward(obs, *extra) -> actions | (actions, *extra_outputs)`` with example extra inputs.
        """
        policy = copy.deepcopy(self.require_policy()).cpu().eval()  # type: ignore[attr-defined]
        return PolicyModule(DeterministicPolicy(policy))
