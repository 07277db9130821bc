"""The math of BatchRenorm: warm-up as plain batch norm, clipped r/d corrections, running statistics, modes,
and sb3-contrib's BatchRenorm1d's numbers pass for pass."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lit_sb3_crossq.batch_renorm import BatchRenorm, set_training


def batch(
    n: int = 64, features: int = 5, seed: int = 0, shift: float = 3.0, scale: float = 2.0
) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return shift + scale * torch.randn(n, features, generator=generator, dtype=torch.float64)


def layer(features: int = 5, **kwargs: object) -> BatchRenorm:
    """A float64 layer with non-trivial affine parameters, so they take part in every check."""
    norm = BatchRenorm(features, **kwargs).double()  # type: ignore[arg-type]
    with torch.no_grad():
        norm.scale.copy_(torch.linspace(0.5, 1.5, features))
        norm.bias.copy_(torch.linspace(-1.0, 1.0, features))
    return norm


def test_warm_up_is_plain_batch_norm() -> None:
    """During warm-up the layer is batch norm with the unbiased batch variance (sb3-contrib's): outputs and
    gradients through the batch statistics; the running statistics are torch's BatchNorm1d's."""
    renorm = layer(warmup_steps=10)
    reference = nn.BatchNorm1d(5, eps=0.001, momentum=0.01).double()
    for seed in range(4):
        x1 = batch(seed=seed).requires_grad_(True)
        x2 = x1.detach().clone().requires_grad_(True)
        y1 = renorm(x1)
        reference(x2.detach())  # its running statistics
        y2 = (x2 - x2.mean(0)) / torch.sqrt(x2.var(0) + 0.001) * renorm.scale.detach() + renorm.bias.detach()
        torch.testing.assert_close(y1, y2)
        weights = torch.randn_like(y1)
        (y1 * weights).sum().backward()
        (y2 * weights).sum().backward()
        torch.testing.assert_close(x1.grad, x2.grad)
    torch.testing.assert_close(renorm.ra_mean, reference.running_mean)
    torch.testing.assert_close(renorm.ra_var, reference.running_var)
    assert renorm.steps.item() == 4


def test_matches_sb3_contribs_batch_renorm_through_warm_up_and_after() -> None:
    """Pass for pass, in training and eval mode: sb3-contrib's outputs, gradients and running statistics."""
    sb3_layers = pytest.importorskip("sb3_contrib.common.torch_layers")
    ours = layer(warmup_steps=2, momentum=0.2)
    theirs = sb3_layers.BatchRenorm1d(5, momentum=0.2, warmup_steps=2).double()
    theirs.load_state_dict(ours.state_dict())
    for step in range(7):
        training = step != 3  # an eval pass in between: no statistics, no step counted
        ours.train(training)
        theirs.train(training)
        # Moving statistics: from step 4 on the layers renormalize, and there r is clipped at r_max on some
        # features.
        x1 = batch(seed=step, shift=2.0 * step, scale=1.0 + step).requires_grad_(True)
        x2 = x1.detach().clone().requires_grad_(True)
        y1, y2 = ours(x1), theirs(x2)
        torch.testing.assert_close(y1, y2)
        weights = torch.randn_like(y1)
        (y1 * weights).sum().backward()
        (y2 * weights).sum().backward()
        torch.testing.assert_close(x1.grad, x2.grad)
        for name, value in theirs.state_dict().items():
            torch.testing.assert_close(ours.state_dict()[name], value, msg=lambda m, n=name: f"{n}: {m}")
    assert ours.steps.item() == 6
    torch.testing.assert_close(ours.scale.grad, theirs.scale.grad)
    torch.testing.assert_close(ours.bias.grad, theirs.bias.grad)


def test_running_statistics_follow_the_batches_with_momentum() -> None:
    norm = layer(momentum=0.1)
    x = batch()
    norm(x)
    torch.testing.assert_close(norm.ra_mean, 0.9 * torch.zeros(5, dtype=torch.float64) + 0.1 * x.mean(0))
    unbiased_var = x.var(0)
    torch.testing.assert_close(norm.ra_var, 0.9 * torch.ones(5, dtype=torch.float64) + 0.1 * unbiased_var)
    assert norm.steps.item() == 1


def test_eval_mode_normalizes_with_the_running_statistics_and_leaves_them_alone() -> None:
    norm = layer()
    with torch.no_grad():
        norm.ra_mean.copy_(torch.arange(5.0))
        norm.ra_var.copy_(torch.arange(1.0, 6.0))
    norm.eval()
    x = batch()
    expected = (x - norm.ra_mean) / torch.sqrt(norm.ra_var + 0.001) * norm.scale + norm.bias
    torch.testing.assert_close(norm(x), expected)
    # A sample's output does not depend on its batch, and a single sample works.
    torch.testing.assert_close(norm(x[:1]), expected[:1])
    torch.testing.assert_close(norm.ra_mean, torch.arange(5.0, dtype=torch.float64))
    torch.testing.assert_close(norm.ra_var, torch.arange(1.0, 6.0, dtype=torch.float64))
    assert norm.steps.item() == 0


def renormalizing(norm: BatchRenorm) -> BatchRenorm:
    """The layer past its warm-up: it renormalizes once ``steps > warmup_steps`` (sb3-contrib's count)."""
    with torch.no_grad():
        norm.steps.fill_(norm.warmup_steps + 1)
    return norm


def test_after_warm_up_the_corrections_are_clipped_and_carry_no_gradient() -> None:
    norm = renormalizing(layer(warmup_steps=0, momentum=0.01))
    # Feature 0 matches its running statistics closely (no clipping); 1 has a far larger spread (r clipped
    # at r_max = 3); 2 a far smaller one (r clipped at 1/3); 3 a far-away mean (d clipped at d_max = 5);
    # 4 a far-away mean on the other side (d clipped at -5).
    running_mean = torch.tensor([3.0, 3.0, 3.0, -20.0, 40.0], dtype=torch.float64)
    running_var = torch.tensor([4.5, 0.01, 400.0, 4.0, 4.0], dtype=torch.float64)
    with torch.no_grad():
        norm.ra_mean.copy_(running_mean)
        norm.ra_var.copy_(running_var)
    x = batch(n=128).requires_grad_(True)
    y = norm(x)

    mean, var = x.mean(0), x.var(0)
    running_std = torch.sqrt(running_var + 0.001)
    r = (torch.sqrt(var + 0.001) / running_std).detach()
    d = ((mean - running_mean) / running_std).detach()
    assert 1 / 3 < r[0] < 3 and -5 < d[0] < 5
    assert r[1] > 3 and r[2] < 1 / 3 and d[3] > 5 and d[4] < -5  # the clips below do bite
    r, d = r.clamp(1 / 3, 3), d.clamp(-5, 5)
    # Normalized with the corrected statistics mu_B - d * sigma_B / r and sigma_B^2 / r^2.
    corrected_mean, corrected_var = mean - d * var.sqrt() / r, var / r.square()
    expected = (x - corrected_mean) / torch.sqrt(corrected_var + 0.001) * norm.scale + norm.bias
    torch.testing.assert_close(y, expected)

    weights = torch.randn_like(y)
    (grad,) = torch.autograd.grad((y * weights).sum(), x)
    (expected_grad,) = torch.autograd.grad((expected * weights).sum(), x)  # r and d held constant
    torch.testing.assert_close(grad, expected_grad)
    # The running statistics moved toward this batch (the corrections used the ones from before).
    torch.testing.assert_close(norm.ra_mean, 0.99 * running_mean + 0.01 * mean.detach())


def test_unclipped_renormalization_matches_the_running_statistics() -> None:
    """Within the clips, the training output equals normalizing by the running statistics (eval mode), up
    to where eps enters (negligible here)."""
    norm = renormalizing(layer(warmup_steps=0, eps=1e-12))
    x = batch()
    with torch.no_grad():
        norm.ra_mean.copy_(x.mean(0) + 0.3)
        norm.ra_var.copy_(x.var(0) * 1.7)
    norm.eval()
    with_running_statistics = norm(x)
    norm.train()
    torch.testing.assert_close(norm(x), with_running_statistics)


def test_renormalization_starts_after_warmup_steps_plus_one_training_passes() -> None:
    """sb3-contrib's count: renormalizing once ``steps > warmup_steps``."""
    norm = layer(warmup_steps=2)
    plain = layer(warmup_steps=10**9)
    for step in range(5):
        x = batch(seed=step, shift=10.0 * step)  # moving statistics: renormalized outputs differ
        same = torch.allclose(norm(x), plain(x))
        assert same == (step <= 2), step
    assert norm.steps.item() == 5
    # Eval passes do not count toward the warm-up.
    fresh = layer(warmup_steps=1).eval()
    fresh(batch())
    assert fresh.steps.item() == 0


def test_set_training_switches_only_the_given_layers() -> None:
    first, second = BatchRenorm(3), BatchRenorm(3)
    set_training([first], False)
    assert not first.training and second.training
    set_training([first, second], True)
    assert first.training and second.training


def test_no_affine_and_bad_input() -> None:
    norm = BatchRenorm(3, affine=False)
    assert norm.scale is None and norm.bias is None and len(list(norm.parameters())) == 0
    y = norm(torch.randn(16, 3) * 4 + 1)
    torch.testing.assert_close(y.mean(0), torch.zeros(3), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match=r"\(batch, 3\)"):
        norm(torch.randn(16, 4))
    with pytest.raises(ValueError, match=r"\(batch, 3\)"):
        norm(torch.randn(3))
    with pytest.raises(ValueError, match="at least 2 samples"):
        norm(torch.randn(1, 3))
    norm.eval()
    assert norm(torch.randn(1, 3)).shape == (1, 3)  # eval mode needs no batch statistics
