"""Joining the shared state and leaving it: a worktree without `.workbench/` takes up the existing state branch
(`join`), a workbench's state moves from the user's branch to a ref of its own (`move_to_ref`), and `wb sync`
with state on the user's branch (`branch_sync`: a pull and push of that branch)."""

from __future__ import annotations

from workbench.errors import GitError, UsageError
from workbench.ops.syncmerge import materialize
from workbench.ops.syncrefs import SyncReport, tracking_ref

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.workbench import Workbench


# -- joining, and state on the user's branch ---------------------------------------------------------------
def join(wb: Workbench, ref_name: str, remote: str | None = None) -> bool:
    """A worktree without `.workbench/` takes up the existing state branch — the local one (another worktree of
    this clone) or the remote's — instead of starting an empty one. False when neither exists."""
    ref = ref_name if ref_name.startswith("refs/") else "refs/heads/" + ref_name
    branch = ref.removeprefix("refs/heads/")
    wb.git.refuse_checked_out(ref)  # before anything is fetched or written
    found = wb.git.ref_sha(ref)
    if found is None:
        remotes = wb.git.remotes()
        remote = remote or (wb.git.config_value(f"branch.{branch}.remote") or
                            ("origin" if "origin" in remotes else (remotes[0] if remotes else None)))
        if remote is None or remote not in remotes:
            return False
        fetched = wb.git.fetch_branch(remote, branch, tracking_ref(remote, branch))
        if fetched is None:
            return False
        found = fetched if wb.git.update_ref(ref, fetched, None) else wb.git.ref_sha(ref)
    assert found is not None
    files = wb.git.workbench_files_at(found)
    if "events.jsonl" not in files:
        raise UsageError(f"{ref} exists but holds no workbench; pick another branch for --ref")
    wb.paths.wb.mkdir(exist_ok=True)
    with wb.lock():
        materialize(wb, files)
        wb.git.set_state_base(ref, found)
    return True


def move_to_ref(wb: Workbench, ref_name: str) -> list[str] | None:
    """`wb init --ref BRANCH` on a workbench recorded on the user's branch: config git.ref set, .gitignore made
    `*`, and the whole workbench committed as the first commit of BRANCH. The user's branch and index are not
    touched: the warning says how to stop the branch tracking .workbench/. None when there was nothing to move
    (no workbench, or state already on a ref)."""
    import re

    from workbench.model.layout import GITIGNORE_REF
    from workbench.store.atomic import write_workbench_file
    from workbench.store.config import parse_config

    if not wb.paths.config.exists() or wb.config["git"].get("ref"):
        return None
    ref = ref_name if ref_name.startswith("refs/") else "refs/heads/" + ref_name
    branch = ref.removeprefix("refs/heads/")
    wb.git.refuse_checked_out(ref)
    if wb.git.ref_sha(ref) is not None:
        raise UsageError(f"{branch} already exists: state can move only to a new branch (or, in a fresh clone or "
                         "worktree without .workbench/, `wb init --ref` takes it up)")
    with wb.lock():
        text = wb.paths.config.read_text(encoding="utf-8")
        moved, n = re.subn(r"(?m)^(\s+)ref:\s*(null|~)?\s*(#.*)?$", lambda m: f"{m.group(1)}ref: {branch}"
                           + (f"  {m.group(3)}" if m.group(3) else ""), text, count=1)
        if n == 0:
            moved, n = re.subn(r"(?m)^git:\s*\n", f"git:\n  ref: {branch}\n", text, count=1)
        if n == 0:
            moved = text.rstrip("\n") + f"\ngit:\n  ref: {branch}\n"
        if parse_config(moved.encode())["git"].get("ref") != branch:
            raise UsageError(f"could not set git.ref in .workbench/config.yaml: set `git: {{ref: {branch}}}` "
                             "by hand, then run `wb init` again")
        write_workbench_file(wb.paths.wb, "config.yaml", moved.encode())
        write_workbench_file(wb.paths.wb, ".gitignore", GITIGNORE_REF.encode())
        from workbench.store import configedit

        configedit.remember(wb)  # wb's own write of config.yaml: no config.edit
    wb.reload_config()
    outcome = wb.checkpoint(f"wb: state moves to {branch}")
    warnings = [outcome.skipped] if outcome.skipped else []
    return warnings + [f"state is now recorded on {branch}; your branch still tracks .workbench/ as it was: "
                       f"`git rm -r -q --cached .workbench && git commit -m 'wb: state moved to {branch}'` stops "
                       "that (wb does not touch your branch)"]


def branch_sync(wb: Workbench, remote: str | None, push_branch: bool) -> SyncReport:
    """State recorded on the user's branch: sync would push their commits. Only when asked (--push-branch):
    a fast-forward push of the branch, nothing merged."""
    branch = wb.git.symbolic_head()
    if branch is None:
        raise UsageError("HEAD is detached and state is recorded on the checked-out branch: nothing to sync")
    short = branch.removeprefix("refs/heads/")
    if not push_branch:
        raise UsageError(f"state is recorded on your branch {short}, which carries your own commits: `wb sync` "
                         "pushes only a state ref. Move state to its own ref with `wb init --ref wb-state`, or "
                         f"pass --push-branch to push {short} as it is")
    remote = remote or wb.git.config_value(f"branch.{short}.remote") or "origin"
    report = SyncReport(remote, branch)
    sha = wb.git.read_ref(branch)
    if sha is None:
        return report
    why = wb.git.push_branch(remote, sha, short)
    if why is not None:
        raise GitError(f"{remote} has commits on {short} that you do not: `git pull` first, then `wb sync "
                       "--push-branch`")
    report.pushed, report.local, report.remote_commit = True, sha, sha
    return report
