"""gSDE exploration for off-policy actors (SAC, TQC, CrossQ): when the exploration matrices are drawn.

Generalized State-Dependent Exploration (Raffin et al., "Smooth Exploration for Robotic Reinforcement
Learning", 2021, https://arxiv.org/abs/2005.05719) makes the exploration noise ``latent(s) @ W``, with a
random matrix ``W ~ N(0, std^2)`` and a learned, state-independent ``log std`` (the actor's
``SquashedGaussianActor(use_sde=True)``). This mixin owns the schedule of ``W`` as SB3's off-policy
algorithms have it: drawn again at the start of every ``train_freq`` chunk of collection, every
``sde_sample_freq`` steps within a chunk, and, by the algorithm's ``train_on_buffer``, before every gradient
step (``reset_actor_noise()``, with gradients enabled: the actor loss differentiates through the draw).
With ``use_sde_at_warmup`` the ``learning_starts`` warm-up steps come from the gSDE policy instead of
uniform random actions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_bool, check_int
from lit_sb3_core.sdk.off_policy import OffPolicyAlgorithm

if TYPE_CHECKING:
    _Algorithm = OffPolicyAlgorithm
else:
    _Algorithm = object

__all__ = ["StateDependentExploration"]


class StateDependentExploration(_Algorithm):
    """Mix in before ``OffPolicyAlgorithm``: ``class SAC(EntropyTemperature, StateDependentExploration,
    OffPolicyAlgorithm)``; the policy's ``actor`` needs ``reset_noise(n)`` and ``get_std()`` with gSDE.

    Call ``init_sde(use_sde, sde_sample_freq, use_sde_at_warmup)`` in ``__init__`` before
    ``super().__init__``. The policy is then built with the algorithm's ``use_sde``, which overrides one in
    ``policy_kwargs`` (SB3 writes the algorithm's into the policy's arguments; the algorithm draws the noise).
    ``train_on_buffer`` must call ``reset_actor_noise()`` before it samples from the actor in each
    gradient step.
    """

    plain_attributes: ClassVar[frozenset[str]] = OffPolicyAlgorithm.plain_attributes | {"_sde_steps"}
    use_sde: bool
    sde_sample_freq: int
    use_sde_at_warmup: bool

    def init_sde(self, use_sde: bool, sde_sample_freq: int, use_sde_at_warmup: bool) -> None:
        """Check and keep the gSDE settings (``sde_sample_freq=-1``: once per ``train_freq`` chunk)."""
        check_bool("use_sde", use_sde)
        check_bool("use_sde_at_warmup", use_sde_at_warmup)
        check_int("sde_sample_freq", sde_sample_freq, minimum=-1)
        if use_sde_at_warmup and not use_sde:
            raise ConfigurationError(
                "use_sde_at_warmup=True acts with the gSDE policy during the warm-up, which needs "
                "use_sde=True too: pass use_sde=True, or drop use_sde_at_warmup."
            )
        self.use_sde = use_sde
        self.sde_sample_freq = int(sde_sample_freq)
        self.use_sde_at_warmup = use_sde_at_warmup
        self._sde_steps = 0

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        """The policy, built with the algorithm's ``use_sde`` as SB3 does: SB3's off-policy algorithms write
        their ``use_sde`` into ``policy_kwargs``, so a ``use_sde`` there is accepted and overridden."""
        policy_kwargs = {key: value for key, value in policy_kwargs.items() if key != "use_sde"}
        if self.use_sde:
            policy_kwargs["use_sde"] = True
        return super().make_policy(policy_cls, policy_kwargs)

    def reset_actor_noise(self, n_envs: int = 1) -> None:
        """Draw new gSDE exploration matrices for the actor (one per env); does nothing without ``use_sde``.

        Collection calls it with the number of environments; ``train_on_buffer`` calls it with 1 before
        every gradient step, with gradients enabled.
        """
        if self.use_sde:
            self._gsde_actor().reset_noise(n_envs)

    @torch.inference_mode()
    def collect_chunk(self) -> int:
        """One ``train_freq`` chunk; with gSDE the noise is drawn afresh at its start (SB3's collect_rollouts)."""
        if self.use_sde:
            assert self.vector_env is not None
            self._sde_steps = 0
            self.reset_actor_noise(self.vector_env.num_envs)
            if self.sde_sample_freq > 0:
                # SB3 draws again before the chunk's first step (step 0 is a multiple of the frequency): the
                # second draw's matrices, and torch's generator after it, are the ones the chunk uses.
                self.reset_actor_noise(self.vector_env.num_envs)
        return super().collect_chunk()

    def on_env_step(self) -> None:
        """With gSDE and ``sde_sample_freq > 0``: redraw the noise every ``sde_sample_freq`` steps of a chunk,
        for the chunk's next step (none after its last step of a ``train_freq`` in steps: SB3 draws before a
        step, and the next chunk starts with its own draws)."""
        super().on_env_step()
        if self.use_sde and self.sde_sample_freq > 0:
            self._sde_steps += 1
            frequency, unit = self.train_freq
            chunk_over = unit == "step" and self._sde_steps >= frequency
            if self._sde_steps % self.sde_sample_freq == 0 and not chunk_over:
                assert self.vector_env is not None
                self.reset_actor_noise(self.vector_env.num_envs)

    def random_warmup_steps(self) -> int:
        """``learning_starts``, or 0 with ``use_sde_at_warmup`` (the gSDE policy acts from the first step)."""
        return 0 if self.use_sde_at_warmup else self.learning_starts

    def collect_metrics(self) -> dict[str, float]:
        """With gSDE, also ``train/std``: the mean std of the exploration matrix entries (SB3's)."""
        metrics = super().collect_metrics()
        if self.use_sde:
            metrics["train/std"] = float(self._gsde_actor().get_std().detach().mean())
        return metrics

    def _gsde_actor(self) -> Any:
        """The policy's actor (a ``SquashedGaussianActor(use_sde=True)`` or one with its methods)."""
        return self.require_policy().actor
