import json
import math

import pytest

from lit_sb3_core.foundation.schedules import (
    SAMPLES,
    ConstantSchedule,
    FloatSchedule,
    LinearSchedule,
    SampledSchedule,
    constant_schedule,
    is_sampled,
    linear_schedule,
    make_schedule,
    schedule_from_json,
    schedule_to_json,
)


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
    assert make_schedule(fn).value_schedule is fn
    assert fn(0.0) == 0.5 and fn(1.0) == 1.0
    assert constant_schedule(2)(0.7) == 2.0


def test_schedules_are_sb3s_classes() -> None:
    """``model.clip_range.value_schedule.val`` reads as in SB3: every schedule is a FloatSchedule."""
    constant = make_schedule(0.2, "clip_range")
    assert isinstance(constant, FloatSchedule) and isinstance(constant.value_schedule, ConstantSchedule)
    assert constant.value_schedule.val == 0.2
    assert isinstance(make_schedule("lin_0.1").value_schedule, LinearSchedule)
    assert FloatSchedule(FloatSchedule(0.3)).value_schedule.val == 0.3


def test_a_users_schedule_is_checked_as_it_is_used() -> None:
    schedule = make_schedule(lambda p: p - 0.5, "learning_rate")
    assert schedule(1.0) == 0.5
    with pytest.raises(ValueError, match=r"learning_rate schedule .* returned -0.5 at progress_remaining=0"):
        schedule(0.0)


def test_json_round_trips() -> None:
    linear = LinearSchedule(1.0, 0.1, 0.5)
    assert schedule_to_json(0.3) == 0.3 and schedule_to_json("lin_0.1") == "lin_0.1"
    assert schedule_to_json(make_schedule(0.3)) == 0.3
    rebuilt = schedule_from_json(schedule_to_json(FloatSchedule(linear)))
    assert isinstance(rebuilt, LinearSchedule) and repr(rebuilt) == repr(linear)

    def stepped(progress: float) -> float:
        return 1e-3 if progress > 0.5 else 1e-4

    saved = schedule_to_json(stepped)
    assert is_sampled(saved) and len(saved["values"]) == SAMPLES
    assert json.loads(json.dumps(saved)) == saved
    sampled = schedule_from_json(saved)
    assert isinstance(sampled, SampledSchedule)
    for progress in (1.0, 0.9, 0.502, 0.498, 0.1, 0.0):  # exact away from the step's thousandth
        assert sampled(progress) == pytest.approx(stepped(progress))
    assert schedule_to_json(sampled) == saved


def test_callables_that_are_not_schedules_are_refused_when_saved() -> None:
    with pytest.raises(ValueError, match=r"raised ZeroDivisionError.*progress_remaining=0"):
        schedule_to_json(lambda p: 1 / p, "learning_rate")
    with pytest.raises(ValueError, match="returned 'fast'"):
        schedule_to_json(lambda p: "fast", "learning_rate")


@pytest.mark.parametrize("bad", ["lin_", "lin_abc", "fast", -1.0, math.nan, math.inf, True, None, [1]])
def test_invalid_schedules_are_refused_with_the_fix(bad: object) -> None:
    with pytest.raises(ValueError, match="learning_rate"):
        make_schedule(bad, "learning_rate")  # type: ignore[arg-type]
