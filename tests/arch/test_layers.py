"""The package layout docs/architecture.md draws, kept true: the layers exist, each opens with a docstring, a
module imports only from its own layer or below, no import circles outside cli/, no private name crosses a
module, and at most ten modules sit directly under workbench/."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workbench"

# Lowest first. A module may import from its own layer and the layers before it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("workbench", "workbench.errors", "workbench.faults", "workbench.progress",
                    "workbench._validators")),
    ("model", ("workbench.model",)),
    ("git", ("workbench.git",)),
    ("store", ("workbench.store",)),
    ("harness", ("workbench.harness",)),
    ("review", ("workbench.review",)),
    ("migrate", ("workbench.migrate",)),
    ("ops", ("workbench.ops",)),
    ("api", ("workbench.api",)),
    ("integrations", ("workbench.integrations",)),
    ("web", ("workbench.web",)),
    ("cli", ("workbench.cli",)),
]
PACKAGES = [prefix for _name, prefixes in LAYERS for prefix in prefixes if prefix.count(".") == 1
            and (PACKAGE / prefix.split(".")[1]).is_dir()]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_validators" in path.parts:
            continue
        yield module_name(path), path


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{module} is in no layer: add it to tests/arch/test_layers.py and docs/architecture.md"
    return rank


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks (each parse of ~150 modules costs seconds)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _type_only_ranges(path: Path) -> tuple[tuple[int, int], ...]:
    ranges = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            ranges.append((node.body[0].lineno, max(getattr(n, "end_lineno", node.lineno) for n in node.body)))
    return tuple(ranges)


def imports(path: Path, module: str) -> Iterator[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) for every workbench import, at any depth of the file."""
    tree = _tree(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("workbench"):
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("workbench"):
                names = [a.name for a in node.names]
                # `from workbench.store import caches` imports the module workbench.store.caches
                where = [PACKAGE.parent / (target + "." + n).replace(".", "/") for n in names]
                submodules = [n for n, w in zip(names, where, strict=True)
                              if w.with_suffix(".py").exists() or w.is_dir()]
                for sub in submodules:
                    yield target + "." + sub, [], node.lineno
                rest = [n for n in names if n not in submodules]
                if rest or not submodules:
                    yield target, rest, node.lineno


def is_type_only(path: Path, lineno: int) -> bool:
    return any(start <= lineno <= end for start, end in _type_only_ranges(path))


def test_every_package_named_in_the_architecture_doc_exists_and_opens_with_a_docstring() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`workbench/(\w+)/`", doc))
    assert named, "docs/architecture.md names no package"
    on_disk = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()} - {"_validators"}
    assert named == on_disk, f"named in docs/architecture.md but absent: {named - on_disk}; " \
                             f"present but not named: {on_disk - named}"
    for name in on_disk:
        init = ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8"))
        docstring = ast.get_docstring(init)
        assert docstring and len(docstring.split()) >= 12, f"workbench/{name}/__init__.py: say what the package owns"


def test_at_most_ten_modules_directly_under_the_package() -> None:
    top = [p.name for p in PACKAGE.glob("*.py")]
    assert len(top) <= 10, top


def test_no_module_imports_from_a_layer_above_it() -> None:
    wrong = []
    for module, path in modules():
        own = layer_of(module)
        for target, _names, line in imports(path, module):
            if is_type_only(path, line):
                continue
            if layer_of(target) > own:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {module} ({LAYERS[own][0]}) imports {target} "
                             f"({LAYERS[layer_of(target)][0]})")
    assert wrong == [], "\n".join(wrong)


def test_no_private_name_crosses_a_module() -> None:
    wrong = []
    for module, path in modules():
        for target, names, line in imports(path, module):
            for name in names:
                if name.startswith("_") and not name.startswith("__") and target != module:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: imports {target}.{name}")
    assert wrong == [], "\n".join(wrong)


def test_no_import_circles_outside_cli() -> None:
    graph: dict[str, set[str]] = {}
    known = {m for m, _p in modules()}
    for module, path in modules():
        if module.startswith("workbench.cli"):
            continue
        deps = set()
        for target, _names, line in imports(path, module):
            if is_type_only(path, line) or target.startswith("workbench.cli"):
                continue
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target != module and target in known and not module.startswith(target + "."):
                deps.add(target)
        graph[module] = deps
    # a package's __init__ is not a real dependency of its own modules
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(" → ".join(stack[stack.index(dep):] + [dep]))
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == [], "\n".join(cycles)


@pytest.mark.parametrize("module", ["workbench.model.reducer", "workbench.store.workbench"])
def test_folding_one_event_does_not_import_the_harness(module: str) -> None:
    import subprocess
    import sys

    code = f"import sys, {module}; print(any(m.startswith('workbench.harness') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
