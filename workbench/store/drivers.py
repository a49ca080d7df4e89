"""The git drivers wb registers in a repository: textconv for readable diffs and merge drivers for safe merges.

`.workbench/.gitattributes` names them (committed with the workbench) and keeps git from converting line
endings in `.workbench/` (`* -text`: a `core.autocrlf=true` checkout would otherwise break the hash chain).
The repository's own git config says which command runs them: a small launcher wb keeps in the repository's
common git directory (`wb/driver`), which starts the interpreter that registered it by its absolute path in
isolated mode (`python -I`: nothing imported from the work tree, whatever a clone ships), and shows the file
as it is when that interpreter is gone, so a removed virtual environment never makes `git diff` or
`git log -p` fail (`wb doctor --fix` registers the wb that runs it). A registration that changed anything asks
for git's textconv cache of the recent commits to be filled at the command's end (review/textconv_notes.py),
so a fresh clone's first `git log -p` starts no driver.
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.model.layout import WB_DIR

ATTRIBUTES = (
    "# wb: readable diffs and safe merges of the workbench (written by `wb init`)\n"
    "* -text\n"
    "board.json diff=wb-board merge=wb-board\n"
    "events.jsonl diff=wb-events merge=wb-events\n"
    "state.md diff=wb-state merge=wb-state\n"
    "calls.jsonl merge=union\n"
    "log/*.jsonl merge=wb-segment\n"
)


LAUNCHER = """\
#!/bin/sh
# Written by wb (`wb init`, `wb doctor --fix`): starts wb for git's diff and merge drivers.
# Only the interpreter that registered the drivers, by its absolute path and isolated (-I: neither the
# work tree nor PYTHON* variables reach sys.path), so a clone that ships a `workbench/` package of its own
# never runs it on `git log -p`, `git diff` or `git merge`. Nothing else is tried (not a `wb` found on PATH).
# When that interpreter cannot start wb, the textconv shows the file as it is and a merge stops as a
# conflict, so git itself never fails.
py={python}
if [ "$1" = textconv ]; then
  if [ -x "$py" ] && "$py" -I -m workbench.cli.main "$@" 2>/dev/null; then exit 0; fi
  exec cat -- "$3"
