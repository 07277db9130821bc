import math

import pytest

from lit_sb3_core.foundation.schedules import constant_schedule, linear_schedule, make_schedule


def test_numbers_are_constant() -> None:
    schedule = make_schedule(3e-4)
    assert schedule(1.0) == schedule(0.3) == schedule(0.0) == pytest.approx(3e-4)


def test_lin_string_decays_linearly_to_zero() -> None:
    schedule = make_schedule("lin_0.001")
    assert schedule(1.0) == pytest.approx(0.001)
    assert schedule(0.25) == pytest.approx(0.00025)
    assert schedule(0.0) == 0.0


def test_numeric_strings_and_callables() -> None:
    assert make_schedule("0.5")(0.1) == 0.5
    fn = linear_schedule(1.0, 0.5)
    assert make_schedule(fn) is fn
    assert fn(0.0) == 0.5 and fn(1.0) == 1.0
    assert constant_schedule(2)(0.7) == 2.0


@pytest.mark.parametrize("bad", ["lin_", "lin_abc", "fast", -1.0, math.nan, math.inf, True, None, [1]])
def test_invalid_schedules_are_refused_with_the_fix(bad: object) -> None:
    with pytest.raises(ValueError, match="learning_rate"):
        make_schedule(bad, "learning_rate")  # type: ignore[arg-type]
