"""The conformance kit: what every lit-sb3 plugin must pass, as base classes to subclass.

A plugin's test module subclasses the kit for what it registers, sets a few attributes and inherits the
full check, exactly as a third party would::

    from lit_sb3_core.testing import AlgorithmConformance

    class TestPPOConformance(AlgorithmConformance):
        algo_name = "ppo"
        distribution = "lit-sb3-ppo"
        env_ids = ("CartPole-v1", "Pendulum-v1")
        algo_kwargs = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}

- :class:`AlgorithmConformance` — an algorithm (``lit_sb3_register_algorithms``): discovery, learn and
  predict on every env and every declared kind of space within one collection unit of the budget, a
  short fit that steps every optimizer and moves its weights, ``predict`` honouring ``deterministic``,
  undeclared spaces refused, constructors leaving their arguments unchanged (each gets its own deep copy
  of ``algo_kwargs``), hyperparameters plain, saved as given and rebuilding the model (from ``hparams``,
  a model file, a checkpoint and the loggers' ``hparams.yaml``), seeds reproducible, model-file round
  trip, checkpoint resume continuing the counters, two-rank DDP.
- :class:`PolicyConformance` — a policy alias for an existing algorithm (``lit_sb3_register_policies``):
  the alias resolves for that algorithm, and a model built with it learns, predicts, saves and loads.
- :class:`CallbackConformance` — a named callback (``lit_sb3_register_callbacks``): ``make_callback``
  builds a Lightning callback that runs during ``learn`` and ``RLTrainer.fit`` and can stop training.

Every kit starts with the checks of :class:`PluginConformance`: the entry point is installed by the
distribution, discovery loaded the plugin, its module imports no torch/lightning/gymnasium, and its hooks
match the specifications. A check may be skipped only with a reason:
``skip = {"test_checkpoint_resume": "why it cannot apply"}``. Install with
``pip install lit-sb3-core[testing]``.
"""

from __future__ import annotations

from lit_sb3_core.testing._algorithm import AlgorithmConformance, sample_observations
from lit_sb3_core.testing._callback import CallbackConformance
from lit_sb3_core.testing._plugin import ENTRY_POINT_GROUP, HEAVY_MODULES, PluginConformance
from lit_sb3_core.testing._policy import PolicyConformance
from lit_sb3_core.testing.envs import PointGoalEnv, SpaceTestEnv, space_cases

__all__ = [
    "ENTRY_POINT_GROUP",
    "HEAVY_MODULES",
    "AlgorithmConformance",
    "CallbackConformance",
    "PluginConformance",
    "PointGoalEnv",
    "PolicyConformance",
    "SpaceTestEnv",
    "sample_observations",
    "space_cases",
]
