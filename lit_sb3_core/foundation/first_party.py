"""Names of the first-party plugins, kept free of imports so ``import lit_sb3`` can use them for nothing.

The registry uses these to say which distribution to install when a name is unknown, and the ``lit_sb3``
facade uses them to resolve Stable-Baselines3 class names (``lit_sb3.PPO``) through the registry.
"""

from __future__ import annotations

__all__ = ["FIRST_PARTY", "SB3_BUFFER_CLASS_NAMES", "SB3_CLASS_NAMES"]

# registry name -> the first-party distribution that registers it
FIRST_PARTY: dict[str, str] = {
    "ppo": "lit-sb3-ppo",
    "a2c": "lit-sb3-a2c",
    "trpo": "lit-sb3-trpo",
    "recurrent_ppo": "lit-sb3-ppo-recurrent",
    "ppo_lstm": "lit-sb3-ppo-recurrent",
    "maskable_ppo": "lit-sb3-ppo-mask",
    "ars": "lit-sb3-ars",
    "dqn": "lit-sb3-dqn",
    "qrdqn": "lit-sb3-qrdqn",
    "sac": "lit-sb3-sac",
    "td3": "lit-sb3-td3",
    "ddpg": "lit-sb3-ddpg",
    "tqc": "lit-sb3-tqc",
    "crossq": "lit-sb3-crossq",
    "her": "lit-sb3-her",
}

# Stable-Baselines3 / sb3-contrib class name -> registry name
SB3_CLASS_NAMES: dict[str, str] = {
    "PPO": "ppo",
    "A2C": "a2c",
    "TRPO": "trpo",
    "RecurrentPPO": "recurrent_ppo",
    "MaskablePPO": "maskable_ppo",
    "ARS": "ars",
    "DQN": "dqn",
    "QRDQN": "qrdqn",
    "SAC": "sac",
    "TD3": "td3",
    "DDPG": "ddpg",
    "TQC": "tqc",
    "CrossQ": "crossq",
}

# Stable-Baselines3 replay buffer class name -> registry name (``lit_sb3_register_buffers``)
SB3_BUFFER_CLASS_NAMES: dict[str, str] = {
    "HerReplayBuffer": "her",
}
