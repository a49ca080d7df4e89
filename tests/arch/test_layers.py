"""The package layout docs/architecture.md draws, kept true: the layers exist, each opens with a docstring, a
module imports only from its own layer or below, no import circles (lazy and type-only imports counted, cli/ and
bench/ included), no private name crosses a module, and at most ten modules sit directly under workbench/."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workbench"
BENCH = ROOT / "bench"

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


def bench_imports(path: Path) -> Iterator[tuple[str, int]]:
    """(bench module, line) for each import of a sibling: bench/ is a folder of scripts that import each other by
    bare name (`import run as R`, `from scale import x`), its own directory first on sys.path."""
    siblings = {p.stem for p in BENCH.glob("*.py")}
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in siblings:
                    yield "bench." + alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in siblings:
            yield "bench." + node.module, node.lineno


@functools.cache
def import_graph(typed: bool = True) -> dict[str, set[str]]:
    """Module → the modules it imports, every import counted: at the top, inside a function (lazy) and under
    TYPE_CHECKING alike — each is a place where one module needs the other (`typed=False`: the ones under
    TYPE_CHECKING left out: what runs). A package's __init__ is not counted as a dependency of its own modules."""
    paths = dict(modules())
    paths.update(("bench." + p.stem, p) for p in sorted(BENCH.glob("*.py")))
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        deps: set[str] = set()
        targets = ([t for t, _n, line in imports(path, module) if typed or not is_type_only(path, line)]
                   if module.startswith("workbench")
                   else [t for t, _l in bench_imports(path)] + [t for t, _n, _l in imports(path, "bench")])
        for target in targets:
            while target not in paths and "." in target:
                target = target.rpartition(".")[0]
            if target != module and target in paths and not module.startswith(target + "."):
                deps.add(target)
        graph[module] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, deps = work[-1]
            for dep in deps:
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(sorted(graph.get(dep, ())))))
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(sorted(members))
    return sorted(found)


def describe(members: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(members)
    edges = "; ".join(f"{m} → {', '.join(sorted(graph[m] & inside))}" for m in members)
    return f"circle of {len(members)}: {', '.join(members)} ({edges})"


def test_no_circle_at_run_time() -> None:
    """No two modules need each other to run, lazy imports counted: workbench/ (cli/ too) and bench/."""
    graph = import_graph(typed=False)
    wrong = [describe(c, graph) for c in circles(graph)]
    assert wrong == [], "import circles (move the shared piece down, or pass the collaborator in):\n" + \
        "\n".join(wrong)


def test_no_import_circles() -> None:
    """Type-only imports counted too, with no exception: a stage names the `StageContext` Protocol
    (store/stagecontext.py), not the `Transaction` that runs it, nor the `Workbench` that opens that."""
    graph = import_graph()
    wrong = [describe(c, graph) for c in circles(graph)]
    assert wrong == [], "import circles (move the shared piece down, or pass the collaborator in):\n" + \
        "\n".join(wrong)


def test_the_circle_check_finds_a_circle_and_names_its_members() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert describe(["a", "b", "c"], graph) == "circle of 3: a, b, c (a → b; b → c; c → a)"
    real = import_graph()
    assert "bench.run" in real
    assert "workbench.model.session" in real["workbench.model.reducer"]  # imported inside a function


@pytest.mark.parametrize("module", ["workbench.model.reducer", "workbench.store.workbench"])
def test_folding_one_event_does_not_import_the_harness(module: str) -> None:
    import subprocess
    import sys

    code = f"import sys, {module}; print(any(m.startswith('workbench.harness') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
