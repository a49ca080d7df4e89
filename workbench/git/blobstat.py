"""The blob ids of `.workbench/`'s files as last hashed, by path and stat, kept across processes: a commit does
not read and hash again what has not changed (git/objects.py asks it)."""

from __future__ import annotations

import os
import re
from pathlib import Path


class BlobStatCache:
    """The blob id of each file under .workbench/ as last hashed, by path and stat, kept across processes in
    `<git dir>/wb/blob-stat.json`: a command's commit does not read and hash again the sealed log segments and
    archive chunks that have not changed (git's index does the same for `git add`).

    An entry is (size, mtime_ns, inode, ctime_ns) → sha. It is trusted only while the file's stat is that
    same quadruple — any write changes mtime and ctime, and ctime cannot be set back — and, like git's racy
    timestamps, an entry is recorded only for a file whose last change is RACY_NS old, so a write in the same
    clock tick as the hash cannot hide behind an unchanged stat. A cache that cannot be read is an empty one;
    one that cannot be written is not kept (the next commit hashes again): it is a cache, never the truth."""

    RACY_NS = 2_000_000_000
    VERSION = 1

    def __init__(self, path: Path, algo: str) -> None:
        self.path = path
        self.algo = algo
        self._entries: dict[str, tuple[tuple[int, int, int, int], str]] | None = None
        self._dirty = False

    def _load(self) -> dict[str, tuple[tuple[int, int, int, int], str]]:
        if self._entries is not None:
            return self._entries
        import json

        entries: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        try:
            data = json.loads(self.path.read_bytes())
            if isinstance(data, dict) and data.get("v") == self.VERSION and data.get("algo") == self.algo:
                for rel, row in dict(data.get("files") or {}).items():
                    if (isinstance(row, list) and len(row) == 5 and all(type(x) is int for x in row[:4])
                            and isinstance(row[4], str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", row[4])):
                        entries[str(rel)] = ((row[0], row[1], row[2], row[3]), row[4])
        except (OSError, ValueError, TypeError, AttributeError):
            entries = {}
        self._entries = entries
        return entries

    def get(self, rel: str, key: tuple[int, int, int, int]) -> str | None:
        seen = self._load().get(rel)
        return seen[1] if seen is not None and seen[0] == key else None

    def put(self, rel: str, key: tuple[int, int, int, int], sha: str, now_ns: int) -> None:
        """Record `sha` for the file at `rel` with stat `key` — unless it changed too recently to be sure."""
        entries = self._load()
        if max(key[1], key[3]) >= now_ns - self.RACY_NS:
            if entries.pop(rel, None) is not None:
                self._dirty = True
            return
        if entries.get(rel) != (key, sha):
            entries[rel] = (key, sha)
            self._dirty = True

    def keep_only(self, rels: set[str]) -> None:
        """Forget the files that are gone."""
        entries = self._load()
        for rel in [r for r in entries if r not in rels]:
            del entries[rel]
            self._dirty = True

    def save(self) -> None:
        if not self._dirty or self._entries is None:
            return
        import json

        body = json.dumps({"v": self.VERSION, "algo": self.algo,
                           "files": {rel: [*key, sha] for rel, (key, sha) in sorted(self._entries.items())}},
                          separators=(",", ":")).encode()
        tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        try:
            self.path.parent.mkdir(exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(body)
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
