"""The losses and the entropy temperature that several plugins share, now in the SDK."""

from __future__ import annotations

import pytest
import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import parse_ent_coef, quantile_huber_loss


def test_quantile_huber_loss_by_hand() -> None:
    # Two quantiles (levels 0.25, 0.75) at 0 and 1; one target at 0.5.
    current = torch.tensor([[0.0, 1.0]])
    target = torch.tensor([[0.5]])
    # delta = 0.5 for the first quantile (weight |0.25 - 0| = 0.25), -0.5 for the second (|0.75 - 1| = 0.25);
    # Huber(0.5) = 0.125 each: sum over quantiles = 0.0625, mean over the batch and targets.
    assert quantile_huber_loss(current, target).item() == pytest.approx(0.0625)
    # Beyond |delta| > 1 the kernel is linear: delta = 3 at level 0.5 gives 0.5 * (3 - 0.5).
    assert quantile_huber_loss(torch.tensor([[0.0]]), torch.tensor([[3.0]])).item() == pytest.approx(1.25)


def test_quantile_huber_loss_matches_sb3_contrib() -> None:
    contrib = pytest.importorskip("sb3_contrib.common.utils")
    generator = torch.Generator().manual_seed(0)
    for current_shape, target_shape in (((8, 5), (8, 7)), ((8, 2, 5), (8, 1, 7))):
        current = torch.randn(current_shape, generator=generator) * 2
        target = torch.randn(target_shape, generator=generator) * 2
        for summed in (True, False):
            torch.testing.assert_close(
                quantile_huber_loss(current, target, sum_over_quantiles=summed),
                contrib.quantile_huber_loss(current, target, sum_over_quantiles=summed),
            )
    with pytest.raises(ValueError, match="dimensions"):
        quantile_huber_loss(torch.zeros(2, 3), torch.zeros(2, 1, 3))
    with pytest.raises(ValueError, match="same batch size"):  # not torch's broadcast error
        quantile_huber_loss(torch.zeros(4, 4), torch.zeros(3, 4))


# (current, target) shapes: one critic, TQC's critics against shared targets, and current quantiles that
# broadcast against targets per critic (the fused form's gradient then sums over the critics).
LAYOUTS = (((16, 5), (16, 7)), ((16, 2, 5), (16, 1, 7)), ((16, 1, 5), (16, 3, 7)))


@pytest.mark.parametrize("bf16", [False, True])
def test_the_fused_quantile_huber_loss_is_the_pairwise_one(bf16: bool) -> None:
    """The compiled programs' form (per-quantile value and slope, the gradient attached by a zero term) has
    the pairwise loss's value and gradient: float32 within rounding, and under bf16 autocast (the critics'
    bf16 outputs, as compile + precision="bf16-mixed" trains) within one bf16 rounding of the gradient."""
    from lit_sb3_core.nets.losses import _fused_quantile_huber_loss

    generator = torch.Generator().manual_seed(0)
    dtype = torch.bfloat16 if bf16 else torch.float32
    for current_shape, target_shape in LAYOUTS:
        current = (torch.randn(current_shape, generator=generator) * 2).to(dtype)
        target = (torch.randn(target_shape, generator=generator) * 2).to(dtype)
        levels = (torch.arange(current_shape[-1], dtype=torch.float32) + 0.5) / current_shape[-1]
        levels = levels.view(*([1] * (len(current_shape) - 1)), -1, 1)
        for summed in (True, False):

            def pairwise(
                c: torch.Tensor, target: torch.Tensor = target, summed: bool = summed
            ) -> torch.Tensor:
                return quantile_huber_loss(c, target, sum_over_quantiles=summed)

            def fused(
                c: torch.Tensor,
                target: torch.Tensor = target,
                summed: bool = summed,
                levels: torch.Tensor = levels,
            ) -> torch.Tensor:
                return _fused_quantile_huber_loss(c, target, levels, summed)

            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                grad, value = torch.func.grad_and_value(fused)(current)
                expected_grad, expected_value = torch.func.grad_and_value(pairwise)(current)
            assert value.dtype == torch.float32 and grad.dtype == dtype
            torch.testing.assert_close(value, expected_value, rtol=1e-5, atol=1e-6)
            # bf16: the pairwise loss's eager backward rounds each pair's slope to bf16 before summing them,
            # the fused one sums in float32 (as the compiled pairwise kernel did): one bf16 step apart at most.
            tolerance = {"rtol": 8e-3, "atol": 1e-4} if bf16 else {"rtol": 1e-5, "atol": 1e-7}
            torch.testing.assert_close(grad, expected_grad, **tolerance)


