"""The core's layers import one way only (docs/architecture.md), and no core modules import each other in a
circle. Every import counts: module level, inside functions and under ``TYPE_CHECKING``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "lit_sb3_core"

# A module may import from its own layer and the layers below it, never from a layer above.
LAYERS: dict[str, int] = {
    "lit_sb3_core._version": 0,
    "lit_sb3_core._legacy_paths": 0,
    "lit_sb3_core.errors": 0,
    "lit_sb3_core.foundation": 0,
    "lit_sb3_core.hookspecs": 1,
    "lit_sb3_core.registry": 1,
    "lit_sb3_core.nets": 2,
    "lit_sb3_core.data": 2,
    "lit_sb3_core.envs": 3,
    # SB3's VecEnv API and its views sit with the env stack (no torch, no Lightning), so that the stack
    # takes an SB3 VecEnv as an env source; the rest of sb3/ (SB3 files, logger, the SB3 parts of
    # RLAlgorithm) sits above the engine, below the SDK.
    "lit_sb3_core.sb3.vec_env": 3,
    "lit_sb3_core.sb3.vec_env_views": 3,
    "lit_sb3_core.engine": 4,
    "lit_sb3_core.sb3": 5,
    "lit_sb3_core.sdk": 6,
    "lit_sb3_core.cli": 7,
    "lit_sb3_core.testing": 7,
    "lit_sb3_core.__main__": 7,
    # The package's __init__: the user API, lazy exports (strings) of every layer. The CLI and the
    # conformance kit use the library as a user does, through it.
    "lit_sb3_core": 7,
}
LAYER_NAMES = [
    "foundation",
    "registry",
    "nets / data",
    "envs (+ sb3 VecEnv views)",
    "engine",
    "sb3",
    "sdk",
    "cli / testing / user API",
]
# Sibling layers that must stay independent of each other.
INDEPENDENT = [("lit_sb3_core.nets", "lit_sb3_core.data"), ("lit_sb3_core.cli", "lit_sb3_core.testing")]
# Packages that must not import Lightning (async env workers import them; see DEVELOPERS.md).
NO_LIGHTNING = ["lit_sb3_core.envs", "lit_sb3_core.sb3.vec_env", "lit_sb3_core.sb3.vec_env_views"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    """The longest key of LAYERS that ``module`` is or lies under."""
    candidates = [key for key in LAYERS if module == key or module.startswith(key + ".")]
    assert candidates, f"{module} belongs to no layer: add it to LAYERS and docs/architecture.md"
    return max(candidates, key=len)


def core_imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported core module) for every import statement in the file, wherever it stands."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # "from lit_sb3_core.nets import torch_layers" imports the submodule; other names come from
            # the module itself
            submodules = [f"{module}.{alias.name}" for alias in node.names]
            names = [n for n in submodules if _is_module(n)]
            if len(names) < len(submodules):
                names.append(module)
        else:
            continue
        found.extend((node.lineno, name) for name in names if name.split(".")[0] == "lit_sb3_core")
    return found


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (CORE.parent / relative).with_suffix(".py").exists() or (
        CORE.parent / relative / "__init__.py"
    ).exists()


SOURCES = sorted(CORE.rglob("*.py"))
GRAPH = {module_name(path): {name for _, name in core_imports(path)} for path in SOURCES}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CORE.parent)))
def test_imports_point_down_the_layers(path: Path) -> None:
    importer = module_name(path)
    own = layer_of(importer)
    wrong = []
    for line, imported in core_imports(path):
        target = layer_of(imported)
        if imported == importer:
            continue
        if LAYERS[target] > LAYERS[own]:
            wrong.append(
                f"line {line}: {imported} is in layer {LAYER_NAMES[LAYERS[target]]!r}, above "
                f"{LAYER_NAMES[LAYERS[own]]!r}"
            )
        for a, b in INDEPENDENT:
            if {own, target} == {a, b}:
                wrong.append(f"line {line}: {imported} ({target} and {own} must not import each other)")
    assert not wrong, f"{importer} imports upward:\n" + "\n".join(wrong)


def test_no_import_cycles() -> None:
    """Depth-first search over the module graph; any back edge is a cycle."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for imported in sorted(GRAPH.get(module, ())):
            if imported == module or imported not in GRAPH:
                continue
            if state.get(imported) == 1:
                cycles.append([*stack[stack.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*stack, imported])
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_the_checker_sees_imports_inside_functions_and_type_checking_blocks(tmp_path: Path) -> None:
    source = CORE / "foundation" / "_probe_for_test.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from lit_sb3_core.engine.trainer import RLTrainer\n"
        "def f():\n    from lit_sb3_core.sdk import algorithm\n    import lit_sb3_core.nets.torch_layers\n"
    )
    try:
        imported = {name for _, name in core_imports(source)}
    finally:
        source.unlink()
    assert imported == {
        "lit_sb3_core.engine.trainer",
        "lit_sb3_core.sdk.algorithm",
        "lit_sb3_core.nets.torch_layers",
    }


