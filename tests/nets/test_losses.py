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


@pytest.mark.slow  # inductor compiles the loss (seconds to a minute of CPU cold)
def test_quantile_huber_loss_compiled_is_the_eager_loss(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Inside a compiled program (compile=True's updates) the loss sums instead of taking a dot product;
    value and gradients stay the eager ones, both layouts and both reductions."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    generator = torch.Generator().manual_seed(0)
    for current_shape, target_shape in (((16, 5), (16, 7)), ((16, 2, 5), (16, 1, 7))):
        current = torch.randn(current_shape, generator=generator) * 2
        target = torch.randn(target_shape, generator=generator) * 2
        for summed in (True, False):

            def loss(c: torch.Tensor, target: torch.Tensor = target, summed: bool = summed) -> torch.Tensor:
                return quantile_huber_loss(c, target, sum_over_quantiles=summed)

            step = torch.func.grad_and_value(loss)
            grad, value = torch.compile(step, fullgraph=True)(current)
            eager_grad, eager_value = step(current)
            torch.testing.assert_close(value, eager_value, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(grad, eager_grad, rtol=1e-5, atol=1e-7)


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
