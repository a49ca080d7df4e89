"""issue 22 item 5 from Python: `Bench.note(about=…)`, `Bench.set_state(add=…, about=…)` and `Bench.verify`, the
same verbs as `wb note --about`, `wb set KEY+=ITEM --about` and `wb verify`."""

from __future__ import annotations

import pytest

from workbench.errors import NotFound, UsageError


def test_the_memory_verbs(bench, repo, git) -> None:
    bench.note("app.py says hello", about=["app.py", "./app.py"])  # one path, however it is spelled
    state = bench.set_state({}, add={"assumptions": ["hello is ASCII"]}, about=["app.py"])
    first, second = state["memory"]
    assert (first["kind"], first["about"], second["kind"], second["text"]) == \
        ("note", ["app.py"], "assumption", "hello is ASCII")
    assert first["commit"] == git(repo, "log", "-1", "--format=%H", "--", "app.py").strip()
    assert bench.status()["memory"]["stale"] == []

    (repo / "app.py").write_text("print('bonjour')\n")
    git(repo, "commit", "-qam", "bonjour")
    assert [s["id"] for s in bench.status()["memory"]["stale"]] == [first["id"], second["id"]]
    (confirmed,) = bench.verify([second["id"]])
    code_head = git(repo, "log", "-1", "--format=%H", "--", ".", ":(exclude).workbench").strip()  # not wb's commits
    assert confirmed["verified"]["actor"] == "agent" and confirmed["commit"] == code_head
    assert [s["id"] for s in bench.status()["memory"]["stale"]] == [first["id"]]

    with pytest.raises(NotFound, match="no memory item M-999"):
        bench.verify(["M-999"])
    with pytest.raises(UsageError, match="outside the work tree"):
        bench.note("x", about=["../elsewhere.py"])
    with pytest.raises(UsageError, match="is not a list"):
        bench.set_state({}, add={"next_action": ["x"]})


def test_a_merge_keeps_both_branches_memory_by_id() -> None:
    from workbench.review.merge import merge_state

    def item(n: int, **more: object) -> dict:
        return {"id": f"M-{n}", "kind": "note", "text": f"n{n}", "about": ["a.py"], "commit": "c0", "at": "t", **more}

    base = {"memory": [item(1), item(2)]}
    ours = {"memory": [item(1, commit="c1", verified={"at": "t", "actor": "agent", "event": 9}), item(2), item(3)]}
    theirs = {"memory": [item(1), item(4)]}  # dropped M-2, added M-4
    merged, conflicts = merge_state(base, ours, theirs, {"ours": {}, "theirs": {}})
    assert conflicts == []
    assert [(m["id"], m["commit"]) for m in merged["memory"]] == [("M-1", "c1"), ("M-3", "c0"), ("M-4", "c0")]
