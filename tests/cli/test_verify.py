"""issue 22 item 5: memory that knows when it is stale. A note or an assumption names the paths it is about
(`wb note --about`, `wb set assumptions+=… --about`); once the user commits a change to one of them with plain
git, `wb status`, `wb prime` and `wb handoff` flag it naming that commit, and `wb verify` confirms it again."""

from __future__ import annotations

import json

from tests import stored


def _status(wb, repo) -> dict:  # type: ignore[no-untyped-def]
    r = wb(repo, "status", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _commit(git, repo, path: str, text: str, message: str) -> str:  # type: ignore[no-untyped-def]
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message)
    return str(git(repo, "rev-parse", "HEAD").strip())


def test_a_note_about_a_path_goes_stale_when_a_commit_changes_it_and_verify_clears_it(repo, wb, git) -> None:
    _commit(git, repo, "src/x.py", "TABLE = {}\n", "add the parser")
    assert wb(repo, "init").returncode == 0
    r = wb(repo, "note", "--about", "src/x.py", "The parser is table-driven: keep TABLE the single source")
    assert r.returncode == 0, r.stderr
    item = r.stdout.split("remembered as ")[1].split(":")[0]
    assert item.startswith("M-")
    assert _status(wb, repo)["memory"]["stale"] == []

    _commit(git, repo, "README.md", "# other\n", "touch another file")  # not what the note is about
    assert _status(wb, repo)["memory"]["stale"] == []

    sha = _commit(git, repo, "src/x.py", "TABLE = {'a': 1}\nDISPATCH = {}\n", "split the table")
    data = _status(wb, repo)
    (stale,) = data["memory"]["stale"]
    assert stale["id"] == item and stale["about"] == ["src/x.py"]
    assert stale["changed_by"] == {"sha": sha, "subject": "split the table"}
    assert stale["command"] == f"wb verify {item}"
    text = wb(repo, "status").stdout
    assert f"stale        {item} note" in text and sha[:12] in text and "split the table" in text

    prime = wb(repo, "prime")
    assert prime.returncode == 0 and item in prime.stdout and sha[:12] in prime.stdout
    handoff = wb(repo, "handoff", "--json")
    assert handoff.returncode == 0, handoff.stderr
    risks = [r for r in json.loads(handoff.stdout)["risks"] if r["kind"] == "stale_memory"]
    assert len(risks) == 1 and item in risks[0]["detail"] and sha[:12] in risks[0]["detail"]

    r = wb(repo, "verify", item)
    assert r.returncode == 0, r.stderr
    assert _status(wb, repo)["memory"]["stale"] == []
    (event,) = [e for e in stored.events(repo) if e["type"] == "memory.verify"]
    assert event["payload"] == {"id": item, "commit": sha} and event["actor"] == "agent"  # recorded, with who
    assert wb(repo, "replay", "--verify").returncode == 0
    assert wb(repo, "validate").returncode == 0

    _commit(git, repo, "src/x.py", "TABLE = {}\n", "and back")  # a later change makes it stale again
    assert [s["id"] for s in _status(wb, repo)["memory"]["stale"]] == [item]


def test_an_assumption_about_a_path_and_what_happens_when_it_is_dropped(repo, wb, git) -> None:
    assert wb(repo, "init").returncode == 0
    (repo / "sub").mkdir()
    r = wb(repo / "sub", "set", "assumptions+=app.py prints only ASCII", "--about", "../app.py")  # cwd-relative
    assert r.returncode == 0, r.stderr
    r = wb(repo, "set", "assumptions+=README.md is the whole manual")  # no --about: not remembered
    assert r.returncode == 0, r.stderr
    state = _status(wb, repo)
    assert state["assumptions"] == ["app.py prints only ASCII", "README.md is the whole manual"]
    sha = _commit(git, repo, "app.py", "print('héllo')\n", "greet in French")
    (stale,) = _status(wb, repo)["memory"]["stale"]
    assert (stale["kind"], stale["text"], stale["about"]) == ("assumption", "app.py prints only ASCII", ["app.py"])
    assert stale["changed_by"]["sha"] == sha

    r = wb(repo, "set", 'assumptions=["README.md is the whole manual"]')  # the assumption is dropped: so is its item
    assert r.returncode == 0, r.stderr
    assert _status(wb, repo)["memory"] is None


def test_about_is_refused_where_it_names_nothing_it_can_hold(repo, wb) -> None:
    assert wb(repo, "init").returncode == 0
    r = wb(repo, "note", "--about", str(repo.parent / "elsewhere.py"), "a note")
    assert r.returncode == 2 and "outside the work tree" in r.stderr
    r = wb(repo, "set", "next_action=go", "--about", "app.py")  # adds no assumption for it to be about
    assert r.returncode == 2 and "assumptions+=" in r.stderr
    r = wb(repo, "verify", "M-99")
    assert r.returncode == 1 and "no memory item M-99" in r.stderr
