"""git's textconv cache, written by wb: notes under `refs/notes/textconv/<driver>`, each the textconv's output
for one blob, keyed by the blob's id (git's notes-cache.c; `diff.<driver>.cachetextconv`).

git trusts such a ref only while the subject of its commit, trimmed, is the driver's textconv command
(notes_cache_match_validity: `strcmp` of `%s` with `diff.<driver>.textconv`); otherwise it starts the cache
empty and replaces the ref on its first write. This module reads such refs (`read_caches`) and adds notes to
them (`add_notes`): the note blobs, the notes tree (the existing notes kept, fanned out `xx/yyyy…` once there
are more than 256) and a parentless commit whose message is the validity string, as git writes its own, each
ref moved by one `git update-ref --stdin` from the value read (a `git log -p` that wrote the ref meanwhile is
not overwritten: the notes are read again and added once more). A ref whose subject is not the validity string
is not wb's to change: it is left as it is (git replaces it when it next caches a render).

Notes are local: a clone fetches no refs/notes/*, and wb never pushes them. The rendering is review/'s
(review/textconv_notes.py); `want` / `take_wanted` carry a request to fill the cache from the layer that
registers the drivers (store/drivers.py) to the one that renders (the command line's end, cli/main.py).
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

from workbench.git.plumbing import cat_batch, run_git

NOTES_PREFIX = "refs/notes/textconv/"
FANOUT_AT = 256  # notes in a flat tree before it is fanned out by the first two hex digits (git reads either)

_WANTED: dict[str, tuple[Path, Path]] = {}  # common dir → (a worktree, the common dir): a fill asked for


def want(worktree: Path, common_dir: Path) -> None:
    """Ask for the textconv notes of `worktree`'s recent commits to be filled when the command ends."""
    _WANTED[str(common_dir)] = (worktree, common_dir)


def wanted() -> bool:
    """Whether a fill was asked for and not yet taken."""
    return bool(_WANTED)


def take_wanted() -> list[tuple[Path, Path]]:
    """The fills asked for since the last call (each repository once), forgotten."""
    wanted = list(_WANTED.values())
    _WANTED.clear()
    return wanted


def subject(message: bytes) -> str:
    """A commit message's subject as git's `%s` gives it, trimmed: its first paragraph, lines joined by a space."""
    lines: list[str] = []
    for line in message.decode("utf-8", errors="replace").split("\n"):
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines).strip()


class Cache:
    """One driver's notes ref as read: its commit (None: no ref), whether git trusts it, and its notes."""

    __slots__ = ("ref", "commit", "trusted", "notes")

    def __init__(self, ref: str, commit: str | None, trusted: bool, notes: dict[str, tuple[str, str]]) -> None:
        self.ref, self.commit, self.trusted = ref, commit, trusted
        self.notes = notes  # blob id → (mode, note blob id)


def _parse_tree(body: bytes, width: int) -> list[tuple[str, str, str]]:
    entries = []
    pos = 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        entries.append((body[pos:space].decode(), body[space + 1:nul].decode("utf-8", errors="replace"),
                        body[nul + 1:nul + 1 + width].hex()))
        pos = nul + 1 + width
    return entries


def read_caches(worktree: Path, drivers: dict[str, str], width: int) -> dict[str, Cache]:
    """{driver: its notes ref as read}, for {driver: validity}; `width` the object id's bytes (20 or 32)."""
    names = list(drivers)
    refs = [NOTES_PREFIX + name for name in names]
    commits = cat_batch(worktree, refs)
    caches: dict[str, Cache] = {}
    trees: dict[str, str] = {}
    for name, ref, found in zip(names, refs, commits, strict=True):
        if found is None:
            caches[name] = Cache(ref, None, True, {})
            continue
        sha, body = found
        head, _, message = body.partition(b"\n\n")
        tree = head.split(b"\n", 1)[0]
        trusted = tree.startswith(b"tree ") and subject(message) == drivers[name]
        caches[name] = Cache(ref, sha, trusted, {})
        if trusted:
            trees[name] = tree[5:].decode()
    if not trees:
        return caches
    hexlen = 2 * width
    roots = cat_batch(worktree, list(trees.values()))
    fanned: list[tuple[str, str]] = []  # (driver, subtree id, prefix)
    prefixes: list[str] = []
    for name, found in zip(trees, roots, strict=True):
        if found is None:
            caches[name].trusted = False
            continue
        for mode, entry, sha in _parse_tree(found[1], width):
            if mode == "40000" and len(entry) == 2:
                fanned.append((name, sha))
                prefixes.append(entry)
            elif len(entry) == hexlen:
                caches[name].notes[entry] = (mode, sha)
    while fanned:  # git fans out by two hex digits a level, as deep as it needs
        subtrees = cat_batch(worktree, [sha for _n, sha in fanned])
        more: list[tuple[str, str]] = []
        more_prefixes: list[str] = []
        for (name, _sha), prefix, found in zip(fanned, prefixes, subtrees, strict=True):
            if found is None:
                continue
            for mode, entry, sha in _parse_tree(found[1], width):
                if mode == "40000" and len(entry) == 2:
                    more.append((name, sha))
                    more_prefixes.append(prefix + entry)
                elif len(prefix + entry) == hexlen:
                    caches[name].notes[prefix + entry] = (mode, sha)
        fanned, prefixes = more, more_prefixes
    return caches


