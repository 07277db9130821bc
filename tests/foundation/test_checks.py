"""foundation/checks.py: the validators every layer uses instead of inline range checks."""

from __future__ import annotations

import pytest

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_int, check_number


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
