"""Tuned hyperparameters (rl-zoo3's, where a plugin ships them) split into model, data and trainer arguments.

An algorithm's ``tuned_hyperparameters[env_id]`` is one flat dict, as rl-zoo3 writes it: ``n_timesteps`` is
the step budget, ``n_envs`` (and other datamodule arguments such as ``normalize``) configure the
environments, the rest are constructor arguments. Splitting it here keeps ``lit-sb3 fit --zoo``,
``lit-sb3 train`` and Python users on the same mapping.
"""

from __future__ import annotations

import inspect
from typing import Any

from lit_sb3_core.envs.atari import is_atari_id
from lit_sb3_core.errors import ConfigurationError

__all__ = ["split_tuned", "tuned_hyperparameters", "tuned_key"]

# The entry rl-zoo3 applies to every Atari game.
ATARI_KEY = "atari"
# rl-zoo3 keys that belong to the trainer, by their RLTrainer name.
_TRAINER_KEYS = {"n_timesteps": "max_steps"}
# RLEnvDataModule arguments a tuned entry never sets: the environment itself comes from the caller.
_NOT_DATA = {"self", "train_env", "val_env", "test_env", "predict_env"}


def tuned_hyperparameters(algo: str | type, env_id: str) -> dict[str, dict[str, Any]]:
    """The hyperparameters ``algo`` ships for ``env_id``, ready to pass on.

    Returns ``{"model": {...}, "data": {...}, "trainer": {...}}``::

        hp = tuned_hyperparameters("ppo", "CartPole-v1")
        model = make_algo("ppo", **hp["model"])
        datamodule = RLEnvDataModule(train_env="CartPole-v1", **hp["data"])
        trainer = RLTrainer(**hp["trainer"])

    Args:
        algo: a registry name (``"ppo"``) or an algorithm class.
        env_id: the gymnasium id the values were tuned for. Atari ids (``"PongNoFrameskip-v4"``,
            ``"ALE/Breakout-v5"``) take the table's ``"atari"`` entry, as rl-zoo3 does.

    Raises:
        ConfigurationError: the algorithm has no tuned values for ``env_id`` (the message lists those it
            has), or an entry names an argument neither the model nor the datamodule accepts.
    """
    cls = _algo_class(algo)
    table: dict[str, dict[str, Any]] = dict(getattr(cls, "tuned_hyperparameters", {}) or {})
    env_id = tuned_key(table, env_id) or env_id
    if env_id not in table:
        import difflib

        close = difflib.get_close_matches(env_id, list(table), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        has = (
            f"It has them for: {', '.join(sorted(table))}."
            if table
            else "Its plugin ships none: set the hyperparameters yourself."
        )
        raise ConfigurationError(f"{cls.__name__} has no tuned hyperparameters for {env_id!r}.{hint} {has}")
    return split_tuned(cls, table[env_id])


def tuned_key(table: dict[str, Any], env_id: str) -> str | None:
    """The entry of ``table`` for ``env_id``: its own, else ``"atari"`` for an Atari id (rl-zoo3 tunes one
    entry for every game), else None."""
    if env_id in table:
        return env_id
    if ATARI_KEY in table and is_atari_id(env_id):
        return ATARI_KEY
    return None


def split_tuned(cls: type, values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Split one flat tuned entry into ``model``, ``data`` and ``trainer`` arguments (see above)."""
    from lit_sb3_core.engine.datamodule import RLEnvDataModule

    data_keys = set(inspect.signature(RLEnvDataModule.__init__).parameters) - _NOT_DATA
    model_keys, model_takes_any = _init_parameters(cls)
    split: dict[str, dict[str, Any]] = {"model": {}, "data": {}, "trainer": {}}
    unknown = []
    for key, value in values.items():
        if key in _TRAINER_KEYS:
            split["trainer"][_TRAINER_KEYS[key]] = int(value)
        elif key in data_keys:
            split["data"][key] = value
        elif key in model_keys or model_takes_any:
            split["model"][key] = value
        else:
            unknown.append(key)
    if unknown:
        raise ConfigurationError(
            f"The tuned hyperparameters of {cls.__name__} name {', '.join(sorted(unknown))}, which neither "
            f"{cls.__name__} nor RLEnvDataModule accepts. Fix the plugin's tuned_hyperparameters table."
        )
    return split


def _algo_class(algo: str | type) -> type:
    if isinstance(algo, type):
        return algo
    from lit_sb3_core.registry.registry import get_algo_class

    return get_algo_class(algo)


def _init_parameters(cls: type[Any]) -> tuple[set[str], bool]:
    """Names ``cls.__init__`` accepts, and whether it also takes ``**kwargs``."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    names = {p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)} - {"self"}
    return names, any(p.kind is p.VAR_KEYWORD for p in parameters)