fi
if [ -x "$py" ]; then exec "$py" -I -m workbench.cli.main "$@"; fi
echo "wb is not installed here: the wb merge driver cannot run (install wb, then \\`wb doctor --fix\\`)" >&2
exit 1
"""
DRIVER_KEYS = ("board", "events", "state")


def launcher_path(common_dir: Path) -> Path:
    return common_dir / "wb" / "driver"


def driver_command() -> str:
    """The command git runs: the launcher in the common git dir, found from any worktree of the repository."""
    return "sh -c 'exec sh \"$(git rev-parse --git-common-dir)/wb/driver\" \"$@\"' wb-driver"


def wanted_config() -> dict[str, str]:
    command = driver_command()
    wanted = {}
    for kind in DRIVER_KEYS:
        name = f"wb-{kind}"
        wanted[f"diff.{name}.textconv"] = f"{command} textconv {kind}"
        wanted[f"diff.{name}.cachetextconv"] = "true"  # git log -p need not start wb for every old version
        wanted[f"merge.{name}.name"] = f"wb {kind} merge (by id; see docs/git.md)"
        wanted[f"merge.{name}.driver"] = f"{command} merge-driver {kind} %O %A %B %P"
    # a sealed segment both sides sealed differently since their fork: ours is kept, and the events.jsonl
    # driver (which reads all three commits' whole logs) carries theirs' events into the merged log
    wanted["merge.wb-segment.name"] = "wb sealed log segment (ours kept; events merged by the events.jsonl driver)"
    wanted["merge.wb-segment.driver"] = "true"
    return wanted


def register_drivers(worktree: Path, common_dir: Path | None = None, *, attributes_too: bool = True) -> list[str]:
    """Register wb's textconv and merge drivers: .gitattributes lines, the launcher and repo-local git config.
    Idempotent: returns what it changed (nothing on a second run). `attributes_too=False` leaves the committed
    .gitattributes alone (a fresh clone's first command registers only what a clone does not carry)."""
    from workbench.git.plumbing import run_git  # here and below: a reader registers nothing
    from workbench.store.atomic import atomic_write, refuse_links_under_workbench

    if common_dir is None:
        from workbench.git.repo import GitRepo

        common_dir = GitRepo(worktree).common_dir
    changed: list[str] = []
    attributes = worktree / WB_DIR / ".gitattributes"
    refuse_links_under_workbench(attributes)  # before the glob below: a linked .workbench is somewhere else
    for stale in attributes.parent.glob(".tmp-*-.gitattributes"):  # an init killed mid-write (we hold the lock)
        stale.unlink(missing_ok=True)
    current = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    missing = [line for line in ATTRIBUTES.splitlines()[1:] if line not in current.splitlines()]
    if missing and attributes_too:
        text = current + ("\n" if current and not current.endswith("\n") else "")
        text += ATTRIBUTES if len(missing) == len(ATTRIBUTES.splitlines()) - 1 else "\n".join(missing) + "\n"
        atomic_write(attributes, text.encode("utf-8"))
        changed.append(".workbench/.gitattributes")
    launcher = launcher_path(common_dir)
    import shlex  # here: only a clone (or a moved interpreter) writes the launcher

    script = LAUNCHER.replace("{python}", shlex.quote(sys.executable)).encode()
    try:
        have_script = launcher.read_bytes()
    except OSError:
        have_script = None
    if have_script != script:
        launcher.parent.mkdir(exist_ok=True)
        atomic_write(launcher, script)
        changed.append(str(launcher))
    for key, value in wanted_config().items():
        have = run_git(worktree, "config", "--local", "--get", key, check=False).stdout.decode().strip()
        if have != value:
            run_git(worktree, "config", "--local", key, value)
            changed.append(key)
    if changed:  # git's textconv cache, filled at the command's end (review/textconv_notes.py)
        from workbench.git import notes

        notes.want(worktree, common_dir)
    return changed


def drivers_problems(worktree: Path, common_dir: Path) -> list[str]:
    """What stops git's diff and merge drivers from running wb (for `wb doctor`); [] when they work."""
    from workbench.git.plumbing import run_git

    problems = []
    for key, value in wanted_config().items():
        have = run_git(worktree, "config", "--local", "--get", key, check=False).stdout.decode().strip()
        if have != value:
            problems.append(f"git config {key} is {have or 'not set'!r}, not wb's launcher")
            break
    attributes = worktree / WB_DIR / ".gitattributes"
    current = attributes.read_text(encoding="utf-8").splitlines() if attributes.exists() else []
    if any(line not in current for line in ATTRIBUTES.splitlines()[1:]):
        problems.append(".workbench/.gitattributes lacks wb's driver or line-ending rules")
    launcher = launcher_path(common_dir)
    if not launcher.exists():
        problems.append(f"{launcher} is missing")
    elif not launcher_isolated(common_dir):
        problems.append(f"{launcher} is an older wb's, which can import a `workbench/` folder of the work tree")
    else:
        import subprocess

        proc = subprocess.run(["sh", str(launcher), "--version"], cwd=worktree, capture_output=True, timeout=60)
        if proc.returncode != 0:
            problems.append(f"{launcher} cannot start wb: {proc.stderr.decode(errors='replace').strip()[:200]}")
    return problems


ISOLATED = b'"$py" -I -m workbench.cli.main'  # what an older launcher lacks: it could import the work tree


def launcher_isolated(common_dir: Path) -> bool:
    """Whether the launcher runs wb isolated (an older wb's fell back to `python -c 'import workbench'` in the
    work tree, which imports a clone's own `workbench/` package). A missing launcher counts as isolated."""
    try:
        return ISOLATED in launcher_path(common_dir).read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return False


def needs_registration(worktree: Path, common_dir: Path) -> bool:
    """A fresh clone carries .workbench/.gitattributes but not the launcher or the config (neither is
    cloned): its first wb command registers them. So does a launcher an older wb wrote, which was not
    isolated from the work tree. One small read on the usual path."""
    if not launcher_path(common_dir).exists():
        return (worktree / WB_DIR / ".gitattributes").exists()
    return not launcher_isolated(common_dir)
