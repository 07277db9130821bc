"""Options that count things (episodes, envs, trials, threads, smoothing points) share one check,
``cli.common.positive_int_option``, worded as the library's validators are."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit_sb3_core.cli.main import main


@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_evaluate_refuses_a_count_that_is_not_positive_in_its_usage_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["evaluate", str(tmp_path / "model.zip"), "--env", "CartPole-v1", "--episodes", value])
    assert exited.value.code == 2
    shown = repr(value) if value == "two" else value
    assert (
        f"argument --episodes: the value must be a positive integer, got {shown}." in capsys.readouterr().err
    )


def test_plot_refuses_smooth_zero_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(tmp_path), "--smooth", "0"]) == 2
    assert "lit-sb3 plot: error: --smooth must be a positive integer, got 0." in capsys.readouterr().err
