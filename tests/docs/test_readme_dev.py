"""README's Development section tells a newcomer what the test suite costs before they run it (issue 31 item 11):
how many packages the install brings, how long the default tier takes, and a test command that shows progress."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def development() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("## Development\n", 1)[1].split("\n## ", 1)[0]


def installed_closure(dist: str, extras: tuple[str, ...]) -> set[str]:
    """The distributions `pip install DIST[EXTRAS]` brings, read from what is installed here."""
    seen: set[str] = set()
    todo: list[tuple[str, tuple[str, ...]]] = [(dist, extras)]
    while todo:
        name, wanted = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        for line in metadata.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *wanted)):
                todo.append((req.name, tuple(req.extras)))
    return seen


def test_the_readme_says_what_the_suite_costs_and_its_command_shows_progress() -> None:
    dev = development()
    commands = [ln for ln in dev.splitlines() if ln.startswith("python -m pytest") and "tests " in ln + " "]
    suite = next(ln for ln in commands if ln.split("#")[0].split()[-1] == "tests" and "-m slow" not in ln)
    assert " -q" not in suite.split("#")[0], f"the suite's command hides pytest's header: {suite}"
    assert re.search(r"~11 min on 2 cores", suite), suite
    said = int(re.search(r"about (\d+) packages", dev).group(1))
    dist = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]  # whatever its name on PyPI
    count = len(installed_closure(dist, ("test",))) - 1  # not wb itself
    assert abs(count - said) <= 0.15 * count, f"README says about {said} packages; the install brings {count}"
