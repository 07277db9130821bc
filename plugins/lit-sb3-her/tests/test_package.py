"""The package's public names, and that importing it stays cheap (classes load on first use)."""

import subprocess
import sys

import lit_sb3_her


def test_public_names_resolve() -> None:
    assert sorted(dir(lit_sb3_her)) == sorted(lit_sb3_her.__all__)
    for name in lit_sb3_her.__all__:
        assert getattr(lit_sb3_her, name).__name__ == name


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = "import sys, lit_sb3_her; print(sorted(m for m in ('torch', 'gymnasium') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
