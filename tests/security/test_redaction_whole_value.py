"""Issue 30.5: redaction takes the whole value. A password whose value holds a space, `;`, `,` or a quote — typed
in a note, a task title, `wb set`, or a pasted `.env` line — was cut at that character and its tail committed
(`password: [redacted] horse battery staple`). Each value here is 3+ random words, so finding any word of it
anywhere wb keeps or shows (every file of .workbench/ and wb's records in the git directory, every commit's
patch without textconv, `wb prime`, `wb export`) is a leak, never a coincidence."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import call_wb, run_git

WORDS = ["zebu", "quokka", "axolotl", "narwhal", "okapi", "pangolin", "tarsier", "vicuna", "wombat", "gharial"]


def value(rng: random.Random, sep: str) -> str:
    """Three words of an animal alphabet no wb text holds, joined by `sep` (suffixed so each is unique)."""
    return sep.join(f"{rng.choice(WORDS)}{rng.randrange(10**6)}" for _ in range(3))


def lines(rng: random.Random) -> list[tuple[str, str]]:
    """(text as a person types it, the secret value in it): each kind of value in each common form."""
    out = []
    for sep in (" ", ";", ",", " ' ", '" '):
        v = value(rng, sep)
        out.append((f"password: {v}", v))
    out.append(('DB_PASSWORD="' + (v := value(rng, " ")) + '"', v))
    out.append(("export API_TOKEN='" + (v := value(rng, " ; ")) + "'", v))
    out.append(('{"client_secret": "' + (v := value(rng, ", ")) + '"}', v))
    out.append(("secret => " + (v := value(rng, " ")), v))
    return out


def words(secret: str) -> list[str]:
    return [w.strip(" ;,'\"") for w in secret.replace(";", " ").replace(",", " ").split() if w.strip(" ;,'\"")]


def everything(repo: Path, **more: str) -> dict[str, str]:
    out = stored.recorded_text(repo)
    git_wb = repo / ".git" / "wb"
    out.update({p.relative_to(repo).as_posix(): p.read_bytes().decode("utf-8", "replace")
                for p in git_wb.rglob("*") if p.is_file()} if git_wb.exists() else {})
    out["git log -p"] = run_git(repo, "log", "-p", "--all", "--format=%H%n%B", "--no-textconv")
    out.update(more)
    return out


@pytest.mark.parametrize("door", ["note", "title", "set", "env file"])
def test_the_whole_value_is_redacted_through_every_door(bench: Any, repo: Path, door: str) -> None:
    rng = random.Random(f"whole-value-{door}")
    cases = lines(rng)
    if door == "note":
        for text, _v in cases:
            proc = call_wb(repo, "note", "--", f"Deploy notes. {text}")
            assert proc.returncode == 0, proc.stderr
    elif door == "title":
        for text, _v in cases:
            proc = call_wb(repo, "task", "add", "--", f"Rotate creds {text}")
            assert proc.returncode == 0, proc.stderr
    elif door == "set":
        for text, _v in cases:
            proc = call_wb(repo, "set", f"next_action=Check {text}")
            assert proc.returncode == 0, proc.stderr
    else:  # a pasted .env file: every line in one note
        proc = call_wb(repo, "note", "--", "pasted .env:\n" + "\n".join(text for text, _v in cases) + "\nDEBUG=1\n")
        assert proc.returncode == 0, proc.stderr
    prime = call_wb(repo, "prime", "--json")
    assert prime.returncode == 0, prime.stderr
    export = repo.parent / f"export-{door}.json"
    proc = call_wb(repo, "export", str(export))
    assert proc.returncode == 0, proc.stderr
    texts = everything(repo, prime=prime.stdout, export=export.read_text())
    leaks = sorted({(where, w) for where, text in texts.items() for _t, v in cases for w in words(v) if w in text})
    assert not leaks, f"{len(leaks)} (place, word) pairs leaked: {leaks[:8]}"
    # what is not a secret stays readable: the text around it, and the next line of the .env file
    board_and_state = texts[".workbench/events.jsonl"]
    assert "[redacted]" in board_and_state
    assert ("Deploy notes." if door in ("note",) else "Rotate creds" if door == "title" else
            "Check" if door == "set" else "DEBUG=1") in board_and_state


def test_ordinary_assignments_and_prose_are_left_alone(bench: Any, repo: Path) -> None:
    """Taking a value to the end of its line must not eat prose that only mentions a keyword."""
    text = "the token is valid; read the secret docs. max_tokens=100 if token == other: done"
    proc = call_wb(repo, "note", "--", text)
    assert proc.returncode == 0, proc.stderr
    notes = [e["payload"] for e in stored.events(repo) if e["type"] == "note.add"]
    assert json.dumps(notes[-1], ensure_ascii=False).count("[redacted]") == 0, notes[-1]
