"""The model's optimizers, made once per policy, and the names SB3 code reaches them by.

SB3 builds its optimizers with the policy and keeps them for the model's life: ``model.policy.optimizer``
(PPO, A2C, DQN, QR-DQN, TRPO, ...), ``model.actor.optimizer`` and ``model.critic.optimizer`` (SAC, TD3,
DDPG, TQC, CrossQ) and ``model.ent_coef_optimizer`` exist right after construction, every ``learn`` steps
the same ones (their Adam moments carry over), and code reads or changes their ``param_groups`` or
replaces them.

lit-sb3 algorithms describe their optimizers in Lightning's ``configure_optimizers``. ``keeps_optimizers``
wraps it (RLAlgorithm does, for every subclass that defines it): the first call (when the policy is built)
makes them, and every later call (Lightning's, at each fit) returns the same objects, so the optimizers
Lightning steps are the ones SB3's names show. ``KeptOptimizers`` puts them under those names (the
algorithm's ``optimizer_attributes``: ``"policy.optimizer"`` by default) and reads the names back before
each fit and each Lightning batch: an optimizer assigned there (``model.policy.optimizer =
torch.optim.Adam(...)``) replaces the one it names from then on, as in SB3. The learning rate is set from
the schedule before every update (``update_learning_rate``, SB3's ``_update_learning_rate``), so a
``param_groups[0]["lr"]`` written by hand lasts until the next update, as in SB3; other settings of the
param groups (``weight_decay``, ``betas``) stay.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from lit_sb3_core.errors import ConfigurationError

__all__ = ["KeptOptimizers", "keeps_optimizers", "kept_optimizers", "load_optimizer_states"]

_KEPT = "_kept_optimizers"
_BUILDING = "_building_optimizers"


def kept_optimizers(algorithm: Any) -> KeptOptimizers | None:
    """The algorithm's kept optimizers, or None before they are made (or after the policy was replaced)."""
    kept: KeptOptimizers | None = algorithm.__dict__.get(_KEPT)
    if kept is None or kept.policy is not algorithm.__dict__["_modules"].get("policy"):
        return None
    return kept


def keeps_optimizers(factory: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``configure_optimizers`` that makes the optimizers once per policy and returns them on every call."""
    if getattr(factory, "keeps_optimizers", False):
        return factory

    @functools.wraps(factory)
    def configure_optimizers(self: Any) -> Any:
        kept = kept_optimizers(self)
        if kept is not None:
            kept.read_names(self)
            return kept.configured
        if self.__dict__.get(_BUILDING):  # an override calling super(): the outermost call keeps the result
            return factory(self)
        self.__dict__[_BUILDING] = True
        try:
            configured = factory(self)
        finally:
            self.__dict__[_BUILDING] = False
        self.__dict__[_KEPT] = KeptOptimizers(self, configured)
        return configured

    configure_optimizers.__dict__["keeps_optimizers"] = True
    return configure_optimizers


class KeptOptimizers:
    """What ``configure_optimizers`` returned for one policy, and SB3's names for its optimizers.

    Args:
        algorithm: the algorithm the optimizers belong to.
        configured: ``configure_optimizers``'s result: an optimizer, a list or tuple of them, or anything else
            Lightning takes (then no SB3 names are given).
    """

    def __init__(self, algorithm: Any, configured: Any) -> None:
        self.policy = algorithm.__dict__["_modules"].get("policy")
        self.configured = configured
        self.names: tuple[str, ...] = tuple(getattr(algorithm, "optimizer_attributes", ()))
        self.read_names(algorithm)

    @property
    def optimizers(self) -> list[torch.optim.Optimizer]:
        """The optimizers, in ``configure_optimizers``'s order (empty for a result of another shape)."""
        configured = self.configured
        if isinstance(configured, torch.optim.Optimizer):
            return [configured]
        if isinstance(configured, (list, tuple)) and all(
            isinstance(o, torch.optim.Optimizer) for o in configured
        ):
            return list(configured)
        return []

    def replace(self, index: int, optimizer: torch.optim.Optimizer) -> None:
        """Use ``optimizer`` in place of the ``index``-th optimizer from now on."""
        if isinstance(self.configured, torch.optim.Optimizer):
            self.configured = optimizer
        else:
            items = list(self.configured)
            items[index] = optimizer
            self.configured = type(self.configured)(items)

    def read_names(self, algorithm: Any) -> bool:
        """Show each optimizer under its SB3 name, taking in any optimizer assigned there since; True when one
        was. A name holding something that is not an optimizer is refused (SB3 would fail at its next update)."""
        optimizers = self.optimizers
        changed = False
        for index, (name, current) in enumerate(zip(self.names, optimizers)):
            owner_path, _, attribute = name.rpartition(".")
            if not owner_path:
                continue  # an attribute of the algorithm itself: a property over this object (ent_coef_optimizer)
            owner = _resolve(algorithm, owner_path)
            if owner is None:
                continue
            shown = owner.__dict__.get(attribute)
            if shown is current:
                continue
            if shown is None and attribute not in owner.__dict__:
                object.__setattr__(owner, attribute, current)
            elif isinstance(shown, torch.optim.Optimizer):
                self.replace(index, shown)  # assigned by the user (or built by an SB3-style policy's _build)
                changed = True
            else:
                raise ConfigurationError(
                    f"model.{name} is {shown!r:.80}, not a torch.optim.Optimizer: assign an optimizer over the "
                    f"parameters it trains, or choose the class with policy_kwargs={{'optimizer_class': ..., "
                    "'optimizer_kwargs': {...}}}."
                )
        return changed


def _resolve(algorithm: Any, path: str) -> Any:
    """``algorithm.<path>`` (``"policy"``, ``"actor"``), or None when the model has no such part."""
    current = algorithm
    for part in path.split("."):
        try:
            current = getattr(current, part)
        except AttributeError:
            return None
        if current is None:
            return None
    return current


def load_optimizer_states(
    algorithm: Any, optimizers: Sequence[Any], states: Sequence[dict[str, Any]]
) -> None:
    """Load saved states into ``optimizers``, in order.

    A state laid out for other parameters (an optimizer replaced before saving, such as SB3 < 2.4's DQN
    over the target network too) cannot continue: that optimizer starts fresh, with a warning, as SB3
    warns when it loads such a file.
    """
    for index, (optimizer, state) in enumerate(zip(optimizers, states)):
        try:
            optimizer.load_state_dict(state)
        except ValueError as exc:
            warnings.warn(
                f"{type(algorithm).__name__}'s optimizer {index} starts with a fresh state: the saved one does not "
                f"fit its parameters ({exc}). Its weights are loaded; only the optimizer's moments start over.",
                UserWarning,
                stacklevel=3,
            )
