"""Core's own plugin: the built-ins core registers through the same hooks as any other plugin.

Discovery always loads this module under the plugin name ``core`` (directly, so a source checkout works
without installed entry points; the ``core`` entry point in ``pyproject.toml`` is then skipped), and
``LIT_SB3_BLOCK_PLUGINS`` cannot block it.

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
        registry.add(name, f"lit_sb3_core.sdk.callbacks:{cls}", description=description)
