"""The scope contract of a task: which paths it may change (`allowed`), which it must not (`forbidden`), and
how a change outside `allowed` counts. Pure: paths in, findings out (the git side is ops/scope.py).

    "scope": {
      "allowed": ["src/auth/**", "tests/auth/**"],     # gitignore-style globs; empty or absent: anywhere
      "forbidden": ["migrations/**", "*.lock"],        # a change here refuses `wb task done`
      "approvals_required": ["deploy to production"],  # free text: actions that need a person
      "outside": "warn",                               # a path outside `allowed`: warn (default) or block
      "severity": [{"glob": "docs/**", "level": "warn"}, {"glob": "**", "level": "block"}]
    }

`severity` sets the level per glob family for paths outside `allowed`: the first family matching a path
decides, `outside` is the level of a path no family matches. Globs are gitignore's: `*` and `?` within a path
segment, `**` across segments, a leading `/` anchors to the repository root, a pattern without a slash
matches a name at any depth, and a pattern naming a directory covers everything beneath it.
"""

from __future__ import annotations

import re
from functools import cache

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
LEVELS = ("warn", "block")
LIST_KEYS = ("allowed", "forbidden", "approvals_required")


@cache
def _regex(glob: str) -> re.Pattern[str]:
    pattern = glob.strip()
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile("^" + prefix + "".join(out) + "(?:/.*)?$")  # a directory covers what lies beneath


def matches(glob: str, path: str) -> bool:
    """Whether the repository-relative `path` (forward slashes) falls under the gitignore-style `glob`."""
    path = path[2:] if path.startswith("./") else path
    return bool(glob.strip()) and _regex(glob).match(path) is not None


def first_match(globs: list[str], path: str) -> str | None:
    return next((g for g in globs if matches(g, path)), None)


def is_empty(scope: dict[str, Any] | None) -> bool:
    return not scope or not any(scope.get(k) for k in (*LIST_KEYS, "severity"))


def evaluate(scope: dict[str, Any] | None, paths: list[str]) -> dict[str, Any]:
    """The verdict on `paths` (the task's changes): `forbidden` [{path, glob}] (each refuses), `findings`
    [{path, rule: "outside_allowed", severity, glob?}] (a `block` one refuses too), in path order."""
    scope = scope or {}
    forbidden_globs = list(scope.get("forbidden") or [])
    allowed = list(scope.get("allowed") or [])
    families = list(scope.get("severity") or [])
    default = scope.get("outside") or "warn"
    forbidden, findings = [], []
    for path in sorted(set(paths)):
        hit = first_match(forbidden_globs, path)
        if hit is not None:
            forbidden.append({"path": path, "glob": hit})
            continue
        if not allowed or first_match(allowed, path) is not None:
            continue
        finding: dict[str, Any] = {"path": path, "rule": "outside_allowed", "severity": default}
        for family in families:
            if matches(str(family.get("glob", "")), path):
                finding["severity"] = family.get("level", default)
                finding["glob"] = family["glob"]
                break
        findings.append(finding)
    return {"forbidden": forbidden, "findings": findings}


def blocking(verdict: dict[str, Any]) -> list[str]:
    """One line per change that refuses `wb task done`: each forbidden path with its glob, each `block` finding."""
    lines = [f"{f['path']} (forbidden: {f['glob']})" for f in verdict["forbidden"]]
    lines += [f"{f['path']} (outside allowed" + (f", {f['glob']}" if f.get("glob") else "") + ": block)"
              for f in verdict["findings"] if f["severity"] == "block"]
    return lines


def merged(scope: dict[str, Any] | None, *, allow: list[str] | None = None, forbid: list[str] | None = None,
           approvals: list[str] | None = None, outside: str | None = None) -> dict[str, Any] | None:
    """`scope` with the command line's additions (--allow, --forbid, --approval, --outside); None when it
    says nothing."""
    out: dict[str, Any] = {k: list(v) if isinstance(v, list) else v for k, v in (scope or {}).items()}
    for key, more in (("allowed", allow), ("forbidden", forbid), ("approvals_required", approvals)):
        for item in more or []:
            out.setdefault(key, [])
            if item not in out[key]:
                out[key].append(item)
    if outside is not None:
        out["outside"] = outside
    return out or None
