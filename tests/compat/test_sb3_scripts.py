"""Issue 16, item 7: Stable-Baselines3's and sb3-contrib's documentation examples, each a script in
``sb3_scripts/`` with ``stable_baselines3``/``sb3_contrib`` renamed ``lit_sb3`` (and, where a comment at
its top says so, a smaller budget or a bounded loop), run in a fresh Python process of its own.

A few run in the default suite; all of them run with ``-m slow`` (the LunarLander, Atari and MuJoCo ones
need the ``box2d``, ``atari`` and ``mujoco`` extras, MLflow the ``loggers`` extra). Examples that cannot
run here (other packages, a display) are listed in docs/sb3-migration.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "sb3_scripts"
# Quick ones that together cover make_vec_env, the VecEnv API, SubprocVecEnv, Monitor files and plots,
# and VecVideoRecorder.
DEFAULT = {
    "vec_envs_wrapper_class.py",
    "examples_video_recorder.py",
    "plotting_monitor.py",
    "a2c_module.py",
    "quickstart_get_env.py",  # SB3's quickstart loop over model.get_env(), callbacks need the same view
}
ALL = sorted(path.name for path in SCRIPTS.glob("*.py"))


def run_script(name: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",  # plt.show() draws nothing
        "SDL_VIDEODRIVER": "dummy",  # render_mode="human" opens no window
        "SDL_AUDIODRIVER": "dummy",
        "PYTHONWARNINGS": "ignore",
    }
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / name)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"{name} failed:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"


@pytest.mark.parametrize("name", sorted(DEFAULT))
def test_sb3_doc_example_runs(name: str, tmp_path: Path) -> None:
    run_script(name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in ALL if name not in DEFAULT])
def test_every_sb3_doc_example_runs(name: str, tmp_path: Path) -> None:
    run_script(name, tmp_path)
