"""``sb3_contrib.qrdqn.policies``: QRDQN's policies (lit-sb3's, with SB3's constructor signature)."""

from __future__ import annotations

from lit_sb3 import QRDQN as _Algorithm
from lit_sb3._sb3_style import off_policy_policy
from lit_sb3_qrdqn.policies import QuantileNetwork

__all__ = ["CnnPolicy", "MlpPolicy", "MultiInputPolicy", "QRDQNPolicy", "QuantileNetwork"]

MlpPolicy = QRDQNPolicy = off_policy_policy(_Algorithm, "MlpPolicy", "QRDQNPolicy", __name__)
CnnPolicy = off_policy_policy(_Algorithm, "CnnPolicy", "CnnPolicy", __name__)
MultiInputPolicy = off_policy_policy(_Algorithm, "MultiInputPolicy", "MultiInputPolicy", __name__)
