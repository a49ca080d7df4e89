"""No module over 600 lines (issue 34.3; STYLE.md habit 11: a long file is usually two ideas), in workbench/,
bench/ and tools/ alike, outside the generated validators (workbench/_validators, tools/gen_validators.py's).

TOO_LONG_FOR_NOW lists the modules not split yet, each with its length when it was listed: one may shrink but
not grow, and its entry goes once it is under the limit (the test says so), so the list only gets shorter."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 600
FOLDERS = ("workbench", "bench", "tools")

# module → its line count when listed
TOO_LONG_FOR_NOW: dict[str, int] = {
}


def lengths() -> dict[str, int]:
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "_validators" in path.parts:
                continue
            with path.open("rb") as f:
                out[path.relative_to(ROOT).as_posix()] = sum(1 for _ in f)
    return out


def test_no_module_over_600_lines() -> None:
    found = lengths()
    wrong = [f"{name}: {n} lines (split it by what it does; the limit is {LIMIT})"
             for name, n in found.items() if n > LIMIT and name not in TOO_LONG_FOR_NOW]
    wrong += [f"{name}: {found[name]} lines, more than the {n} it had when listed in TOO_LONG_FOR_NOW"
              for name, n in TOO_LONG_FOR_NOW.items() if found.get(name, 0) > n]
    wrong += [f"{name}: {found.get(name, 0)} lines now: take it off TOO_LONG_FOR_NOW"
              for name in TOO_LONG_FOR_NOW if found.get(name, 0) <= LIMIT]
    assert wrong == [], "\n".join(wrong)
