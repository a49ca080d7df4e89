"""Helpers of the `wb diff` tests: commit ids, the diff schema, and `wb diff --format json`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import TEST_BACKEND
from workbench.model import schemas

FILES = TEST_BACKEND == "files"


def point(repo: Path) -> str:
    """A name of the workbench as it is now, for `wb diff`: HEAD's commit on files, `@SEQ` (the log's last
    seq) on SQLite, whose only history is its event log (review/logpoints.py)."""
    if FILES:
        return head(repo)
    from workbench.api import Bench

    with Bench.open(repo) as bench:
        return f"@{bench.wb.log.tail().seq}"


def side(rev: str) -> dict[str, Any]:
    """The `old`/`new` object of the diff JSON for a side named `rev` (by `point`)."""
    return {"label": rev, "commit": rev if FILES else None, "workbench": True}


def heading(rev: str) -> str:
    """How the text and Markdown headings name a side named `rev` (a commit id: its first 10 characters)."""
    return rev[:10] if FILES else rev


def head(repo: Path, rev: str = "HEAD") -> str:
    return subprocess.run(["git", "rev-parse", rev], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def schema_problems(data: Any) -> list[str]:
    """Every violation of schemas/diff.schema.json (empty: valid)."""
    return [str(err) for err in schemas.iter_errors("diff", data, "wb diff --format json")]


def diff_json(wb: Any, repo: Path, *args: str) -> dict[str, Any]:
    r = wb(repo, "diff", *args, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    assert schema_problems(data) == []
    return data
