"""A fresh virtual environment with lit-sb3-core (and PPO) really installed, for plugin-author tests.

Building one from scratch would download gigabytes (torch), so the venv borrows the *third-party*
packages of the interpreter running the tests: a folder of symbolic links to everything in its
site-packages except lit-sb3's own distributions and editable-install hooks, appended to the venv's
``sys.path`` by a ``.pth`` file. lit-sb3-core, lit-sb3-ppo and whatever a test installs are then
installed into the venv by pip, offline (``--no-index --no-build-isolation``), from copies of the
sources, so nothing is written into the repository and only their own entry points register them.

One venv is built per test session (``shared_plugin_venv``) and reused by every module that asks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO_ROOT", "PluginVenv", "copy_project", "shared_plugin_venv"]

REPO_ROOT = Path(__file__).resolve().parents[1]
OFFLINE = ("--no-index", "--no-build-isolation", "--disable-pip-version-check", "--quiet")
_IGNORE = shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "dist", ".venv", ".pytest_cache")
_OWN = ("lit_sb3", "lit-sb3", "__editable__")  # site-packages entries the venv must not borrow


def copy_project(source: Path, destination: Path) -> Path:
    """Copy a project folder without build leftovers (egg-info, caches, build/, dist/)."""
    shutil.copytree(source, destination, ignore=_IGNORE)
    return destination


def _copy_core(destination: Path) -> Path:
    destination.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, destination / name)
    for package in ("lit_sb3_core", "lit_sb3"):
        shutil.copytree(REPO_ROOT / package, destination / package, ignore=_IGNORE)
    return destination


@dataclass
class PluginVenv:
    """A virtual environment under ``root`` and the helpers to run things in it."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / ("Scripts" if os.name == "nt" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if os.name == "nt" else "python")

    def env(self) -> dict[str, str]:
        """The environment of a shell in the activated venv, without lit-sb3 plugin selection variables."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LIT_SB3_", "PYTHON", "PIP_"))}
        env.update(
            VIRTUAL_ENV=str(self.root),
            PATH=os.pathsep.join([str(self.bin), env.get("PATH", "")]),
            PYTHONNOUSERSITE="1",
            PYTHONDONTWRITEBYTECODE="1",
            OMP_NUM_THREADS="1",  # small networks train fastest on one thread, and CI has two cores
        )
        return env

    def run(
        self,
        args: list[str] | str,
        cwd: Path,
        timeout: float = 300,
        shell: bool = False,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command (a bash line with ``shell=True``) in the venv; fail with its output if it fails."""
        done = subprocess.run(
            args,
            cwd=cwd,
            env={**self.env(), **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            shell=shell,
            check=False,
            executable="/bin/bash" if shell else None,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{args!r} failed with exit code {done.returncode}\n--- stdout\n{done.stdout[-6000:]}\n"
                f"--- stderr\n{done.stderr[-6000:]}"
            )
        return done

    def python_code(self, code: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.run([str(self.python), "-c", code], cwd=cwd, timeout=timeout)

    def pip_install(self, *projects: Path, editable: bool = False, cwd: Path | None = None) -> None:
        """Install local projects offline, their dependencies checked against what the venv has."""
        args = [str(self.python), "-m", "pip", "install", *OFFLINE]
        for project in projects:
            args += ["-e", str(project)] if editable else [str(project)]
        self.run(args, cwd=cwd or self.root, timeout=600)

    def site_packages(self) -> Path:
        out = self.python_code("import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=self.root)
        return Path(out.stdout.strip())


def create_plugin_venv(root: Path) -> PluginVenv:
    """A venv with the test interpreter's third-party packages and real installs of core and PPO."""
    venv = PluginVenv(root / "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv.root)], check=True)
    borrowed = root / "borrowed-site-packages"
    borrowed.mkdir()
    source = Path(sysconfig.get_paths()["purelib"])
    for entry in source.iterdir():
        if entry.name.startswith(_OWN) or entry.suffix == ".pth" or entry.name == "__pycache__":
            continue
        (borrowed / entry.name).symlink_to(entry)
    (venv.site_packages() / "_borrowed_packages.pth").write_text(f"{borrowed}\n")
    sources = root / "src"
    venv.pip_install(
        _copy_core(sources / "lit-sb3-core"),
        copy_project(REPO_ROOT / "plugins" / "lit-sb3-ppo", sources / "lit-sb3-ppo"),
    )
    return venv


_venvs: dict[str, PluginVenv] = {}


def shared_plugin_venv(tmp_path_factory: object) -> PluginVenv:
    """The session's plugin venv, built on first use (``tmp_path_factory`` is pytest's)."""
    if "shared" not in _venvs:
        root = tmp_path_factory.mktemp("plugin-venv")  # type: ignore[attr-defined]
        _venvs["shared"] = create_plugin_venv(root)
    return _venvs["shared"]
