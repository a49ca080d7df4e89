"""git's textconv cache filled by wb: the views of the workbench files of recent commits, rendered in-process
by the code the textconv driver runs (review/textconv.py) and written as git's own notes (git/notes.py).

Without it the first `git log -p` of a clone (or after wb's commits) starts the driver once per side of each
changed workbench file of each commit: `sh`, the launcher, `git rev-parse`, then Python — ~20 ms a file
version, ~30 of them for five commits. With it git finds each view under refs/notes/textconv/<driver> and
starts none.

What is filled: the versions of .workbench/board.json, events.jsonl and state.md that the last LIMIT commits
of HEAD touching them hold (among its last WALK), on both sides of each change — the blobs
`git log -p -LIMIT` shows — for each of the three drivers whose git config is wb's own (the textconv command
`store/drivers.py` registers, its cachetextconv on): a note is trusted by git only under that command
(git/notes.py). A blob already noted is left as it is; a view that is not what the driver would print byte
for byte is left to the driver: one with characters outside ASCII when this locale is not UTF-8 (the driver
prints in the locale's encoding), one that cannot be encoded at all (the driver falls back to the raw file).

When: after the drivers are registered — `wb init`, `wb doctor --fix`, and above all the first wb command of
a fresh clone (store/workbench.py), whose user has not run `git log -p` yet — at the end of that command line
(`fill_wanted`, cli/main.py): ~65 ms for LIMIT commits of a 5,000-task board (51 views). A fill never fails a
command: the notes are a cache.

Not as wb commits: each fill stores the views of board.json as new objects, ~7 KB a commit at 5,000 tasks,
where the commit itself adds ~0.7 KB (scale.git_bytes, the bytes a `wb task add` adds to .git: 1.77x a plain
commit without, 18.5x with a fill at each of wb's pack runs). The commits after a clone's first command are
cached by git itself, once, on the first `git log -p` that shows them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)

if TYPE_CHECKING:
    from pathlib import Path

LIMIT = 16  # commits touching the three files: ~3 views each, ~65 ms in all at 5,000 tasks
WALK = 500  # commits of HEAD's first-parent line looked through at most for them
FILES = {".workbench/board.json": "board", ".workbench/events.jsonl": "events", ".workbench/state.md": "state"}


def our_drivers(worktree: Path) -> dict[str, str]:
    """{driver: its textconv command} for wb's drivers whose effective git config is the one wb registers."""
    from workbench.git.plumbing import run_git
    from workbench.store.drivers import wanted_config

    proc = run_git(worktree, "config", "-z", "--get-regexp", r"^diff\.wb-(board|events|state)\.", check=False)
    have: dict[str, str] = {}
    for item in proc.stdout.decode("utf-8", errors="replace").split("\0"):
        key, _, value = item.partition("\n")
        have[key.lower()] = value  # the last one wins, as git reads it
    wanted = wanted_config()
    out = {}
    for kind in FILES.values():
        name = f"wb-{kind}"
        command = wanted[f"diff.{name}.textconv"]
        if have.get(f"diff.{name}.textconv") == command and have.get(f"diff.{name}.cachetextconv") == "true":
            out[name] = command
    return out


def _as_driver_prints(text: str) -> bytes | None:
    """The bytes the driver writes for `text` (its stdout in this locale), or None when they are not sure."""
    if text.isascii():
        return text.encode("ascii")
    import locale

    name = (locale.setlocale(locale.LC_CTYPE) or "").split("@")[0]
    encoding = "utf-8" if name in ("C", "POSIX") else locale.getencoding()
    if encoding.lower().replace("-", "").replace("_", "") != "utf8":
        return None
    try:
        return text.encode("utf-8")
    except UnicodeError:  # the driver's strict stdout fails, and its launcher prints the raw file
        return None


def fill(worktree: Path, common_dir: Path, limit: int = LIMIT) -> int:
    """Render and note the views git lacks of the last `limit` commits of HEAD touching the three files (see
    the module's docstring); returns how many notes were added."""
    from workbench.git import notes
    from workbench.git.plumbing import cat_batch, run_git
    from workbench.review.textconv import render

    drivers = our_drivers(worktree)
    if not drivers:
        return 0
    # the walk bounded too: in a long history whose workbench is young, git would walk it all to find `limit`
    base = run_git(worktree, "rev-parse", "--verify", "-q", f"HEAD~{WALK}", check=False).stdout.decode().strip()
    log = run_git(worktree, "log", f"-{limit}", "--raw", "--no-abbrev", "--no-renames", "--format=", "HEAD",
                  *([f"^{base}"] if base else []), "--", *FILES, check=False)
    if log.returncode != 0:
        return 0
    blobs: dict[str, dict[str, str]] = {}  # driver → {blob id: kind}
    width = 20
    for line in log.stdout.decode("utf-8", errors="replace").splitlines():
        meta, _, path = line.partition("\t")
        fields = meta.split()
        kind = FILES.get(path)
        if not line.startswith(":") or len(fields) < 5 or kind is None or f"wb-{kind}" not in drivers:
            continue
        width = len(fields[2]) // 2
        for mode, sha in ((fields[0][1:], fields[2]), (fields[1], fields[3])):
            if mode in ("100644", "100755") and sha.strip("0"):
                blobs.setdefault(f"wb-{kind}", {})[sha] = kind
    if not blobs:
        return 0
    caches = notes.read_caches(worktree, {name: drivers[name] for name in blobs}, width)
    missing = [(name, sha, kind) for name, found in blobs.items() if caches[name].trusted
               for sha, kind in found.items() if sha not in caches[name].notes]
    if not missing:
        return 0
    bodies = cat_batch(worktree, [sha for _name, sha, _kind in missing])
    views: dict[str, dict[str, bytes]] = {}
    for (name, sha, kind), body in zip(missing, bodies, strict=True):
        if body is None:
            continue
        view = _as_driver_prints(render(kind, body[1], _render_cache(common_dir, kind, body[1])))
        if view is not None:
            views.setdefault(name, {})[sha] = view
    if not views:
        return 0
    return notes.add_notes(worktree, common_dir, drivers, views, width, caches)


def _render_cache(common_dir: Path, kind: str, raw: bytes) -> Path | None:
    """The kept render the driver uses for a big log (cli/textconv.py): shared, so either one extends it."""
    from workbench.review.textconv_cache import MIN_BYTES

    if kind != "events" or len(raw) < MIN_BYTES:
        return None
    return common_dir.absolute() / "wb" / "textconv" / kind


def fill_wanted() -> None:
    """Fill the caches asked for (git/notes.py `want`): at the end of a command line. Never fails it."""
    from workbench.git import notes

    for worktree, common_dir in notes.take_wanted():
        try:
            fill(worktree, common_dir)
        except Exception:  # noqa: BLE001 — a cache: a failing git, a full disk or a read-only repository leave
            pass  # git to run the driver as before
