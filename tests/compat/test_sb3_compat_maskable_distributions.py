"""sb3-contrib's maskable distribution objects (``lit_sb3.common.maskable.distributions``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3.common.maskable.distributions import (
    MaskableBernoulliDistribution,
    MaskableCategorical,
    MaskableCategoricalDistribution,
    MaskableMultiCategoricalDistribution,
    make_masked_proba_distribution,
)


def test_masking_zeroes_invalid_actions_and_can_be_undone() -> None:
    dist = MaskableCategorical(logits=torch.zeros(2, 4))
    dist.apply_masking(np.array([[True, False, True, False], [False, False, False, True]]))
    torch.testing.assert_close(dist.probs, torch.tensor([[0.5, 0, 0.5, 0], [0, 0, 0, 1.0]]))
    torch.testing.assert_close(dist.entropy(), torch.tensor([np.log(2), 0.0], dtype=torch.float32))
    assert set(dist.sample((50,)).flatten().tolist()) <= {0, 2, 3}
    dist.apply_masking(None)
    torch.testing.assert_close(dist.probs, torch.full((2, 4), 0.25))


def test_maskable_distribution_objects() -> None:
    torch.manual_seed(0)
    categorical = MaskableCategoricalDistribution(3)
    with pytest.raises(AttributeError, match="call proba_distribution"):
        categorical.sample()
    assert categorical.proba_distribution_net(8).out_features == 3
    categorical.proba_distribution(torch.randn(2, 3))
    categorical.apply_masking([[False, True, False], [True, True, False]])
    assert categorical.mode()[0] == 1 and categorical.sample()[1] in (0, 1)
    actions, log_prob = categorical.log_prob_from_params(torch.zeros(1, 3))
    assert actions.shape == (1,)
    torch.testing.assert_close(log_prob, torch.log(torch.full((1,), 1 / 3)))
    with pytest.raises(RuntimeError):  # the logits do not realign to (-1, 3)
        categorical.proba_distribution(torch.zeros(1, 4))

    multi = MaskableMultiCategoricalDistribution([2, 3])
    with pytest.raises(AssertionError, match="call proba_distribution"):
        multi.entropy()
    multi.proba_distribution(torch.zeros(1, 5))
    multi.apply_masking(np.array([True, False, True, True, False]))
    assert multi.mode().tolist() == [[0, 0]]
    torch.testing.assert_close(multi.entropy(), torch.tensor([np.log(2)], dtype=torch.float32))
    torch.testing.assert_close(
        multi.log_prob(torch.tensor([[0, 1]])), torch.tensor([np.log(0.5)], dtype=torch.float32)
    )

    bits = MaskableBernoulliDistribution(2).proba_distribution(torch.zeros(1, 4))
    bits.apply_masking([False, True, True, True])  # bit 0 must be 1
    assert len(bits.distributions) == 2 and bits.sample()[0, 0] == 1


def test_make_masked_proba_distribution() -> None:
    assert isinstance(make_masked_proba_distribution(spaces.Discrete(3)), MaskableCategoricalDistribution)
    multi = make_masked_proba_distribution(spaces.MultiDiscrete([2, 4]))
    assert isinstance(multi, MaskableMultiCategoricalDistribution) and multi.action_dims == [2, 4]
    assert isinstance(make_masked_proba_distribution(spaces.MultiBinary(3)), MaskableBernoulliDistribution)
    with pytest.raises(NotImplementedError, match="Box"):
        make_masked_proba_distribution(spaces.Box(-1, 1, (2,)))
