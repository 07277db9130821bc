"""Masked categorical distributions: log-probabilities, entropy and samples agree with sb3-contrib's."""

import pytest
import torch

from lit_sb3_ppo_mask.distributions import (
    MaskableCategoricalDistribution,
    MaskableMultiCategoricalDistribution,
)


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)


def _random_masks(shape: tuple[int, ...], nvec: list[int] | None = None) -> torch.Tensor:
    masks = torch.rand(shape) < 0.5
    blocks = torch.split(masks, nvec or [shape[-1]], dim=-1)
    for block in blocks:  # at least one allowed choice per sub-action
        block[torch.arange(shape[0]), torch.randint(block.shape[-1], (shape[0],))] = True
    return masks


def test_sampling_and_mode_never_pick_masked_actions() -> None:
    logits = torch.randn(64, 7) * 3
    masks = _random_masks((64, 7))
    dist = MaskableCategoricalDistribution(logits, masks)
    samples = torch.stack([dist.sample() for _ in range(2000)])  # (2000, 64)
    assert masks.gather(1, samples.T).all()
    assert masks.gather(1, dist.mode().unsqueeze(1)).all()
    # The samples follow the softmax over the allowed actions only.
    frequencies = torch.zeros(64, 7).scatter_add_(1, samples.T, torch.ones(64, 2000)) / 2000
    expected = torch.softmax(logits.masked_fill(~masks, float("-inf")), dim=1)
    assert (frequencies - expected).abs().max() < 0.05


def test_log_prob_and_entropy_match_sb3_contrib() -> None:
    contrib = pytest.importorskip("sb3_contrib.common.maskable.distributions")
    logits = torch.randn(32, 5)
    masks = _random_masks((32, 5))
    ours = MaskableCategoricalDistribution(logits, masks)
    theirs = contrib.MaskableCategorical(logits=logits, masks=masks)
    actions = ours.sample()
    torch.testing.assert_close(ours.log_prob(actions), theirs.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), theirs.entropy())


def test_masked_distribution_is_the_renormalised_valid_softmax() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0, 4.0]]).repeat(3, 1)
    masks = torch.tensor([[True, False, True, False]]).repeat(3, 1)
    dist = MaskableCategoricalDistribution(logits, masks)
    expected = torch.softmax(torch.tensor([1.0, 3.0]), dim=0)
    probs = dist.log_prob(torch.tensor([0, 2, 1])).exp()
    torch.testing.assert_close(probs[:2], expected)
    assert probs[2].item() == 0.0
    torch.testing.assert_close(dist.entropy(), -(expected * expected.log()).sum().repeat(3))
    # One allowed action: no uncertainty at all.
    single = MaskableCategoricalDistribution(logits[:1], torch.tensor([[False, False, True, False]]))
    assert single.entropy().item() == 0.0


def test_masked_logits_get_no_gradient() -> None:
    logits = torch.randn(8, 4, requires_grad=True)
    masks = _random_masks((8, 4))
    dist = MaskableCategoricalDistribution(logits, masks)
    (dist.log_prob(dist.sample()).sum() + dist.entropy().sum()).backward()
    assert (logits.grad[~masks] == 0).all()
    assert logits.grad[masks].abs().sum() > 0


def test_no_masks_is_the_plain_categorical() -> None:
    logits = torch.randn(16, 3)
    dist = MaskableCategoricalDistribution(logits)
    reference = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    torch.testing.assert_close(dist.log_prob(actions), reference.log_prob(actions))
    torch.testing.assert_close(dist.entropy(), reference.entropy())


def test_multi_categorical_masks_each_sub_action() -> None:
    contrib = pytest.importorskip("sb3_contrib.common.maskable.distributions")
    nvec = [3, 4, 2]
    logits = torch.randn(50, sum(nvec))
    masks = _random_masks((50, sum(nvec)), nvec)
    ours = MaskableMultiCategoricalDistribution(logits, nvec, masks)
    for _ in range(20):
        actions = ours.sample()
        offsets = torch.tensor([0, 3, 7])
        assert masks.gather(1, actions + offsets).all()
    assert masks.gather(1, ours.mode() + offsets).all()
    theirs = contrib.MaskableMultiCategoricalDistribution(nvec)
    theirs.proba_distribution(logits)
    theirs.apply_masking(masks)
    torch.testing.assert_close(ours.log_prob(actions), theirs.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), theirs.entropy())
