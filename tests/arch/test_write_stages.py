"""The write path is a declared pipeline (workbench/store/pipeline.py), kept true: docs/architecture.md draws
exactly the declaration, each stage is a module of workbench/store/stages/ that imports no other stage, every
stage module is declared, and a transaction runs the stages in the declared order."""

from __future__ import annotations

import ast
import contextlib
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_BACKEND
from workbench.store import pipeline

ROOT = Path(__file__).resolve().parents[2]
STAGES_DIR = ROOT / "workbench" / "store" / "stages"
PIPELINES = {"files": pipeline.FILES, "sqlite": pipeline.SQLITE}


def drawn(doc: str, name: str) -> str:
    """The block docs/architecture.md generated from `pipeline.render()` for the `name` pipeline."""
    found = re.search(rf"<!-- write-stages:{name} .*?-->\n```\n(.*?)\n```", doc, re.S)
    assert found, f"docs/architecture.md has no write-stages:{name} block"
    return found.group(1)


@pytest.mark.parametrize("name", PIPELINES)
def test_the_architecture_doc_draws_the_declared_stages(name: str) -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert drawn(doc, name) == pipeline.render(PIPELINES[name]), \
        "docs/architecture.md's write path differs from store/pipeline.py: paste pipeline.render() in again"


def test_the_render_names_every_stage_in_order() -> None:
    for flow in PIPELINES.values():
        names = [n for n, _run in flow.stages]
        text = pipeline.render(flow)
        assert [line.split("  ")[1].strip() for line in text.splitlines() if not line.startswith("──")] == names
        mermaid = pipeline.render(flow, "mermaid")
        assert re.findall(r'\["(.+?)"\]', mermaid) == names
        assert mermaid.count("-->") == len(names) - 1


def test_no_stage_imports_another() -> None:
    modules = {p.stem for p in STAGES_DIR.glob("*.py")} - {"__init__"}
    wrong = []
    for path in sorted(STAGES_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    wrong.append(f"{path.name}:{node.lineno}: a relative import")
                    continue
                base = node.module or ""
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                parts = target.split(".")
                if parts[:3] == ["workbench", "store", "stages"] and len(parts) > 3 and parts[3] in modules:
                    wrong.append(f"{path.name}:{node.lineno}: imports the stage {parts[3]}")
    assert wrong == [], "\n".join(wrong)


def test_every_stage_module_is_declared_and_says_what_it_does() -> None:
    declared = {run.__module__.rsplit(".", 1)[-1] for flow in PIPELINES.values() for _n, run in flow.stages}
    on_disk = {p.stem for p in STAGES_DIR.glob("*.py")} - {"__init__"}
    assert declared == on_disk, f"declared but absent: {declared - on_disk}; present but not declared: " \
                                f"{on_disk - declared}"
    for flow in PIPELINES.values():
        for name, run in flow.stages:
            assert run.__name__ == "run" and run.__module__.startswith("workbench.store.stages."), name
            module = ast.parse((STAGES_DIR / f"{run.__module__.rsplit('.', 1)[-1]}.py").read_text(encoding="utf-8"))
            assert (ast.get_docstring(module) or "").startswith("Stage `"), f"{name}: open with 'Stage `name`: …'"


def test_a_bad_declaration_is_refused_when_made() -> None:
    stages = pipeline.STAGES
    with pytest.raises(ValueError, match="named twice"):
        pipeline.Pipeline("x", (*stages, stages[0]), enter=("lock", "apply"), load=("load", "load"),
                          write=("set aside", "settle"), finish=("settle spool", "commit owed"))
    with pytest.raises(ValueError, match="out of order"):
        pipeline.Pipeline("x", stages, enter=("lock", "apply"), load=("fold spool", "load"),
                          write=("set aside", "settle"), finish=("settle spool", "commit owed"))
    with pytest.raises(ValueError, match="overlap"):
        pipeline.Pipeline("x", stages, enter=("lock", "apply"), load=("load", "load"),
                          write=("apply", "settle"), finish=("settle spool", "commit owed"))


def _recording(flow: pipeline.Pipeline, seen: list[str]) -> pipeline.Pipeline:
    def wrap(name: str, run: pipeline.Callable[..., object]) -> pipeline.Stage:
        def recorded(tx: object) -> object:
            seen.append(name)
            return run(tx)
        return name, recorded

    return pipeline.Pipeline(flow.name, tuple(wrap(n, r) for n, r in flow.stages), enter=flow.enter,
                             load=flow.load, write=flow.write, finish=flow.finish)


def test_a_write_runs_the_stages_in_the_declared_order(bench: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain write (one event, committed) runs every stage once, in the declared order — on the backend the
    suite runs on (WB_TEST_BACKEND)."""
    from workbench.store.sqlitetx import SqliteTransaction
    from workbench.store.transaction import Transaction

    seen: list[str] = []
    cls = SqliteTransaction if TEST_BACKEND == "sqlite" else Transaction
    flow = cls.PIPELINE
    monkeypatch.setattr(cls, "PIPELINE", _recording(flow, seen))
    bench.add_task("in the declared order")
    assert seen == [n for n, _run in flow.stages]


@pytest.mark.parametrize("kind", ["no events", "dry run", "the block raises"])
def test_a_write_that_ends_early_keeps_the_order_and_releases_the_lock(bench: Any, monkeypatch: pytest.MonkeyPatch,
                                                                       kind: str) -> None:
    """A write that stops its span (nothing to write, `wb doctor`'s dry run) or whose block raises runs a
    prefix of each span, in the declared order, and always ends with `release`."""
    from workbench.store.sqlitetx import SqliteTransaction
    from workbench.store.transaction import Transaction

    seen: list[str] = []
    cls = SqliteTransaction if TEST_BACKEND == "sqlite" else Transaction
    flow = cls.PIPELINE
    monkeypatch.setattr(cls, "PIPELINE", _recording(flow, seen))
    names = [n for n, _run in flow.stages]
    raises = pytest.raises(RuntimeError) if kind == "the block raises" else contextlib.nullcontext()
    with raises, bench.wb.transaction("human", dry=kind == "dry run") as tx:
        if kind != "no events":
            tx.emit("note.add", {"text": "never written" if kind != "dry run" else "checked"})
        if kind == "the block raises":
            raise RuntimeError("the caller failed")
    assert seen == sorted(seen, key=names.index) and seen[-1] == "release"
    assert "apply" in seen and len(seen) < len(names)
    if kind == "the block raises":
        assert not set(seen) & {n for n, _run in flow.span(*flow.write)}

