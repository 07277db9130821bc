"""The entropy temperature alpha of maximum-entropy off-policy methods (SAC, TQC, CrossQ).

Haarnoja et al., "Soft Actor-Critic Algorithms and Applications", 2018, https://arxiv.org/abs/1812.05905:
alpha weighs the entropy bonus; learned, it follows ``min -log(alpha) * (log pi(a|s) + target_entropy)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import torch

from lit_sb3_core.engine.lightning_internals import attached_trainer
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_number
from lit_sb3_core.sdk.kept_optimizers import kept_optimizers
from lit_sb3_core.sdk.optimization import fitting

if TYPE_CHECKING:
    from typing import Protocol

    from lit_sb3_core.sdk.off_policy import OffPolicyAlgorithm

    _Algorithm = OffPolicyAlgorithm

    class _TemperaturePolicy(Protocol):
        """What the mixin needs from the policy: an actor and a critic, and room for ``log_ent_coef``."""

        actor: torch.nn.Module
        critic: torch.nn.Module
        log_ent_coef: torch.nn.Parameter
else:
    _Algorithm = object

__all__ = ["EntropyTemperature", "parse_ent_coef"]


def parse_ent_coef(ent_coef: Any) -> tuple[bool, float]:
    """``"auto"`` / ``"auto_0.1"`` -> (learned, initial value); a number -> (fixed, value)."""
    if isinstance(ent_coef, str):
        if ent_coef == "auto":
            return True, 1.0
        if ent_coef.startswith("auto_"):
            try:
                value = float(ent_coef[5:])
            except ValueError:
                value = float("nan")
            if 0 < value < float("inf"):
                return True, value
        raise ConfigurationError(
            f"ent_coef={ent_coef!r} is not valid: use 'auto' (learned, starting at 1), 'auto_<initial value>' "
            "such as 'auto_0.1', or a fixed non-negative number."
        )
    return False, check_number("ent_coef", ent_coef, minimum=0)  # finite: inf or NaN would train on NaN


class EntropyTemperature(_Algorithm):
    """Mix in before ``OffPolicyAlgorithm``: ``class SAC(EntropyTemperature, OffPolicyAlgorithm)``.

    ``ent_coef`` is learned (``"auto"``, ``"auto_<init>"``) or fixed. The learned ``log(alpha)`` is the
    policy's parameter ``log_ent_coef`` (so it travels with the weights) and has its own plain Adam beside the
    actor's and the critics' optimizers, as in SB3. The policy must have ``actor`` and ``critic`` modules.

    Call ``init_temperature(ent_coef, target_entropy)`` in ``__init__`` before ``super().__init__``; then
    ``learn_ent_coef``, ``ent_coef_init`` and (once the policy is built) ``target_entropy`` are set, and
    ``configure_optimizers`` returns ``[actor, critic]`` plus the temperature's optimizer when it is learned.
    """

    learn_ent_coef: bool
    ent_coef_init: float

    def init_temperature(self, ent_coef: str | float, target_entropy: str | float) -> None:
        """Check and keep the two constructor arguments."""
        self.learn_ent_coef, self.ent_coef_init = parse_ent_coef(ent_coef)
        if not (isinstance(target_entropy, str) and target_entropy == "auto"):
            check_number(
                "target_entropy", target_entropy, hint="Or 'auto': minus the number of action dimensions."
            )
        self.ent_coef = ent_coef
        self.target_entropy: Any = target_entropy

    def setup_model(self) -> None:
        """Target entropy from the action size; the learned log-temperature goes into the policy's weights."""
        super().setup_model()
        policy = cast("_TemperaturePolicy", self.require_policy())
        assert self.action_space is not None and self.action_space.shape is not None
        target_entropy = self.hparams.get("target_entropy", self.target_entropy)
        if target_entropy == "auto":
            self.target_entropy = float(-np.prod(self.action_space.shape))
        else:
            self.target_entropy = float(target_entropy)
        if self.learn_ent_coef:
            # Optimising log(alpha) keeps alpha positive (softlearning issue 37).
            initial = torch.log(torch.full((1,), self.ent_coef_init))
            policy.log_ent_coef = torch.nn.Parameter(initial)

    # SB3's names, as views over the policy's parameter and the attached trainer's optimizers -----------
    @property
    def log_ent_coef(self) -> torch.nn.Parameter | None:
        """The learned ``log(alpha)`` (the policy's ``log_ent_coef``); ``None`` with a fixed ``ent_coef``."""
        if not self.learn_ent_coef or self.policy is None:
            return None
        return cast("_TemperaturePolicy", self.policy).log_ent_coef

    @property
    def ent_coef_tensor(self) -> torch.Tensor:
        """alpha as a tensor: the fixed ``ent_coef``, or ``exp(log_ent_coef)`` when it is learned."""
        log_ent_coef = self.log_ent_coef
        if log_ent_coef is None:
            return torch.tensor(float(self.ent_coef_init), device=self.device)
        return torch.exp(log_ent_coef.detach())

    @property
    def ent_coef_optimizer(self) -> torch.optim.Optimizer | None:
        """The temperature's optimizer (``None`` with a fixed ``ent_coef``), from construction on, as SB3's."""
        kept = kept_optimizers(self)
        if not self.learn_ent_coef or kept is None or len(kept.optimizers) < 3:
            return None
        return kept.optimizers[2]

    @ent_coef_optimizer.setter
    def ent_coef_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        """Step ``optimizer`` for the temperature from the next update on (SB3 code may replace it)."""
        kept = kept_optimizers(self)
        if not isinstance(optimizer, torch.optim.Optimizer) or kept is None or len(kept.optimizers) < 3:
            raise ConfigurationError(
                f"ent_coef_optimizer can be replaced by a torch.optim.Optimizer over [log_ent_coef] when the "
                f"temperature is learned (ent_coef='auto'), got {optimizer!r:.80} with ent_coef={self.ent_coef!r}."
            )
        kept.replace(2, optimizer)
        trainer = attached_trainer(self)
        if trainer is not None and fitting(self):
            trainer.optimizers = kept.optimizers

    optimizer_attributes: ClassVar[tuple[str, ...]] = (
        "actor.optimizer",
        "critic.optimizer",
        "ent_coef_optimizer",
    )

    def configure_optimizers(self) -> list[torch.optim.Optimizer]:
        """Actor, critic and (when learned) temperature optimizers, in that order (SB3's
        ``model.actor.optimizer``, ``model.critic.optimizer``, ``model.ent_coef_optimizer``)."""
        policy = cast("_TemperaturePolicy", self.require_policy())
        # A critic that borrows the actor's features extractor leaves it to the actor's optimizer (SB3's).
        critic_parameters = getattr(policy.critic, "optimizer_parameters", policy.critic.parameters)
        optimizers = [
            self.make_optimizer(policy.actor.parameters()),
            self.make_optimizer(critic_parameters()),
        ]
        if self.learn_ent_coef:
            # Plain Adam for the temperature, as SB3 (the policy's optimizer_kwargs are not used).
            fused = self.device.type in ("cpu", "cuda")
            optimizers.append(torch.optim.Adam([policy.log_ent_coef], lr=self.lr_schedule(1.0), fused=fused))
        return optimizers
