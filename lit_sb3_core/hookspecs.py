"""The hooks a lit-sb3 plugin may implement.

A plugin is a module named by an entry point in the ``lit_sb3`` group::

    [project.entry-points.lit_sb3]
    ppo = "lit_sb3_ppo._plugin"

and that module implements some of the hooks below, marked with :data:`hookimpl`::

    from lit_sb3_core import hookimpl

    @hookimpl
    def lit_sb3_register_algorithms(registry):
        registry.add("ppo", "lit_sb3_ppo.ppo:PPO", description="Proximal Policy Optimization")

Every hook receives a ``registry`` object with one ``add`` method and returns nothing. Register import
strings, not classes, and import nothing heavy (torch, lightning, gymnasium) in the plugin module: every
installed plugin is imported whenever the registry is first used, and the classes load only when asked
for. Hooks only ever gain optional arguments, so an implementation that takes just ``registry`` keeps
working. A hook whose name core does not know makes the plugin fail to load (it is usually a typo).

The registrations are also the allow-list for names read from outside: a class named in a model file, a
checkpoint's hyperparameters, a config or a CLI flag (``policy_kwargs.activation_fn: "relu"``,
``features_extractor_class``, ``optimizer_class``, ``replay_buffer_class``, ``policy``) resolves only to
what some plugin registered (or to a class of the expected kind that the program has already imported);
nothing else is imported. Register the classes your plugin's users may name in their files.
"""

from __future__ import annotations

import pluggy

from lit_sb3_core.registry.registrars import (
    ActivationRegistrar,
    AlgorithmRegistrar,
    BufferRegistrar,
    CallbackRegistrar,
    FeaturesExtractorRegistrar,
    OptimizerRegistrar,
    PolicyRegistrar,
    ScheduleRegistrar,
)

__all__ = [
    "ActivationRegistrar",
    "AlgorithmRegistrar",
    "BufferRegistrar",
    "CallbackRegistrar",
    "FeaturesExtractorRegistrar",
    "OptimizerRegistrar",
    "PolicyRegistrar",
    "ScheduleRegistrar",
    "hookimpl",
    "hookspec",
    "lit_sb3_register_activations",
    "lit_sb3_register_algorithms",
    "lit_sb3_register_buffers",
    "lit_sb3_register_callbacks",
    "lit_sb3_register_features_extractors",
    "lit_sb3_register_optimizers",
    "lit_sb3_register_policies",
    "lit_sb3_register_schedules",
]

PROJECT_NAME = "lit_sb3"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks the hook specifications below (core only)."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementations: ``@hookimpl def lit_sb3_register_algorithms(registry): ...``."""


@hookspec
def lit_sb3_register_algorithms(registry: AlgorithmRegistrar) -> None:
    """Register algorithms by name.

    Called once per plugin, the first time the registry is used.

    Args:
        registry: Call ``registry.add(name, "package.module:Class", description="...", aliases=(...))``
            for each algorithm. Names are lower-case (``"ppo"``); users may also write
            ``"<plugin>/<name>"`` when two plugins register the same name.

    Example:
        .. code-block:: python

            @hookimpl
            def lit_sb3_register_algorithms(registry):
                registry.add("recurrent_ppo", "lit_sb3_ppo_recurrent.ppo_recurrent:RecurrentPPO",
                             description="PPO with an LSTM policy", aliases=("ppo_lstm",))
    """


@hookspec
def lit_sb3_register_policies(registry: PolicyRegistrar) -> None:
    """Register policy aliases for an algorithm, such as ``"MlpLstmPolicy"``.

    Aliases are per algorithm, as in Stable-Baselines3. An algorithm's own aliases are a ClassVar on its
    class; use this hook to add aliases to an algorithm from outside its plugin.

    Args:
        registry: Call ``registry.add(algo="ppo", alias="MlpLstmPolicy", target="package.module:Class")``.

    Example:
        .. code-block:: python

            @hookimpl
            def lit_sb3_register_policies(registry):
                registry.add(algo="ppo", alias="CnnLstmPolicy", target="my_pkg.policies:CnnLstmPolicy")
    """


@hookspec
def lit_sb3_register_callbacks(registry: CallbackRegistrar) -> None:
    """Register callbacks by name, for ``make_callback(name, **kwargs)`` and configuration files.

    Args:
        registry: Call ``registry.add("eval", "package.module:EvalCallback", description="...")``.

    Example:
        .. code-block:: python

            @hookimpl
            def lit_sb3_register_callbacks(registry):
                registry.add("eval", "lit_sb3_core.sb3.callbacks:EvalCallback",
                             description="Evaluate the policy every n steps")
    """


@hookspec
def lit_sb3_register_buffers(registry: BufferRegistrar) -> None:
    """Register replay buffer classes by name, so off-policy algorithms accept ``replay_buffer_class="her"``.

    Args:
        registry: Call ``registry.add("her", "package.module:HerReplayBuffer", description="...")``.

    Example:
        .. code-block:: python

            @hookimpl
            def lit_sb3_register_buffers(registry):
                registry.add("her", "lit_sb3_her.buffer:HerReplayBuffer",
                             description="Hindsight Experience Replay")
    """


@hookspec
def lit_sb3_register_activations(registry: ActivationRegistrar) -> None:
    """Register activation classes (``torch.nn.Module`` subclasses) by name, for ``activation_fn``.

    Core registers torch's own (``"relu"``, ``"tanh"``, ``"leakyrelu"``/``"leaky_relu"``, ...). A name
    registered here may appear in model files, checkpoints and configs.

    Args:
        registry: Call ``registry.add("swish", "my_pkg.layers:Swish", description="...")``.

    Example:
        .. code-block:: python

            @hookimpl
            def lit_sb3_register_activations(registry):
                registry.add("swish", "my_pkg.layers:Swish", description="x * sigmoid(x)")
    """


@hookspec
def lit_sb3_register_features_extractors(registry: FeaturesExtractorRegistrar) -> None:
    """Register features extractor classes by name, for ``features_extractor_class``.

    Core registers ``FlattenExtractor``, ``NatureCNN`` and ``CombinedExtractor``.

    Args:
        registry: Call ``registry.add("impala_cnn", "my_pkg.nets:ImpalaCNN", description="...")``.
    """


@hookspec
def lit_sb3_register_optimizers(registry: OptimizerRegistrar) -> None:
    """Register optimizer classes (``torch.optim.Optimizer`` subclasses) by name, for ``optimizer_class``.

    Core registers torch's own (``"adam"``, ``"adamw"``, ``"rmsprop"``, ``"sgd"``, ...).

    Args:
        registry: Call ``registry.add("rmsprop_tf_like", "lit_sb3_a2c.rmsprop_tf_like:RMSpropTFLike")``.
    """


@hookspec
def lit_sb3_register_schedules(registry: ScheduleRegistrar) -> None:
    """Register schedule classes or functions (of ``progress_remaining``) by name.

    Core registers ``"constant"`` and ``"linear"``.

    Args:
        registry: Call ``registry.add("cosine", "my_pkg.schedules:cosine_schedule")``.
    """
