"""Helpers of the `wb diff` tests: commit ids, the diff schema, and `wb diff --format json`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from workbench.model import schemas


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
