"""Core's own plugin: the built-ins core registers through the same hooks as any other plugin.

Discovery always loads this module under the plugin name ``core`` (directly, so a source checkout works
without installed entry points; the ``core`` entry point in ``pyproject.toml`` is then skipped), and
``LIT_SB3_BLOCK_PLUGINS`` cannot block it.

Besides callbacks, core registers the classes a model file, checkpoint or config may name: torch's own
activations and optimizers, core's features extractors, replay buffers and schedules. These are the
allow-list names from outside resolve through (see :mod:`lit_sb3_core.registry.names`).

Hooks here register import strings only: this module is imported whenever the registry is first used
and must stay free of torch, lightning and gymnasium.
"""

from __future__ import annotations

from lit_sb3_core.hookspecs import hookimpl

_CALLBACKS = {
    "eval": ("EvalCallback", "evaluate periodically, keep the best model and an evaluations.npz record"),
    "checkpoint": ("CheckpointCallback", "save a model file every save_freq calls"),
    "stop_on_reward_threshold": ("StopTrainingOnRewardThreshold", "stop once an evaluation reaches a return"),
    "stop_on_max_episodes": ("StopTrainingOnMaxEpisodes", "stop after max_episodes episodes per env"),
    "stop_on_no_model_improvement": (
        "StopTrainingOnNoModelImprovement",
        "stop when evaluations stop improving",
    ),
    "every_n_timesteps": ("EveryNTimesteps", "run a callback every n environment steps"),
    "log_every_n_timesteps": ("LogEveryNTimesteps", "print the metrics every n environment steps"),
    "callback_list": ("CallbackList", "several callbacks as one"),
}


@hookimpl
def lit_sb3_register_callbacks(registry):
    for name, (cls, description) in _CALLBACKS.items():
        registry.add(name, f"lit_sb3_core.sb3.callbacks:{cls}", description=description)


# torch.nn activations that take no required argument; registered under the lower-case class name.
_TORCH_ACTIVATIONS = (
    "CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "Identity",
    "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "RReLU", "SELU", "SiLU",
    "Sigmoid", "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink",
)  # fmt: skip
# Snake-case spellings configs use (SB3 users write "leaky_relu").
_ACTIVATION_SPELLINGS = {"leaky_relu": "LeakyReLU", "log_sigmoid": "LogSigmoid", "swish": "SiLU"}
_TORCH_OPTIMIZERS = (
    "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
    "Rprop", "SGD",
)  # fmt: skip
_EXTRACTORS = ("FlattenExtractor", "NatureCNN", "CombinedExtractor")


@hookimpl
def lit_sb3_register_activations(registry):
    for name in _TORCH_ACTIVATIONS:
        registry.add(name, f"torch.nn:{name}", description=f"torch.nn.{name}")
    for spelling, name in _ACTIVATION_SPELLINGS.items():
        registry.add(spelling, f"torch.nn:{name}", description=f"torch.nn.{name}")


@hookimpl
def lit_sb3_register_optimizers(registry):
    for name in _TORCH_OPTIMIZERS:
        registry.add(name, f"torch.optim:{name}", description=f"torch.optim.{name}")


@hookimpl
def lit_sb3_register_features_extractors(registry):
    for name in _EXTRACTORS:
        registry.add(name, f"lit_sb3_core.nets.torch_layers:{name}", description=f"lit-sb3's {name}")


@hookimpl
def lit_sb3_register_buffers(registry):
    registry.add(
        "replay_buffer", "lit_sb3_core.data.replay_buffer:ReplayBuffer", description="uniform replay"
    )
    registry.add(
        "dict_replay_buffer",
        "lit_sb3_core.data.replay_buffer:DictReplayBuffer",
        description="uniform replay of Dict observations",
    )


@hookimpl
def lit_sb3_register_schedules(registry):
    registry.add("constant", "lit_sb3_core.foundation.schedules:constant_schedule", description="a constant")
    registry.add("linear", "lit_sb3_core.foundation.schedules:linear_schedule", description="start to end")
