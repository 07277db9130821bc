"""MaskablePPO passes the conformance kit exactly as a third-party plugin would use it.

Its envs have masks: Discrete, MultiDiscrete and MultiBinary envs with invalid actions, and CartPole-v1
through ``ActionMasker`` with every action allowed.
"""

from typing import Any, ClassVar

import _ppo_mask_envs as envs

from lit_sb3_core.testing import AlgorithmConformance


class TestMaskablePPOConformance(AlgorithmConformance):
    algo_name = "maskable_ppo"
    distribution = "lit-sb3-ppo-mask"
    env_ids = (envs.ARMS, envs.MULTI_ARMS, envs.BITS, envs.CARTPOLE_ALL_VALID)
    algo_kwargs: ClassVar[dict[str, Any]] = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}
    learn_steps = 256
