"""The user's index entries under `.workbench/` pointed at wb's new commit in-process: the bytes `git update-index
--index-info` writes for the same lines, without starting git (~1.5 ms of a mutation's ~8, and git's start-up
CPU, issue 33).

Only the plain index is written here — version 2 or 3, SHA-1, at most MAX_ENTRIES entries, no extension but the
cache tree (TREE), no conflict or extended flag under `.workbench/`, and no git configuration that changes how
git itself would write it. Anything else is refused before a byte changes, and the caller runs `git
update-index` as before. tests/git/test_indexfile.py holds the two to the same bytes. One difference, on the
safe side: an entry racily clean (staged in the second the index was last written) is smudged (its size 0:
git reads the file again before it trusts it) where git smudges it only when the file's content changed.

git's lock protocol, with one addition for a crash: `index.lock` is created as a hard link of `<git dir>/wb/
index.new` (link fails when the lock exists, as git's O_EXCL does), flocked by the writer for as long as it
lives, so the lock is always a file wb can recognise as its own; the new index is swapped into place and the old
one (named `wb/index.old` first) unlinked. A kill between the link and that unlink leaves a lock `recover` —
run by the next wb command that finds index.lock held — removes when it is still that file and its writer's
flock is gone: never a lock of the user's git, never one of a wb still writing. So the user's git is never
left blocked by a wb that died past the next wb command.
"""

from __future__ import annotations

import os
import struct

from workbench import faults
from workbench.git.renames import exchange
from workbench.model import digest

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path

MAX_ENTRIES = 2000  # a bigger index is git's to rewrite: walking it here would cost what git's start-up does

# git configuration under which git would write the index differently (split, untracked cache, fsmonitor, another
# version, a skipped hash, shared permissions, an fsync): git writes it then
CONFIG_KEYS = ("core.splitindex", "core.untrackedcache", "core.fsmonitor", "core.sharedrepository", "core.fsync",
               "core.fsyncmethod", "index.version", "index.skiphash", "index.threads", "index.sparse",
               "index.recordendofindexentries", "index.recordoffsettable", "feature.manyfiles",
               "core.sparsecheckout", "core.fsmonitorhookversion")

_FIXED = 62  # an entry's bytes before its flags' extension and its name
_ZERO_STAT = bytes(24)  # ctime, mtime, dev, ino: what --index-info records (git reads the file's stat again)


def config_allows(config: dict[str, bytes | None] | None) -> bool:
    """Whether git's configuration leaves the index plain (None: git's configuration could not be read)."""
    return config is not None and not any(key in config for key in CONFIG_KEYS)


