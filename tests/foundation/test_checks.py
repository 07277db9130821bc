"""foundation/checks.py: the validators every layer uses instead of inline range checks."""

from __future__ import annotations

import numpy as np
import pytest

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import (
    check_below,
    check_int,
    check_layer_sizes,
    check_number,
    check_numbers,
    check_positive_number,
    is_int,
    is_number,
)


def test_an_exclusive_maximum_refuses_the_bound_itself() -> None:
    assert check_number("p", 0.0, minimum=0, maximum=1, exclusive_maximum=True) == 0.0
    with pytest.raises(ConfigurationError, match=r"p must be a finite number >= 0 and < 1, got 1"):
        check_number("p", 1, minimum=0, maximum=1, exclusive_maximum=True)
    assert check_number("p", 1, minimum=0, maximum=1) == 1.0  # inclusive by default


def test_an_open_interval_names_both_bounds() -> None:
    with pytest.raises(ConfigurationError, match=r"> 0 and < 1, got 0"):
        check_number("f", 0, minimum=0, maximum=1, exclusive_minimum=True, exclusive_maximum=True)


def test_integers_below_the_minimum_and_booleans_are_refused() -> None:
    assert check_int("n", 0, minimum=0) == 0
    for value in (-1, True, 1.5):
        with pytest.raises(ConfigurationError, match="n must be a non-negative integer"):
            check_int("n", value, minimum=0)


def test_a_hint_follows_the_message_and_error_picks_the_class() -> None:
    from lit_sb3_core.errors import InvalidArgumentError

    with pytest.raises(ConfigurationError, match=r"^n must be a positive integer, got 0\. Counts steps\.$"):
        check_int("n", 0, hint="Counts steps.")
    with pytest.raises(AssertionError, match=r"x must be a finite number > 0, got -1") as caught:
        check_positive_number("x", -1, error=InvalidArgumentError)
    assert isinstance(caught.value, InvalidArgumentError) and caught.value.field == "x"


def test_the_predicates_are_the_validators_definitions() -> None:
    assert is_int(3) and is_int(np.int64(3)) and is_int(0, 0) and not is_int(-1, 0)
    assert not any(is_int(v) for v in (True, 3.0, "3", None))
    assert is_number(2.5) and is_number(np.float32(1)) and is_number(0, 0) and not is_number(-0.1, 0)
    assert not any(is_number(v) for v in (float("nan"), float("inf"), False, "1", None))


def test_numbers_take_a_number_or_a_flat_list_of_finite_ones() -> None:
    assert check_numbers("sigma", 0.5).shape == ()
    np.testing.assert_array_equal(check_numbers("sigma", [0.1, 0.2], minimum=0), [0.1, 0.2])
    for bad in ([[0.1]], [0.1, float("nan")], "a", [-0.1], True):
        with pytest.raises(ConfigurationError, match=r"sigma must be a finite number or a list of finite"):
            check_numbers("sigma", bad, minimum=0)


def test_layer_sizes_are_positive_integers() -> None:
    assert check_layer_sizes("net_arch", (64, np.int64(32))) == [64, 32]
    assert check_layer_sizes("net_arch", []) == []
    for bad in ([64, 0], [64.0], 64, [True]):
        with pytest.raises(
            ConfigurationError, match=r"net_arch\['pi'\] must be a list of positive layer sizes"
        ):
            check_layer_sizes("net_arch['pi']", bad)


def test_below_is_strict_and_says_the_fix() -> None:
    check_below("drop", 2, "n_quantiles", 3)
    with pytest.raises(ConfigurationError, match=r"^drop=3 must be less than n_quantiles=3\. Drop fewer\.$"):
        check_below("drop", 3, "n_quantiles", 3, fix="Drop fewer.")
