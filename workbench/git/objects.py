"""Git objects, written and read in-process: blobs, trees and commits written loose — the same bytes `git
hash-object -w` writes — or found in a pack (git's or wb's own, git/packs.py); the `.workbench/` snapshot as a
tree (the blob cache saves rehashing); a commit's trees read from loose objects, else with one `git cat-file
--batch`. `RepoObjects` is GitRepo's third layer (git/refs.py below)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from workbench import faults
from workbench.git.blobstat import BlobStatCache
from workbench.git.plumbing import cat_batch, exist_batch, run_git
from workbench.git.refs import RepoRefs
from workbench.model.layout import WB_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from workbench.git.packs import Packer, PackIndex

IGNORED_NAMES = {".lock", ".cache", ".migrate.json"}  # .migrate.json: wb migrate's intent, never committed


def listing_key(path: str | os.PathLike[str]) -> tuple[int, int, int, int] | None:
    """What a file's stat says of its content, as the commit's listing keys it (None: no such file): a file git
    rewrote (unlink, write) has another inode or ctime even when its size and mtime come out the same."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


class RepoObjects(RepoRefs):
    """The object store and the trees of `.workbench/` (GitRepo's third layer)."""

    def __init__(self, worktree: Path) -> None:
        super().__init__(worktree)
        # the last commit this process made: (ref, commit sha, root tree entries, .workbench files)
        self._last: tuple[str, str, dict[str, tuple[str, str]], dict[str, tuple[str, str]]] | None = None
        # the last parent read through git: (commit sha, root tree entries, .workbench files) — a commit's trees
        # never change, so a second read of the same commit (sealed_changes, then the commit) asks no git again
        self._parent_read: tuple[str, dict[str, tuple[str, str]], dict[str, tuple[str, str]]] | None = None
        # the blobs hashed before, by path under .workbench/ and stat, kept in the git directory across processes
        self._blob_cache: BlobStatCache | None = None
        self._packer: Packer | None = None  # wb's own packs (workbench/git/packs.py), made on first use
        self._pack_index: PackIndex | None = None
        self._written: list[tuple[str, str, str]] = []  # loose objects written since the last journal append
        # the last blob written for each path, with its deflate segment (see _deflate): a log only ever appended
        # to is compressed a tail at a time, and read back from memory (its id names its bytes: never stale)
        self._last_blob: dict[str, tuple[str, bytes, bytes]] = {}
        # each tree's entries and body as last written, by path: log/ and archive/ hold the same dozens of entries
        # from one commit to the next, whose body is then not built again (its object is written as before)
        self._last_tree: dict[str, tuple[tuple[tuple[str, tuple[str, str]], ...], bytes]] = {}
        # the last big blob written for each path in runs of _CHUNK bytes, each with its deflate segment (_chunked)
        self._last_runs: dict[str, list[tuple[bytes, bytes]]] = {}
        self.pack_every: int | None = None  # config.yaml git.pack_every (None: the default; 0: never pack)

    @property
    def packer(self) -> Packer:
        """wb's own packs of the objects it writes (workbench/git/packs.py), in the common git dir."""
        from workbench.git.packs import DEFAULT_EVERY, Packer  # a reader makes no pack (nor imports mmap)

        if self._packer is None:
            self._packer = Packer(self.worktree, self.common_dir, 20 if self._algo == "sha1" else 32)
        self._packer.every = DEFAULT_EVERY if self.pack_every is None else self.pack_every
        return self._packer

    def _packed(self, sha: str) -> bool:
        """Whether a pack holds `sha` (git's packs or wb's, read from their .idx files, no git process). A found
        pack is freshened, as git freshens a packed object it reuses."""
        if self._pack_index is None:
            from workbench.git.packs import PackIndex

            self._pack_index = PackIndex(self.common_dir / "objects", 20 if self._algo == "sha1" else 32)
        pack = self._pack_index.find(sha)
        if pack is None:
            return False
        try:
            os.utime(pack)
        except OSError:
            pass
        return True

    def _journal_written(self) -> None:
        """Journal the loose objects written since the last call, for wb's packs (before the ref moves: a
        kill after it leaves no object unjournalled)."""
        written, self._written = self._written, []
        if written:
            self.packer.record(written)

    def _write_object(self, kind: str, body: bytes, name: str = "") -> str:
        """Write one object loose (unless the store has it already); `name` is its path, for wb's packs to delta
        versions of the same file against each other."""
        import zlib

        from workbench.model import digest

        raw = f"{kind} {len(body)}\0".encode() + body
        sha = digest.new(self._algo, raw).hexdigest()
        journal = True
        path = self.common_dir / "objects" / sha[:2] / sha[2:]  # shared by every worktree
        if path.exists():
            # freshen it, as git does when it reuses an object: `git gc` prunes unreachable loose objects by
            # age, and this one is about to become reachable from a commit
            try:
                os.utime(path)
                return sha
            except OSError:
                pass  # not ours to touch (a shared repository): write a fresh copy of our own
        elif self._packed(sha):  # packed (by wb or by git's gc): present, never written loose again —
            if kind != "tree":
                return sha
            # but a tree: a subtree that did not change (artifacts/, log/) stays in the commit after this one,
            # which reads its parent's trees from loose objects without a git process (_parent_info_loose;
            # issue 33). One small loose copy, not journalled: wb's packs hold it already (git's gc prunes it)
            journal = False
        data = self._deflate(kind, raw, body, sha, name) if name else zlib.compress(raw, 1)
        path.parent.mkdir(exist_ok=True)
        tmp = path.parent / f"tmp_obj_wb_{os.getpid()}_{sha[:8]}"
        try:
            with open(tmp, "wb") as fh:
                faults.no_space("gitthree_enospc_object_write", str(tmp))
                fh.write(data)
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except OSError:  # a full disk: no half-written temp object is left in .git/objects
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        if journal:
            self._written.append((sha, kind, name))
        return sha

    _TAIL_MIN = 4096  # a blob smaller than this is compressed whole, as any other object

    def _deflate(self, kind: str, raw: bytes, body: bytes, sha: str, name: str) -> bytes:
        """`raw` zlib'd for a loose object. A blob that starts with the last blob written for the same path (the
        event log, appended to on every write) reuses that blob's deflate segment and compresses only the tail
        (its window primed with the bytes before it): the stream is the same zlib format git reads, the cost no
        longer the whole file's. The segments are byte-aligned (Z_FULL_FLUSH); the blob header, which names the
        size, is a segment of its own in front."""
        import zlib

        if kind != "blob" or len(body) < self._TAIL_MIN:
            return zlib.compress(raw, 1)
        last = self._last_blob.get(name)
        if last is not None and len(body) > len(last[1]) and body.startswith(last[1]):
            prev = last[1]
            tail = zlib.compressobj(1, zlib.DEFLATED, -15, zdict=prev[-32768:])
            segment = last[2] + tail.compress(body[len(prev):]) + tail.flush(zlib.Z_FULL_FLUSH)
        else:
            segment = self._chunked(name, body)
        self._last_blob[name] = (sha, body, segment)
        head = zlib.compressobj(1, zlib.DEFLATED, -15)
        header = head.compress(raw[:len(raw) - len(body)]) + head.flush(zlib.Z_FULL_FLUSH)
        # 78 01: zlib's header (deflate, 32 KiB window, fastest); 03 00: an empty final block; then adler-32
        return b"\x78\x01" + header + segment + b"\x03\x00" + zlib.adler32(raw).to_bytes(4, "big")

    _CHUNK = 1 << 14  # a big blob changed in place is deflated in runs of this many bytes (see _chunked)

    def _chunked(self, name: str, body: bytes) -> bytes:
        """`body` deflated as byte-aligned segments, each of a run of _CHUNK bytes compressed on its own: a run
        whose bytes are the ones at the same place in the last blob written for the same path reuses that
        segment. board.json changes at its top (`last_event`) and its end (a task added) at each write: its other
        runs are not compressed again (issue 33: ~0.3 ms of each add at 5,000 tasks). A blob under four runs is
        one segment, as before."""
        import zlib

        if len(body) < 4 * self._CHUNK:
            self._last_runs.pop(name, None)
            whole = zlib.compressobj(1, zlib.DEFLATED, -15)
            return whole.compress(body) + whole.flush(zlib.Z_FULL_FLUSH)
        before = self._last_runs.get(name) or []
        runs: list[tuple[bytes, bytes]] = []
        for i, at in enumerate(range(0, len(body), self._CHUNK)):
            run = body[at:at + self._CHUNK]
            if i < len(before) and before[i][0] == run:
                runs.append(before[i])
                continue
            one = zlib.compressobj(1, zlib.DEFLATED, -15)
            runs.append((run, one.compress(run) + one.flush(zlib.Z_FULL_FLUSH)))
        self._last_runs[name] = runs
        return b"".join(segment for _run, segment in runs)

    def _write_tree(self, entries: dict[str, tuple[str, str]], name: str = "") -> str:
        items = tuple(entries.items())
        last = self._last_tree.get(name)
        if last is not None and last[0] == items:
            return self._write_object("tree", last[1], name)

        # git orders tree entries by name, comparing a directory's name as if it ended with '/'
        def key(name: str) -> bytes:
            return (name + "/" if entries[name][0] == "40000" else name).encode()

        body = b"".join(
            entries[n][0].encode() + b" " + n.encode() + b"\0" + bytes.fromhex(entries[n][1])
            for n in sorted(entries, key=key)
        )
        self._last_tree[name] = (items, body)
        return self._write_object("tree", body, name)

    def _workbench_tree(self, files: dict[str, tuple[str, str]]) -> str:
        """Build nested trees from {relative path under .workbench: (mode, blob sha)}."""
        root: dict = {}
        for rel, entry in files.items():
            node = root
            parts = rel.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = entry

        def build(node: dict, path: str) -> str:
            entries = {}
            for name, value in node.items():
                entries[name] = ("40000", build(value, f"{path}/{name}")) if isinstance(value, dict) else value
            return self._write_tree(entries, path)

        return build(root, WB_DIR)

    def blob_cache(self) -> BlobStatCache:
        if self._blob_cache is None:
            self._blob_cache = BlobStatCache(self.git_dir / "wb" / "blob-stat.json", self._algo)
        return self._blob_cache

    def _snapshot_files(self, reachable: set[str] | None = None) -> dict[str, tuple[str, str]]:
        """The files under .workbench/ as (mode, blob sha), each blob written. A file whose stat the blob cache
        knows is not read again when its blob is in `reachable` (the parent commit's .workbench/ blobs: present
        in the object store already); without `reachable`, every file is read and its blob written."""
        import stat

        base = str(self.worktree / WB_DIR)
        files: dict[str, tuple[str, str]] = {}
        cache = self.blob_cache()
        reachable = reachable or set()
        now = time.time_ns()
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES and not d.startswith(".tmp-"))
            # os.walk's folders are `base` and joins under it: the path under it is a slice (os.path.relpath
            # made both absolute again for each file: a millisecond a commit once log/ and archive/ hold dozens)
            prefix = "" if dirpath == base else dirpath[len(base) + 1:].replace(os.sep, "/") + "/"
            for name in filenames:
                if name in IGNORED_NAMES or name.startswith(".tmp-"):
                    continue
                full = os.path.join(dirpath, name)
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    continue  # never follow a link out of .workbench/
                rel = prefix + name
                mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"  # as git records it
                key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
                seen = cache.get(rel, key)
                if seen is not None and seen in reachable:
                    files[rel] = (mode, seen)
                    continue
                with open(full, "rb") as fh:
                    sha = self._write_object("blob", fh.read(), f"{WB_DIR}/{rel}")
                files[rel] = (mode, sha)
                cache.put(rel, key, sha, now)
        cache.keep_only(set(files))
        cache.save()
        return files

    def blob_id(self, data: bytes) -> str:
        """The id git gives a blob of `data` in this repository (nothing is written)."""
        from workbench.model import digest

        self.git_dir  # noqa: B018 - discovers the object format
        return digest.new(self._algo, f"blob {len(data)}\0".encode() + data).hexdigest()

    # -- reading commits ------------------------------------------------------------------------
    def committed_file(self, path: str, ref: str = "HEAD") -> bytes | None:
        """A file as committed at `ref` (None when absent, or when there is no commit yet)."""
        found = self._cat([f"{ref}:{path}"])[0]
        return found[1] if found else None

    def committed_wb_file(self, rel: str, ref: str) -> tuple[str, bytes] | None:
        """(blob id, bytes) of `.workbench/<rel>` in the commit `ref` names — the tree from this process's memory
        or the loose objects when it can (as the commit reads its parent), else one `git cat-file`. None when
        the commit has no such file, or there is no commit."""
        blob = self.committed_wb_blob(rel, ref)
        if blob is None:
            return None
        body = self._loose(blob, "blob")
        if body is None:
            found = self._cat([blob])[0]
            if found is None:
                return None
            body = found[1]
        return blob, body

    def committed_wb_blob(self, rel: str, ref: str) -> str | None:
        """The blob id of `.workbench/<rel>` in the commit `ref` names, read as `committed_wb_file` reads the trees
        (the blob itself unread); None when the commit has no such file, or there is no commit. Whether a file
        holds what is committed is then whether its bytes hash to it (`blob_id`)."""
        if ref == "HEAD":
            ref = self.symbolic_head() or "HEAD"
        parent, _root, files = self._parent_info(ref)
        entry = files.get(rel) if parent is not None else None
        return None if entry is None else entry[1]

    def known_blob(self, rel: str) -> str | None:
        """The blob id of `.workbench/<rel>` in the work tree as the blob cache knows it by its stat (None when
        it does not: read and hash the file to know)."""
        try:
            st = os.lstat(self.worktree / WB_DIR / rel)
        except OSError:
            return None
        return self.blob_cache().get(rel, (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))

    def _parent_info(self, ref: str) -> tuple[str | None, dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
        """(parent commit, its root tree entries, its .workbench files) — from this process's memory when the
        ref has not moved since our last commit, else from one `git cat-file --batch`."""
        if self._last and self._last[0] == ref and self._read_ref_fast(ref) == self._last[1]:
            return self._last[1], self._last[2], self._last[3]
        loose = self._parent_info_loose(ref)
        if loose is not None:
            return loose
        # the ref's commit as its loose ref file names it: read through git once per process (replace refs
        # could make git read other objects for the same id: then git says every time)
        named = None if (self.common_dir / "refs" / "replace").exists() else self._read_ref_fast(ref)
        if named is not None and self._parent_read is not None and self._parent_read[0] == named:
            return self._parent_read
        commit_obj = self._cat([f"{ref}^{{commit}}", f"{ref}^{{tree}}", f"{ref}:{WB_DIR}"])
        if commit_obj[0] is None:
            return None, {}, {}
        parent = commit_obj[0][0]
        root = self._parse_tree(commit_obj[1][1]) if commit_obj[1] else {}
        files: dict[str, tuple[str, str]] = {}
        pending = [("", commit_obj[2][1])] if commit_obj[2] else []
        while pending:  # walk subtrees of .workbench/ (artifacts/), one batch per level
            subtrees: list[tuple[str, str]] = []
            for prefix, body in pending:
                for name, (mode, sha) in self._parse_tree(body).items():
                    if mode == "40000":
                        subtrees.append((prefix + name + "/", sha))
                    else:
                        files[prefix + name] = (mode, sha)
            bodies = self._cat([sha for _prefix, sha in subtrees]) if subtrees else []
            pending = [(prefix, obj[1]) for (prefix, _sha), obj in zip(subtrees, bodies, strict=True) if obj]
        if named == parent:
            self._parent_read = (parent, root, files)
        return parent, root, files

    def _parent_info_loose(self, ref: str) -> tuple[str, dict[str, tuple[str, str]],
                                                    dict[str, tuple[str, str]]] | None:
        """_parent_info read from the loose ref and loose objects, as wb (and `git commit`) write them: no git
        process for the usual commit. None when any of them is not loose (packed by gc, fetched),
        or replace refs could change what git would read: then git says."""
        if (self.common_dir / "refs" / "replace").exists():
            return None
        parent = self._read_ref_fast(ref)
        if parent is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", parent):
            return None
        commit = self._loose(parent, "commit")
        if commit is None or not commit.startswith(b"tree "):
            return None
        root_body = self._loose(commit[5:commit.find(b"\n")].decode(errors="replace"), "tree")
        if root_body is None:
            return None
        root = self._parse_tree(root_body)
        files: dict[str, tuple[str, str]] = {}
        pending = [("", root[WB_DIR][1])] if root.get(WB_DIR, ("", ""))[0] == "40000" else []
        while pending:  # .workbench/ and its subtrees (artifacts/)
            prefix, sha = pending.pop()
            body = self._loose(sha, "tree")
            if body is None:
                return None
            for name, (mode, sub) in self._parse_tree(body).items():
                if mode == "40000":
                    pending.append((prefix + name + "/", sub))
                else:
                    files[prefix + name] = (mode, sub)
        return parent, root, files

    def _loose(self, sha: str, kind: str) -> bytes | None:
        """The body of loose object `sha` if it is one of `kind`, else None (packed, absent, unreadable)."""
        import zlib

        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            return None
        if kind == "blob":
            for known, body, _segment in self._last_blob.values():
                if known == sha:
                    return body
        try:
            raw = zlib.decompress((self.common_dir / "objects" / sha[:2] / sha[2:]).read_bytes())
        except (OSError, zlib.error):
            return None
        header, nul, body = raw.partition(b"\0")
        return body if nul and header == f"{kind} {len(body)}".encode() else None

    def _cat(self, specs: list[str]) -> list[tuple[str, bytes] | None]:
        return cat_batch(self.worktree, specs)

    def _exist(self, shas: list[str]) -> list[bool]:
        """Whether the object store has each object, in one `git cat-file --batch-check` (contents unread)."""
        return exist_batch(self.worktree, shas)

    def _parse_tree(self, body: bytes) -> dict[str, tuple[str, str]]:
        width = 20 if self._algo == "sha1" else 32
        entries: dict[str, tuple[str, str]] = {}
        pos = 0
        while pos < len(body):
            space = body.index(b" ", pos)
            nul = body.index(b"\0", space)
            mode = body[pos:space].decode()
            name = body[space + 1:nul].decode()
            entries[name] = (mode, body[nul + 1:nul + 1 + width].hex())
            pos = nul + 1 + width
        return entries

    def workbench_files_at(self, commit: str) -> dict[str, tuple[str, bytes]]:
        """{path under .workbench/: (mode, bytes)} as committed at `commit`, less what wb never commits (the
        lock, a `.cache/`, temp files): a state commit pushed by someone else cannot plant them here."""
        out = run_git(self.worktree, "ls-tree", "-r", "-z", commit, "--", WB_DIR + "/").stdout
        entries = []
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, kind, sha = meta.decode().split()
            rel = path.decode()[len(WB_DIR) + 1:]
            top = rel.split("/", 1)[0]
            if top in IGNORED_NAMES or top.startswith(".tmp-"):  # never wb's to commit, nor to take from one
                continue
            if kind == "blob":
                entries.append((rel, mode, sha))
        bodies = self._cat([sha for _p, _m, sha in entries])
        return {rel: (mode, body[1]) for (rel, mode, _sha), body in zip(entries, bodies, strict=True) if body}
