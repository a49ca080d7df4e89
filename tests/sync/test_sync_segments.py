"""`wb sync` with sealed log segments: clones that each sealed different events since they last synced
converge on one state commit whose log (segments, then events.jsonl) holds every event of both, once."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from tests.store.test_segments import SMALL, segments, whole_log
from tests.sync.helpers import REF, assert_converged, clone, make_remote, sync_all

pytestmark = about_git  # wb sync and claims between clones, over a git remote (a SQLite workbench has no state branch)


def test_clones_that_each_sealed_converge_with_every_event_once(tmp_path: Path) -> None:
    remote = make_remote(tmp_path, SMALL)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    notes = []
    for repo, name in ((a, "A"), (b, "B")):
        for i in range(7):
            text = f"{name} {i}"
            out = run_wb(repo, "note", text)
            assert out.returncode == 0, out.stderr
            notes.append(text)
        assert segments(repo)
    sync_all([a, b])
    assert_converged([a, b])
    for repo in (a, b):
        log = whole_log(repo)
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        assert len({e["id"] for e in log}) == len(log)
        texts = [e["payload"]["text"] for e in log if e["type"] == "note.add"]
        assert [n for n in notes if n not in texts] == []
    out = run_wb(a, "note", "after")  # the next write seals what the merge left in events.jsonl
    assert out.returncode == 0, out.stderr
    sync_all([a, b])
    assert_converged([a, b])
    committed = [run_git(r, "ls-tree", "-r", REF, "--", ".workbench/log/") for r in (a, b)]
    assert committed[0] == committed[1] and committed[0]  # one sealed history, shared
