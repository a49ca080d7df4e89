"""Python hooks and planners named in config.yaml are imported from the repository — and a file of the
repository never takes the place of a module wb (or anything else in the process) imports afterwards."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workbench.harness.hooks import registry_from_config
from workbench.harness.planners import callable_planner


@pytest.fixture
def repo_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    marker = tmp_path / "shadow-ran"
    # a stdlib module wb has not imported yet, shadowed by a file of the repository
    (root / "colorsys.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (root / "wbhook_helper.py").write_text("def answer():\n    return 42\n")
    (root / "wbhook_mod.py").write_text(
        "def on_step(payload):\n"
        "    import wbhook_helper  # a late import of the repository's own code\n"
        "    payload['answer'] = wbhook_helper.answer()\n"
        "\n"
        "def plan(goal, history):\n"
        "    return []\n"
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("colorsys", "wbhook_helper", "wbhook_mod"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return root


def test_a_hook_loads_from_the_repo_and_a_repo_file_never_shadows_a_later_import(repo_modules: Path) -> None:
    root = str(repo_modules)
    registry = registry_from_config({"before_step": [{"python": "wbhook_mod:on_step"}]}, root)
    assert sys.path[0] != root and sys.path[-1] == root  # last: found only when nothing else has the name
    import colorsys

    assert colorsys.__file__ is not None and not colorsys.__file__.startswith(root)
    assert not (repo_modules.parent / "shadow-ran").exists()
    outcome = registry.fire("before_step", {})  # a crash in a before_* hook would raise HookAbort
    assert outcome.payload == {"answer": 42}


def test_a_planner_loads_from_the_repo_the_same_way(repo_modules: Path) -> None:
    root = str(repo_modules)
    planner = callable_planner("wbhook_mod:plan", root)
    assert planner("goal", []) == []
    assert sys.path.count(root) == 1 and sys.path[-1] == root


def test_a_missing_hook_module_is_a_clear_refusal(repo_modules: Path) -> None:
    with pytest.raises(ValueError, match="cannot load hook nosuch:fn"):
        registry_from_config({"before_step": [{"python": "nosuch:fn"}]}, str(repo_modules))
    assert str(repo_modules) not in sys.path[:1]
