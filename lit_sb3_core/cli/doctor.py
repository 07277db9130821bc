"""``lit-sb3 doctor``: what is installed, which plugins loaded, and what to do about those that did not.

Paste its output into a bug report: versions of Python, core, every plugin and the libraries lit-sb3 runs
on, the accelerators torch sees, and the optional packages each command needs.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import sys

__all__ = ["OPTIONAL", "run_doctor"]

# Distributions core runs on, and the optional ones with the command that needs them (and the extra).
REQUIRED = (
    "torch",
    "lightning",
    "gymnasium",
    "numpy",
    "pluggy",
    "safetensors",
    "tensorboard",
    "rich",
    "jsonargparse",
)
OPTIONAL = {
    "matplotlib": "`lit-sb3 plot`: pip install 'lit-sb3-core[plot]'",
    "optuna": "`lit-sb3 tune`: pip install 'lit-sb3-core[tune]'",
    "moviepy": "`lit-sb3 enjoy --video`: pip install 'lit-sb3-core[video]'",
    "pygame": "rendering classic-control envs (`lit-sb3 enjoy`): pip install 'lit-sb3-core[video]'",
    "onnx": "`lit-sb3 export --format onnx`: pip install 'lit-sb3-core[onnx]'",
    "onnxruntime": "running exported ONNX policies: pip install 'lit-sb3-core[onnx]'",
    "mlflow-skinny": "Lightning's MLFlowLogger: pip install 'lit-sb3-core[loggers]'",
    "wandb": "`lit-sb3 train --track`, Lightning's WandbLogger: pip install 'lit-sb3-core[loggers]'",
}


def run_doctor(args: argparse.Namespace) -> int:
    from lit_sb3_core._version import __version__
    from lit_sb3_core.cli.main import _print_table, _quietly
    from lit_sb3_core.registry.registry import list_plugins

    rows = [["python", sys.version.split()[0], platform.platform(), ""]]
    rows.append(["lit-sb3-core", __version__, "", ""])
    missing = []
    for name in REQUIRED:
        version = _version(name)
        rows.append([name, version or "missing", "", "" if version else f"pip install {name}"])
        if version is None:
            missing.append(name)
    for name, purpose in OPTIONAL.items():
        version = _version(name)
        rows.append([name, version or "not installed", "optional", "" if version else f"needed by {purpose}"])
    _print_table("Versions", ["package", "version", "", "note"], rows, "nothing")
    if "torch" not in missing:
        _print_table("Accelerators", ["device", "available", "details"], _accelerators(), "none")

    plugins = _quietly(list_plugins)
    plugin_rows = [
        [info.name, info.distribution, info.version, info.status, ", ".join(info.provides), _fix(info)]
        for info in plugins
    ]
    _print_table(
        "Plugins",
        ["name", "distribution", "version", "status", "provides", "problem / fix"],
        plugin_rows,
        "none found",
    )
    broken = [info for info in plugins if info.status in ("failed", "incompatible")]
    problems = [f"required package missing: {name}" for name in missing]
    problems += [f"plugin {info.name} {info.status}" for info in broken]
    if problems:
        print("Problems: " + "; ".join(problems) + ".")
        return 1
    print("No problems found.")
    return 0


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _fix(info: object) -> str:
    status = getattr(info, "status", "")
    error = getattr(info, "error", None) or ""
    distribution = getattr(info, "distribution", "") or "the plugin"
    if status == "incompatible":
        return f"{error} -> pip install --upgrade {distribution} lit-sb3-core"
    if status == "failed":
        return f"{error} -> reinstall {distribution}, or skip it: LIT_SB3_BLOCK_PLUGINS={getattr(info, 'name', '')}"
    if status == "blocked":
        return error or "blocked by LIT_SB3_PLUGINS / LIT_SB3_BLOCK_PLUGINS"
    return ""


def _accelerators() -> list[list[str]]:
    import torch

    rows = [["cpu", "yes", f"{torch.get_num_threads()} threads"]]
    cuda = torch.cuda.is_available()
    details = ""
    if cuda:
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        details = f"CUDA {torch.version.cuda}: " + ", ".join(names)
    elif torch.version.cuda is None:
        details = "this torch build has no CUDA support"
    rows.append(["cuda", "yes" if cuda else "no", details])
    mps = getattr(torch.backends, "mps", None)
    rows.append(["mps", "yes" if mps is not None and mps.is_available() else "no", ""])
    return rows