def recover(git_dir: Path) -> bool:
    """Remove what a wb killed in the middle of an index write left: `index.lock` when it is still that wb's
    — the inode of `wb/index.new` (its flock died with it), or after the swap that put the new index in place,
    the displaced index `wb/index.old` names — then those two names. A lock of anyone else's, or of a wb still
    writing, is left alone. Whether a lock of wb's was removed."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock: update() never writes here either
        return False
    mine, old = git_dir / "wb" / "index.new", git_dir / "wb" / "index.old"
    try:
        fd = os.open(mine, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    removed = False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a wb writing now: not ours to touch
        except OSError:
            return False
        held = os.fstat(fd)  # its inode (and the displaced index's, named by index.old) cannot be reused meanwhile
        ours = {(held.st_dev, held.st_ino)}
        try:
            displaced = os.stat(old)
            ours.add((displaced.st_dev, displaced.st_ino))
        except FileNotFoundError:
            pass
        try:
            lock = os.stat(git_dir / "index.lock")
            if (lock.st_dev, lock.st_ino) in ours:
                os.unlink(git_dir / "index.lock")
                removed = True
        except FileNotFoundError:
            pass
        _unlink(old)
        try:
            now = os.stat(mine)
            if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                os.unlink(mine)
        except FileNotFoundError:
            pass
    finally:
        os.close(fd)
    return removed


def update(git_dir: Path, lines: list[tuple[str, str]]) -> str | None:
    """Set each `(path, "mode sha")` entry of the index (mode 0: remove it), as `git update-index --index-info`
    would. None when done; else why not, nothing changed: "busy" (index.lock is held), "git" (an index, or a
    system, this does not write)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return "git"
    index = git_dir / "index"
    try:
        if os.stat(index).st_size > MAX_ENTRIES * 200:
            return "git"
    except FileNotFoundError:
        return "git"
    recover(git_dir)
    mine, old = git_dir / "wb" / "index.new", git_dir / "wb" / "index.old"
    lock = git_dir / "index.lock"
    try:
        try:
            fd = os.open(mine, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileNotFoundError:  # no wb/ in this git directory yet
            mine.parent.mkdir(exist_ok=True)
            fd = os.open(mine, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except FileExistsError:  # a wb killed mid-write that another wb is clearing now
        return "busy"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # for as long as this process lives: recover() tells a dead writer by it
        held = os.fstat(fd)
        try:
            os.link(mine, lock)
        except FileExistsError:  # the user's git holds the index
            return "busy"
        except OSError:  # no hard links here (or `mine` cleared meanwhile): git writes it
            return "git"
        try:
            lock_st = os.stat(lock)
            if (lock_st.st_dev, lock_st.st_ino) != (held.st_dev, held.st_ino):  # pragma: no cover - cleared
                return "busy"
            faults.point("index_locked")
            with open(index, "rb") as fh:
                stamp = os.fstat(fh.fileno()).st_mtime_ns
                data = fh.read()
            new = _rewrite(data, stamp, lines)
            if isinstance(new, str):
                os.unlink(lock)
                return new
            view = memoryview(new)
            while view:
                view = view[os.write(fd, view):]
            faults.point("before_index_rename")
            _put(index, lock, old)
        except BaseException:
            _unlink(lock)
            raise
        return None
    finally:
        _unlink(old)
        _unlink(mine)
        os.close(fd)


def _put(index: Path, lock: Path, old: Path) -> None:
    """The new index (`lock`) put in place. Swapped with the old one and the old one unlinked where the system can
    (see git/renames.py), the old one first named `old`, so a kill after the swap leaves a lock recover() knows."""
    try:
        os.link(index, old)
    except OSError:
        os.replace(lock, index)
        return
    if exchange(lock, index):
        faults.point("after_index_swap")
        os.unlink(lock)  # the old index, displaced
    else:
        os.replace(lock, index)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _rewrite(data: bytes, stamp_ns: int, lines: list[tuple[str, str]]) -> bytes | str:
    """The index `data` with `lines` applied, or why not ("git": see `update`)."""
    if len(data) < 32 or data[:4] != b"DIRC" or digest.sha1(data[:-20]).digest() != data[-20:]:
        return "git"
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3) or count > MAX_ENTRIES:
        return "git"
    stamp_s = stamp_ns // 1_000_000_000
    prefix = b".workbench/"
    pos, lo, hi = 12, -1, -1
    extended = 0  # entries outside .workbench/ with extended flags: git writes version 3 for them
    ours: dict[bytes, bytes] = {}
    smudged = bytearray(data)  # what git writes for a racily clean entry: its size 0, so git looks at the file
    end = len(data) - 20
    for _ in range(count):
        if pos + _FIXED > end:
            return "git"
        # racily clean (its file changed in the second the index was written): git smudges it when it writes
        # the index if the file's content differs; here it is smudged whatever it holds (git then reads the file
        # once, and finds it as staged or not)
        if struct.unpack_from(">I", data, pos + 8)[0] >= stamp_s and \
                struct.unpack_from(">I", data, pos + 24)[0] & 0o170000 != 0o160000:
            smudged[pos + 36:pos + 40] = bytes(4)
        flags = struct.unpack_from(">H", data, pos + 60)[0]
        head = _FIXED + (2 if flags & 0x4000 else 0)
        if flags & 0x4000 and version < 3:
            return "git"
        length = flags & 0xFFF
        if length == 0xFFF:
            length = data.index(b"\0", pos + head) - pos - head
        name = data[pos + head:pos + head + length]
        size = (head + length + 8) & ~7
        if name.startswith(prefix):
            if flags & 0x7000:  # a conflict stage or an extended flag under .workbench/: git decides
                return "git"
            if hi >= 0:
                return "git"  # out of order
            if lo < 0:
                lo = pos
            ours[name] = bytes(smudged[pos:pos + size])
        else:
            if name < prefix:
                if lo >= 0:
                    return "git"  # out of order
            elif hi < 0:
                hi = pos
                lo = pos if lo < 0 else lo
            if name == b".workbench":
                return "git"  # a file where the folder is: git sorts that out
            if flags & 0x4000:
                extended += 1
        pos += size
    if hi < 0:
        hi = pos
        lo = pos if lo < 0 else lo
    rest = pos  # where the entries end
    tree = None
    while pos < end:  # extensions: the cache tree only
        if pos + 8 > end:
            return "git"
        sig, size = data[pos:pos + 4], struct.unpack_from(">I", data, pos + 4)[0]
        if sig != b"TREE" or tree is not None or pos + 8 + size > end:
            return "git"
        tree = _read_tree(data[pos + 8:pos + 8 + size])
        if tree is None:
            return "git"
        pos += 8 + size
    kept = count - len(ours)
    now_made: dict[tuple[bytes, int, str], bytes] = {}
    for path, entry in lines:
        name = path.encode()
        if not name.startswith(prefix):
            return "git"
        mode_s, sha = entry.split()
        mode = int(mode_s, 8)
        if mode == 0:
            ours.pop(name, None)
        else:
            key = (name, mode, sha)
            made = _last_made.get(key)
            if made is None:
                made = _entry(name, mode, bytes.fromhex(sha))
            now_made[key] = ours[name] = made
        if tree is not None:
            _invalidate(tree, name)
    _last_made.clear()  # the entries of these lines, for the next write's (most of them name the same blobs)
    _last_made.update(now_made)
    names = frozenset(ours)
    if names != _last_names[0]:
        for name in names:  # a file where another's folder is: git sorts that out
            parts = name.split(b"/")
            if any(b"/".join(parts[:i]) in names for i in range(2, len(parts))):
                return "git"
        _last_names[0] = names  # found to hold none: the same names next time are not looked at again
    out = [b"DIRC", struct.pack(">II", 3 if extended else 2, kept + len(ours)), bytes(smudged[12:lo])]
    out += [ours[n] for n in sorted(ours)]
    out.append(bytes(smudged[hi:rest]))
    if tree is not None:
        ext = b"".join(_write_tree(tree))
        out += [b"TREE", struct.pack(">I", len(ext)), ext]
    body = b"".join(out)
    return body + digest.sha1(body).digest()


# the entries the last lines made, by (path, mode, blob id): `_entry` is a function of the three, and a write's lines
# name mostly the blobs the write before named (its sealed log segments, archive chunks)
_last_made: dict[tuple[bytes, int, str], bytes] = {}
# the .workbench/ paths of the last index written, once found to hold no file where another's folder is
_last_names: list[frozenset[bytes]] = [frozenset()]


def _entry(name: bytes, mode: int, sha: bytes) -> bytes:
    """An entry as --index-info makes it: no stat (git looks at the file when it next compares), stage 0, the
    mode as git's create_ce_mode has it."""
    if mode & 0o170000 == 0o100000:
        mode = 0o100755 if mode & 0o100 else 0o100644
    head = _ZERO_STAT + struct.pack(">IIII", mode, 0, 0, 0) + sha + struct.pack(">H", min(len(name), 0xFFF))
    size = (_FIXED + len(name) + 8) & ~7
    return head + name + bytes(size - _FIXED - len(name))


# -- the cache tree: [name, entry count, its tree id or None, subtrees], in git's order ----------------------------
Tree = list


def _read_tree(raw: bytes) -> Tree | None:
    try:
        node, pos = _read_node(raw, 0)
    except (ValueError, IndexError):
        return None
    return node if pos == len(raw) else None


def _read_node(raw: bytes, pos: int) -> tuple[Tree, int]:
    nul = raw.index(b"\0", pos)
    name = raw[pos:nul]
    newline = raw.index(b"\n", nul)
    count_s, subs_s = raw[nul + 1:newline].split(b" ")
    count, subs = int(count_s), int(subs_s)
    pos = newline + 1
    sha = None
    if count >= 0:
        sha = raw[pos:pos + 20]
        if len(sha) != 20:
            raise ValueError("short tree id")
        pos += 20
    children = []
    for _ in range(subs):
        child, pos = _read_node(raw, pos)
        children.append(child)
    return [name, count, sha, children], pos


def _invalidate(node: Tree, path: bytes) -> None:
    """cache-tree.c's do_invalidate_path: every tree on the path loses its id; a subtree named as the leaf goes."""
    node[1], node[2] = -1, None
    head, slash, rest = path.partition(b"/")
    children = node[3]
    if not slash:
        node[3] = [c for c in children if c[0] != head]
        return
    for child in children:
        if child[0] == head:
            _invalidate(child, rest)
            return


def _write_tree(node: Tree) -> list[bytes]:
    out = [node[0] + b"\0" + b"%d %d\n" % (node[1], len(node[3]))]
    if node[2] is not None:
        out.append(node[2])
    for child in node[3]:
        out += _write_tree(child)
    return out