def test_a_constant_target_takes_no_gradient() -> None:
    """``constant_target=True``: the same loss, no gradient into the targets (eager here; compiled, the
    fused form)."""
    generator = torch.Generator().manual_seed(0)
    current = torch.randn(8, 2, 5, generator=generator, requires_grad=True)
    target = torch.randn(8, 1, 7, generator=generator, requires_grad=True)
    value = quantile_huber_loss(current, target, constant_target=True)
    torch.testing.assert_close(value, quantile_huber_loss(current, target))
    value.backward()
    assert target.grad is None and current.grad is not None


@pytest.mark.slow  # inductor compiles the loss (seconds to a minute of CPU cold)
def test_quantile_huber_loss_compiled_is_the_eager_loss(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Inside a compiled program (compile=True's updates) the loss takes its fused form with constant
    targets, else a plain sum instead of a dot product; value and gradients (the targets' too) stay the
    eager ones, every layout and both reductions, under bf16 autocast too."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    generator = torch.Generator().manual_seed(0)
    for current_shape, target_shape in LAYOUTS:
        current = torch.randn(current_shape, generator=generator) * 2
        target = torch.randn(target_shape, generator=generator) * 2
        for summed in (True, False):
            for bf16 in (False, True):
                torch._dynamo.reset()  # each case its own program (one code object, many cases)

                def loss(
                    c: torch.Tensor, target: torch.Tensor = target, summed: bool = summed
                ) -> torch.Tensor:
                    return quantile_huber_loss(c, target, sum_over_quantiles=summed, constant_target=True)

                step = torch.func.grad_and_value(loss)
                inputs = current.bfloat16() if bf16 else current
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    grad, value = torch.compile(step, fullgraph=True)(inputs)
                    eager_grad, eager_value = step(inputs)
                torch.testing.assert_close(value, eager_value, rtol=1e-5, atol=1e-6)
                tolerance = {"rtol": 8e-3, "atol": 1e-4} if bf16 else {"rtol": 1e-5, "atol": 1e-7}
                torch.testing.assert_close(grad, eager_grad, **tolerance)
            # A target that takes gradients (constant_target left False): the pairwise form, summed.
            torch._dynamo.reset()

            def both(c: torch.Tensor, t: torch.Tensor, summed: bool = summed) -> torch.Tensor:
                return quantile_huber_loss(c, t, sum_over_quantiles=summed)

            grads = torch.func.grad(both, argnums=(0, 1))
            compiled_grads = torch.compile(grads, fullgraph=True)(current, target)
            for ours, theirs in zip(compiled_grads, grads(current, target), strict=True):
                torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-7)


def test_entropy_coefficient_forms() -> None:
    assert parse_ent_coef("auto") == (True, 1.0)
    assert parse_ent_coef("auto_0.1") == (True, 0.1)
    assert parse_ent_coef(0.05) == (False, 0.05)
    assert parse_ent_coef(0) == (False, 0.0)
    for bad in (
        "auto_",
        "auto_-1",
        "auto_inf",
        "auto_nan",
        "automatic",
        -0.1,
        float("inf"),
        float("nan"),
        True,
        None,
    ):
        with pytest.raises(ConfigurationError, match="ent_coef"):
            parse_ent_coef(bad)
