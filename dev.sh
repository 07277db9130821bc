#!/usr/bin/env bash
# lit-sb3 developer entry point. Sets itself up on a fresh machine (Python 3.11 + pip), then:
#   bash dev.sh train [lit-sb3 train options]   train (PPO on CartPole-v1 by default) and evaluate
#   bash dev.sh test  [pytest options]          run the whole test suite (core and every plugin), 2 workers
#   bash dev.sh lint                            ruff (lint rules, formatting) and mypy (types) over the tree
#   bash dev.sh bench [benchmark options]       lit-sb3 beside Stable-Baselines3
#   bash dev.sh sb3-tests [--files F -k EXPR]   SB3's and sb3-contrib's own test suites, renamed, on lit-sb3;
#                                               the pass table goes into docs/sb3-migration.md
#   bash dev.sh bench-jax [benchmark options]   the same with SBX (SB3 in JAX) as a third library; SBX
#                                               and JAX (~1.7 GB) go into their own .venv-jax/, never .venv/
# Everything is installed into .venv/ inside this folder.
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
PY="$VENV/bin/python"
PLUGINS=(plugins/lit-sb3-*)

setup() {
    if [ ! -x "$PY" ]; then
        python3 -m venv "$VENV"
        "$PY" -m pip install --quiet --upgrade pip
    fi
    # torch first, keeping one that is already installed: a bare `torch` requirement would pull a
    # multi-GB CUDA build, while torch==2.13.0 resolves to the CPU build on this machine's disk.
    if ! "$PY" -c "import torch" >/dev/null 2>&1; then
        "$PY" -m pip install --quiet "torch==2.13.0"
    fi
    # Re-install the project only when a pyproject changed (editable installs follow source edits).
    local stamp="$VENV/.lit-sb3-installed" want
    want=$(cat pyproject.toml plugins/*/pyproject.toml | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        # The environment extras (Atari ROMs, MuJoCo, Box2D, envpool) are PyPI wheels: the test suite
        # exercises each, and skips those tests with the reason where an extra is missing.
        local args=(-e ".[testing,lint,benchmark,plot,tune,video,onnx,loggers,atari,mujoco,box2d,envpool]")
        for plugin in "${PLUGINS[@]}"; do args+=(-e "$plugin"); done
        "$PY" -m pip install --quiet "${args[@]}"
        echo "$want" >"$stamp"
    fi
}

# SBX's own venv: torch first (SBX depends on SB3, whose bare torch requirement would pull a CUDA build),
# then the benchmark-jax extra's requirements only (the lit-sb3 runs stay in .venv).
JAX_VENV=.venv-jax
setup_jax() {
    local py="$JAX_VENV/bin/python"
    if [ ! -x "$py" ]; then
        python3 -m venv "$JAX_VENV"
        "$py" -m pip install --quiet --upgrade pip
    fi
    if ! "$py" -c "import torch" >/dev/null 2>&1; then
        "$py" -m pip install --quiet "torch==2.13.0"
    fi
    if ! "$py" -c "import sbx, jax" >/dev/null 2>&1; then
        local requirements
        read -ra requirements <<<"$("$PY" -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["benchmark-jax"])')"
        "$py" -m pip install --quiet "${requirements[@]}"
    fi
}

command=${1:-train}
shift || true
setup
case "$command" in
    train) exec "$VENV/bin/lit-sb3" train "$@" ;;
    # Two pytest-xdist workers by default (the development machines have 2 cores): about half the wall time
    # of one process. LIT_SB3_TEST_WORKERS=0 runs in this process; a later -n in the options wins.
    test) exec "$PY" -m pytest -n "${LIT_SB3_TEST_WORKERS:-2}" "$@" ;;
    lint) "$VENV/bin/ruff" check . && "$VENV/bin/ruff" format --check . && exec "$VENV/bin/mypy" ;;
    bench) exec "$PY" benchmarks/run.py "$@" ;;
    sb3-tests) exec nice "$PY" scripts/sb3_tests.py "$@" ;;
    bench-jax) setup_jax && exec "$PY" benchmarks/run.py --libraries lit sb3 sbx --jax-python "$JAX_VENV/bin/python" "$@" ;;
    setup-jax) setup_jax ;;
    setup) ;;
    *) echo "usage: bash dev.sh {train|test|lint|bench|bench-jax|sb3-tests|setup|setup-jax} [options]" >&2; exit 2 ;;
esac
