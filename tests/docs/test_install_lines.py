"""Issue 31 item 9: every install line in README.md and docs/ installs wb itself — from its clone (a path), or
by the distribution name pyproject.toml gives (`workbench` on PyPI is an unrelated project) — or one of wb's
own dependencies by name. `tools/check_wheel.sh` installs the clone into a fresh virtual environment and checks
the name the installed distribution carries."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME = PROJECT["name"]
INSTALL = re.compile(r"(?:\bpip3?|\bpipx|\buv tool|\buv pip|python3? -m pip)\s+install[ \t]+([^`#&;|)\n]*)")


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _dependencies() -> set[str]:
    specs = list(PROJECT["dependencies"]) + [s for group in PROJECT["optional-dependencies"].values() for s in group]
    return {_name(s) for s in specs}


def install_targets(text: str) -> list[str]:
    """What each install command in `text` installs (its arguments less the options)."""
    targets = []
    for match in INSTALL.finditer(text):
        try:
            words = shlex.split(match.group(1))
        except ValueError:
            words = match.group(1).split()
        targets += [w for w in words if not w.startswith("-")]
    return targets


def _is_path(target: str) -> bool:
    return target.startswith((".", "/", "~", "$"))


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_distribution_is_not_the_unrelated_workbench() -> None:
    assert NAME != "workbench" and NAME == "wb-workbench"
    assert PROJECT["scripts"] == {"wb": "workbench.cli.main:main"}  # the command stays wb


def test_every_install_line_installs_wb_or_one_of_its_dependencies() -> None:
    deps = _dependencies()
    seen = 0
    for page in pages():
        for target in install_targets(page.read_text()):
            seen += 1
            if _is_path(target):
                continue  # wb's clone (`.`, `'.[mcp]'`, /path/to/wb)
            assert _name(target) in deps | {NAME}, f"{page.name}: `install {target}` names another project"
    assert seen >= 5


def test_the_finder_sees_the_wrong_name() -> None:
    assert install_targets("run `pip install 'workbench[board]'` first") == ["workbench[board]"]
    assert install_targets("pipx install '.[mcp]'  # x") == [".[mcp]"]
    assert _name("workbench[board]") not in _dependencies() | {NAME}