def write_object(common_dir: Path, algo: str, kind: str, body: bytes) -> str:
    """Write one object loose (the same bytes `git hash-object -w` writes) unless it is there; its id."""
    raw = f"{kind} {len(body)}\0".encode() + body
    sha = hashlib.new(algo, raw).hexdigest()
    path = common_dir / "objects" / sha[:2] / sha[2:]
    if path.exists():
        return sha
    path.parent.mkdir(exist_ok=True)
    tmp = path.parent / f"tmp_obj_wb_{os.getpid()}_{sha[:8]}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(zlib.compress(raw, 1))
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return sha


def _tree(common_dir: Path, algo: str, entries: dict[str, tuple[str, str]]) -> str:
    body = b"".join(mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(sha)
                    for name, (mode, sha) in sorted(entries.items(), key=lambda e: e[0] + ("/" if e[1][0] == "40000"
                                                                                           else "")))
    return write_object(common_dir, algo, "tree", body)


def notes_tree(common_dir: Path, algo: str, notes: dict[str, tuple[str, str]]) -> str:
    """The notes tree of {blob id: (mode, note blob id)}: flat, or by the first two hex digits past FANOUT_AT."""
    if len(notes) <= FANOUT_AT:
        return _tree(common_dir, algo, notes)
    groups: dict[str, dict[str, tuple[str, str]]] = {}
    for key, entry in notes.items():
        groups.setdefault(key[:2], {})[key[2:]] = entry
    return _tree(common_dir, algo, {prefix: ("40000", _tree(common_dir, algo, group))
                                    for prefix, group in groups.items()})


def add_notes(worktree: Path, common_dir: Path, drivers: dict[str, str], views: dict[str, dict[str, bytes]],
              width: int, caches: dict[str, Cache] | None = None, tries: int = 3) -> int:
    """Add {driver: {blob id: view}} to each driver's notes ref, whose validity is `drivers[driver]` (`caches`:
    the refs as just read, else they are read here). A blob the ref notes already is left as it is; a ref git
    would not trust is not touched. Returns how many notes were added."""
    import time

    algo = "sha1" if width == 20 else "sha256"
    zero = "0" * (2 * width)
    ident = f"wb <wb> {int(time.time())} +0000"
    for _try in range(tries):
        if caches is None:
            caches = read_caches(worktree, {name: drivers[name] for name in views}, width)
        lines = []
        added = 0
        for name, wanted in views.items():
            cache = caches[name]
            if not cache.trusted:
                continue
            new = {blob: view for blob, view in wanted.items() if blob not in cache.notes}
            if not new:
                continue
            notes = dict(cache.notes)
            for blob, view in new.items():
                notes[blob] = ("100644", write_object(common_dir, algo, "blob", view))
            tree = notes_tree(common_dir, algo, notes)
            body = (f"tree {tree}\nauthor {ident}\ncommitter {ident}\n\n{drivers[name]}\n").encode()
            commit = write_object(common_dir, algo, "commit", body)
            lines.append(f"update {cache.ref} {commit} {cache.commit or zero}\n")
            added += len(new)
        if not lines:
            return 0
        proc = run_git(worktree, "update-ref", "--stdin", "-m", "wb: textconv cache",
                       stdin="".join(lines).encode(), check=False)
        if proc.returncode == 0:
            return added
        caches = None  # a ref moved since it was read: read them again
    return 0  # the refs kept moving (git log -p runs writing them): they are a cache, the next fill tries again