@pytest.mark.parametrize(
    "path",
    [p for p in SOURCES if any(module_name(p).startswith(key) for key in NO_LIGHTNING)],
    ids=lambda p: str(p.relative_to(CORE.parent)),
)
def test_the_env_stack_imports_no_lightning(path: Path) -> None:
    """envs/ (and SB3's VecEnv views beside it) run in async env workers, which must not pay for Lightning."""
    tree = ast.parse(path.read_text(), filename=str(path))
    heavy = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            heavy += [
                (node.lineno, a.name) for a in node.names if a.name.split(".")[0] in ("lightning", "torch")
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in ("lightning", "torch"):
                heavy.append((node.lineno, node.module))
    assert not heavy, f"{module_name(path)} imports {heavy}: the env stack stays free of torch and Lightning"


def test_no_two_core_modules_share_a_basename() -> None:
    """A basename names one module, so a traceback, a grep or ``-k`` points at one file."""
    by_name: dict[str, list[str]] = {}
    for path in SOURCES:
        if path.name != "__init__.py":
            by_name.setdefault(path.stem, []).append(module_name(path))
    shared = {name: modules for name, modules in by_name.items() if len(modules) > 1}
    assert not shared, f"module basenames used twice: {shared}"


def test_every_package_of_the_map_exists() -> None:
    for key in LAYERS:
        assert _is_module(key), f"LAYERS names {key}, which is no module or package"


# The facade lit_sb3/ names SB3's modules over the core: it imports the core's public surface, the SB3 room
# (sb3/), and the building blocks SB3 names module for module (common.policies, common.torch_layers,
# common.distributions, common.preprocessing, common.env_util, common.running_mean_std, ...). It never
# reaches into the Lightning engine, the CLI, the conformance kits, the SDK's implementation modules or
# the registry's internals.
FACADE = CORE.parent / "lit_sb3"
FACADE_MAY_IMPORT = {
    "lit_sb3_core",
    "lit_sb3_core.sdk",
    "lit_sb3_core.errors",
    "lit_sb3_core.hookspecs",
    "lit_sb3_core._version",
    "lit_sb3_core.registry.registry",  # DESIGN.md §3: the registry's functions
}
FACADE_MAY_IMPORT_UNDER = [
    "lit_sb3_core.sb3",
    "lit_sb3_core.envs",
    "lit_sb3_core.nets",
    "lit_sb3_core.data",
    "lit_sb3_core.foundation",
]


@pytest.mark.parametrize("path", sorted(FACADE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE.parent)))
def test_the_facade_imports_only_the_public_surface_and_sb3(path: Path) -> None:
    wrong = [
        f"line {line}: {imported}"
        for line, imported in core_imports(path)
        if imported not in FACADE_MAY_IMPORT
        and not any(imported == key or imported.startswith(key + ".") for key in FACADE_MAY_IMPORT_UNDER)
    ]
    assert not wrong, f"{path.relative_to(CORE.parent)} imports core internals:\n" + "\n".join(wrong)


ARCHITECTURE_DOC = CORE.parent / "docs" / "architecture.md"


def test_the_architecture_doc_maps_every_module_to_its_layer() -> None:
    """docs/architecture.md's module map lists each core module once, in the layer the import rule gives it,
    and its rows go up the layers in order; a module added, moved or removed must be drawn there too."""
    text = ARCHITECTURE_DOC.read_text()
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line.split("|")[2]]
    listed: list[str] = []
    layers_in_order = []
    for row in rows:
        layer, package, modules = (cell.strip() for cell in row.strip("|").split("|"))
        layers_in_order.append(int(layer))
        package = package.strip("`").rstrip("/")
        for module in modules.replace("`", " ").split():
            if package == "lit_sb3_core":
                name = "lit_sb3_core" if module == "__init__" else f"lit_sb3_core.{module}"
            else:
                name = f"lit_sb3_core.{package}.{module}"
            listed.append(name)
            assert LAYERS[layer_of(name)] == int(layer), f"the module map puts {name} in layer {layer}"
    assert layers_in_order == sorted(layers_in_order), "the module map's rows must go up the layers"
    on_disk = [module_name(p) for p in SOURCES if p.name != "__init__.py" or module_name(p) == "lit_sb3_core"]
    assert sorted(listed) == sorted(set(listed)), "a module is listed twice in the module map"
    assert sorted(listed) == sorted(on_disk), (
        f"docs/architecture.md's module map differs from the code: missing {sorted(set(on_disk) - set(listed))}, "
        f"gone {sorted(set(listed) - set(on_disk))}"
    )
