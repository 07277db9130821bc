"""``sb3_contrib.ppo_recurrent``: ``RecurrentPPO`` and its policy names."""

from __future__ import annotations

from lit_sb3 import RecurrentPPO
from lit_sb3.ppo_recurrent.policies import CnnLstmPolicy, MlpLstmPolicy, MultiInputLstmPolicy

__all__ = ["CnnLstmPolicy", "MlpLstmPolicy", "MultiInputLstmPolicy", "RecurrentPPO"]
