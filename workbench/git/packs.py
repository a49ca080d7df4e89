"""wb's own packs: the loose objects wb writes, folded into packs where the versions of a file delta against
each other, so a mutation costs git about what a plain commit costs (issue 20).

Every commit wb makes writes loose objects: a new full copy of events.jsonl's tail, board.json and state.md,
and the trees above them. Loose, each is zlib'd whole — ~7 KB per `wb task add` on a big board, where a plain
one-line commit adds ~350 B. In a pack, a version of a file is stored as a delta against the next (newer)
version, tens of bytes; the newest is whole. So:

- `record` journals the objects wb writes (`<common git dir>/wb/objects.journal`, one `sha name` line each,
  appended before the ref moves), and
- every `git.pack_every` commits (config.yaml; 0 turns it off) `pack` folds the journalled objects that are still
  loose, with wb's *recent* pack, into one new pack (`git pack-objects --delta-base-offset`: the new versions
  delta against the previous ones, which are in the recent pack). The recent pack is rewritten until it holds
  SEAL_OBJECTS objects or SEAL_BYTES; then it is sealed and a new recent pack starts. Sealed packs are merged
  two of the same level at a time (a binary counter), so wb keeps few packs and each object is rewritten
  O(log n) times.
- A pack run is not part of the write that makes it due (issue 33: it took 60–400 ms, the write 20–60 ms, so
  one write in 16 paid for many): `maybe_pack` starts it on a thread of its own and returns, the commit made and
  acknowledged already. It is housekeeping under its own lock (`packs.lock`), as safe beside a later write of
  this process as beside another process's: it only folds objects that are loose and journalled already. A
  command line waits for it before it ends (`wait_all`, cli/main.py), as does `Bench.close()`, and so does the
  interpreter at exit (the thread is not a daemon): no process leaves a pack run behind it.
- Nothing is deleted that is not verified present in the new pack: its .idx is read and each object looked up,
  and the pack's trailer checked against the .idx. A loose object is unlinked only after the new pack and its
  record (`<common git dir>/wb/packs.json`) are in place; an old pack only once every object of it is in the
  new one. A kill at any step leaves every object loose or in a complete pack (the .idx is renamed in last),
  and the next pack run picks up the journal, an unrecorded pack, or the temp files where it stopped.

The user's own git is untouched: wb's packs are ordinary packs in objects/pack (no .keep), so `git gc`
repacks them with everything else, fsck, clone, push and fetch read them as any pack; a recorded pack gc
removed is simply forgotten. `PackIndex` lets the object writer see packed objects without running git.
"""

from __future__ import annotations

import json
import mmap
import os
import time
import weakref
from pathlib import Path

from workbench import faults

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    import threading

JOURNAL = "objects.journal"
STATE = "packs.json"
SEAL_OBJECTS = 4096  # the recent pack is rewritten until it holds this many objects (~600 wb commits)
SEAL_BYTES = 1 << 20  # or this many bytes (a rewrite copies it: its cost stays bounded)
DEFAULT_EVERY = 16  # commits between pack runs (git.pack_every): a git process per 16 commits
WINDOW, DEPTH = 10, 1000  # delta search window; long chains: a file has ~1000 versions between seals
STALE_LOCK_S = 600.0
_IDX_MAGIC = b"\377tOc"


# -- reading git's pack index (.idx v2) -------------------------------------------------------------------------
class Idx:
    """One pack's .idx, read in place (mmap): the object ids it holds, and a lookup by binary search."""

    def __init__(self, path: Path, width: int) -> None:
        self.path = path
        self.width = width
        with open(path, "rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        m = self._map
        if len(m) < 8 + 1024 + 2 * width or m[:4] != _IDX_MAGIC or int.from_bytes(m[4:8], "big") != 2:
            raise ValueError(f"{path.name}: not a version 2 pack index")
        self.count = int.from_bytes(m[8 + 1020:8 + 1024], "big")
        if len(m) < 8 + 1024 + self.count * (width + 8) + 2 * width:
            raise ValueError(f"{path.name}: truncated")
        self.pack_checksum = bytes(m[len(m) - 2 * width:len(m) - width])

    def _sha_at(self, i: int) -> bytes:
        start = 8 + 1024 + i * self.width
        return self._map[start:start + self.width]

    def __contains__(self, sha: str) -> bool:
        key = bytes.fromhex(sha)
        if len(key) != self.width:
            return False
        first = key[0]
        lo = int.from_bytes(self._map[8 + 4 * (first - 1):8 + 4 * first], "big") if first else 0
        hi = int.from_bytes(self._map[8 + 4 * first:8 + 4 * first + 4], "big")
        while lo < hi:
            mid = (lo + hi) // 2
            here = self._sha_at(mid)
            if here == key:
                return True
            if here < key:
                lo = mid + 1
            else:
                hi = mid
        return False

    def shas(self) -> set[str]:
        return {self._sha_at(i).hex() for i in range(self.count)}

    def close(self) -> None:
        self._map.close()


class PackIndex:
    """Which objects the repository's packs hold (every .idx in objects/pack, git's and wb's), re-read when the
    pack directory changes. Lets `_write_object` reuse a packed object instead of writing it loose again."""

    def __init__(self, objects: Path, width: int) -> None:
        self.dir = objects / "pack"
        self.width = width
        self._key: tuple[int, int] | None = None
        self._idx: list[Idx] = []

    def _load(self) -> None:
        try:
            st = self.dir.stat()
        except OSError:
            self._key, self._idx = None, []
            return
        key = (st.st_mtime_ns, st.st_ino)
        if key == self._key:
            return
        for old in self._idx:
            old.close()
        found = []
        for path in sorted(self.dir.glob("pack-*.idx")):
            if not path.with_suffix(".pack").exists():
                continue
            try:
                found.append(Idx(path, self.width))
            except (OSError, ValueError):
                continue  # being written or removed: git would not read it either
        self._key, self._idx = key, found

    def find(self, sha: str) -> Path | None:
        """The .pack holding `sha`, or None."""
        self._load()
        for idx in self._idx:
            if sha in idx:
                return idx.path.with_suffix(".pack")
        return None


# -- the packer ------------------------------------------------------------------------------------------------
_RUNNING: weakref.WeakSet[threading.Thread] = weakref.WeakSet()  # every pack run started, while it is referenced


def wait_all() -> None:
    """Return once every pack run this process started has ended (a command line, before it exits)."""
    for thread in list(_RUNNING):
        thread.join()


class Packer:
    """Journal and fold wb's loose objects (see the module's docstring). All files are in `<common>/wb/`."""

    def __init__(self, worktree: Path, common_dir: Path, width: int) -> None:
        self.worktree = worktree
        self.objects = common_dir / "objects"
        self.packdir = self.objects / "pack"
        self.wb = common_dir / "wb"
        self.width = width
        self.every = DEFAULT_EVERY
        self._thread: threading.Thread | None = None  # the pack run started by maybe_pack, while it runs

    # journal
    def record(self, entries: list[tuple[str, str, str]]) -> None:
        """Journal objects just written loose: (sha, kind, name). One append (O_APPEND: concurrent writers' lines
        do not interleave). A lost line only leaves an object loose, for git's own gc."""
        if not entries or self.every <= 0:
            return
        data = "".join(f"{sha} {kind} {name}\n" for sha, kind, name in entries).encode()
        try:
            self.wb.mkdir(exist_ok=True)
            fd = os.open(self.wb / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            pass

    def due(self) -> bool:
        """Whether the journal holds `every` commits (or a pack run was left unfinished)."""
        if self.every <= 0:
            return False
        if (self.wb / (JOURNAL + ".packing")).exists():
            return True
        try:
            with open(self.wb / JOURNAL, "rb") as fh:
                return fh.read().count(b" commit ") >= self.every
        except OSError:
            return False

    def maybe_pack(self) -> None:
        """After a commit: fold the journal into wb's packs when it is due, on a thread of its own (see the
        module's docstring): the write that made it due does not wait for it. Never fails the commit: packing is
        housekeeping (the objects are loose and complete already)."""
        if self._thread is not None and self._thread.is_alive():
            return  # still at the last run: a later commit looks again
        if not self.due():
            return
        import threading

        thread = threading.Thread(target=self._pack_quietly, name="wb-pack")
        self._thread = thread
        _RUNNING.add(thread)
        thread.start()

    def _pack_quietly(self) -> None:
        try:
            self.pack()
        except Exception:  # noqa: BLE001 — a bad record, a failing git: the commit stands, the next run retries
            pass

    def wait(self) -> None:
        """Return once the pack run maybe_pack started (if any) has ended."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()

    # state
    def _load_state(self) -> dict:
        try:
            state = json.loads((self.wb / STATE).read_text())
        except (OSError, ValueError):
            state = {}
        if not isinstance(state, dict):
            state = {}

        def names(value: object) -> list[str]:
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        recent = state.get("recent")
        sealed = state.get("sealed")
        return {  # a record of the wrong shape is read as far as it makes sense (its packs are gc's then)
            "recent": recent if isinstance(recent, str) else None,
            "sealed": [{"name": e["name"], "level": e.get("level") if isinstance(e.get("level"), int) else 0}
                       for e in (sealed if isinstance(sealed, list) else [])
                       if isinstance(e, dict) and isinstance(e.get("name"), str)],
            "incoming": names(state.get("incoming")),
            "retired": names(state.get("retired")),  # folded into a newer pack, to delete (a kill left them)
        }

    def _save_state(self, state: dict) -> None:
        tmp = self.wb / (STATE + f".tmp-{os.getpid()}")
        with open(tmp, "w") as fh:
            # no fsync: a record lost to a power cut only leaves a pack unrecorded (its objects duplicated, never
            # lost: nothing is deleted on the word of this record, only on a pack's index)
            json.dump(state, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.wb / STATE)

    def _exists(self, name: str) -> bool:
        return (self.packdir / f"{name}.idx").exists() and (self.packdir / f"{name}.pack").exists()

    def _names(self, name: str) -> dict[str, str]:
        try:
            found = json.loads((self.wb / "packs" / f"{name}.names").read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    # the lock: one pack run at a time; a busy lock means another process is at it, and this one skips
    def _lock(self) -> bool:
        path = self.wb / "packs.lock"
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    pid = int(path.read_text().strip() or 0)
                    age = time.time() - path.stat().st_mtime
                except (OSError, ValueError):
                    pid, age = 0, STALE_LOCK_S + 1
                if (_alive(pid) or pid == 0 and age < 5) and age < STALE_LOCK_S:  # 0: its pid not written yet
                    return False
                try:
                    os.unlink(path)  # its packer was killed: every step it left is picked up below
                except FileNotFoundError:
                    pass
                continue
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            return True
        return False

    def _unlock(self) -> None:
        try:
            os.unlink(self.wb / "packs.lock")
        except FileNotFoundError:
            pass

    def pack(self) -> str | None:
        """One pack run. Returns the recent pack's name (None: nothing to do, or another process packs)."""
        self.wb.mkdir(exist_ok=True)
        if not self._lock():
            return None
        try:
            return self._pack()
        finally:
            self._unlock()

    def _take_journal(self) -> Path:
        working = self.wb / (JOURNAL + ".packing")
        journal = self.wb / JOURNAL
        if not working.exists():
            try:
                os.replace(journal, working)
            except FileNotFoundError:
                working.touch()
        elif journal.exists():  # a run killed earlier: add what came since to its journal
            with open(journal, "rb") as src:
                data = src.read()
            with open(working, "ab") as dst:
                dst.write(data)
                dst.flush()
                os.fsync(dst.fileno())
            os.unlink(journal)
        return working

    def _pack(self) -> str | None:
        tmp = self.wb / "packs-tmp"
        if tmp.exists():  # a killed run's half-written pack: never renamed into objects/pack, nothing refers to it
            for leftover in tmp.iterdir():
                leftover.unlink()
        tmp.mkdir(exist_ok=True)
        (self.wb / "packs").mkdir(exist_ok=True)
        state = self._load_state()
        self._remove_retired(state)
        working = self._take_journal()
        loose: dict[str, str] = {}
        for line in working.read_text(errors="replace").splitlines():
            sha, _, rest = line.partition(" ")
            _kind, _, name = rest.partition(" ")
            if len(sha) == 2 * self.width and self._loose_path(sha).exists():
                loose.pop(sha, None)  # kept in the order of its last write
                loose[sha] = name
        # what to fold: the recent pack, any pack a killed run put in place but did not record, the loose objects
        fold = [n for n in [state["recent"], *state["incoming"]] if n and self._exists(n)]
        fold = list(dict.fromkeys(fold))
        if state["recent"] and state["recent"] in fold:
            recent_idx = Idx(self.packdir / f"{state['recent']}.idx", self.width)
            full = recent_idx.count >= SEAL_OBJECTS or \
                (self.packdir / f"{state['recent']}.pack").stat().st_size >= SEAL_BYTES
            recent_idx.close()
            if full:  # sealed: never rewritten again, except when merged with its equal
                state["sealed"].append({"name": state["recent"], "level": 0})
                fold.remove(state["recent"])
                state["recent"] = None
        state["sealed"] = [s for s in state["sealed"] if self._exists(s["name"])]  # gc may have repacked them
        for names_file in (self.wb / "packs").glob("*.names"):  # of a pack gone (gc), or never put in place
            if not (self.packdir / f"{names_file.stem}.idx").exists():
                names_file.unlink()
        if not loose and (fold == [state["recent"]] or not fold):
            self._save_state({**state, "incoming": []})
            os.unlink(working)
            self._merge_sealed(state)
            return state["recent"]
        name = self._combine(fold, loose, state, tmp)
        state["recent"], state["incoming"] = name, []
        state["retired"] = [old for old in fold if old != name]
        self._save_state(state)
        faults.point("packs_after_record")
        new = self._shas(name)
        self._remove_retired(state, new)
        pruned = 0
        for sha in loose:
            if sha in new:  # verified in the new pack's index: the loose copy can go
                try:
                    os.unlink(self._loose_path(sha))
                except FileNotFoundError:
                    pass
                pruned += 1
                if pruned == 1:
                    faults.point("packs_mid_prune")
        os.unlink(working)
        self._merge_sealed(state)
        return name

    def _merge_sealed(self, state: dict) -> None:
        """Two sealed packs of the same level become one of the next level (a binary counter)."""
        while True:
            levels: dict[int, list[dict]] = {}
            for s in state["sealed"]:
                levels.setdefault(int(s.get("level", 0)), []).append(s)
            pair = next((v[:2] for _lvl, v in sorted(levels.items()) if len(v) >= 2), None)
            if pair is None:
                return
            tmp = self.wb / "packs-tmp"
            names = [p["name"] for p in pair]
            state["incoming"] = []
            name = self._combine(names, {}, state, tmp)
            level = max(int(p.get("level", 0)) for p in pair) + 1
            state["sealed"] = [s for s in state["sealed"] if s["name"] not in names] + [{"name": name, "level": level}]
            state["incoming"] = []
            state["retired"] = [old for old in names if old != name]
            self._save_state(state)
            self._remove_retired(state, self._shas(name))

    def _combine(self, packs: list[str], loose: dict[str, str], state: dict, tmp: Path) -> str:
        """One new pack holding every object of `packs` and `loose`, verified, renamed into objects/pack, and
        recorded as incoming (so a kill before the caller records it still finds it). Returns its name."""
        import subprocess

        # Names steer git's delta search (it groups objects by a hash of their path). Each pack records its
        # *tips*: the newest version of each path. A tip of a folded pack keeps its name, so it becomes a delta
        # against the newer version beside it; an older version does not, or git would delta the new version
        # against that older, bigger one and keep the old tip's delta forever (reused): a whole copy per run.
        members: dict[str, str] = {}
        tips: dict[str, str] = {}  # path → its newest object
        for p in packs:  # oldest first
            idx = Idx(self.packdir / f"{p}.idx", self.width)
            try:
                members.update(dict.fromkeys(idx.shas(), ""))
            finally:
                idx.close()
            for sha, path in self._names(p).items():
                if sha in members and path:
                    members[sha] = path
                    tips[path] = sha
        for sha, path in loose.items():  # in the journal's order: the last of a path is its newest
            members[sha] = path
            if path:
                tips[path] = sha
        lines = "".join(f"{sha} {name}\n" if name else f"{sha}\n" for sha, name in members.items())
        env = dict(os.environ)
        for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
            env.pop(var, None)
        proc = subprocess.run(
            ["git", "-c", "pack.packSizeLimit=0", "-c", "pack.writeBitmaps=false",
             "-c", "pack.writeReverseIndex=false",  # one pack, and only the .pack and its .idx
             # one thread: threads split git's list of objects, and each part starts a whole copy of a file again
             "pack-objects", "-q", "--threads=1", "--delta-base-offset", f"--window={WINDOW}", f"--depth={DEPTH}",
             str(tmp / "wb")],
            cwd=self.worktree, input=lines.encode(), capture_output=True, env=env)
        out = proc.stdout.decode(errors="replace").split()
        if proc.returncode != 0 or len(out) != 1:
            raise RuntimeError(f"git pack-objects failed: {proc.stderr.decode(errors='replace').strip()[-200:]}")
        digest = out[0]
        made = sorted(tmp.glob(f"wb-{digest}.*"))
        idx_path, pack_path = tmp / f"wb-{digest}.idx", tmp / f"wb-{digest}.pack"
        idx = Idx(idx_path, self.width)
        try:
            held = idx.shas()
            missing = [sha for sha in members if sha not in held]
            if missing:
                raise RuntimeError(f"the new pack lacks {len(missing)} objects (first {missing[0]})")
            with open(pack_path, "rb") as fh:
                head = fh.read(12)
                fh.seek(-self.width, os.SEEK_END)
                trailer = fh.read(self.width)
            if head[:4] != b"PACK" or int.from_bytes(head[8:12], "big") != idx.count or trailer != idx.pack_checksum:
                raise RuntimeError("the new pack does not match its index")
        finally:
            idx.close()
        faults.point("packs_after_pack_written")
        name = f"pack-{digest}"
        names = {sha: path for path, sha in tips.items()}
        names_path = self.wb / "packs" / f"{name}.names"
        names_path.with_suffix(".tmp").write_text(json.dumps(names, sort_keys=True))
        os.replace(names_path.with_suffix(".tmp"), names_path)
        state["incoming"] = [*state["incoming"], name]
        self._save_state(state)
        for part in sorted(made, key=lambda p: p.suffix == ".idx"):  # the .idx last: git reads a pack by it
            os.replace(part, self.packdir / f"{name}{part.suffix}")
        _fsync_dir(self.packdir)
        faults.point("packs_after_pack_in_place")
        return name

    def _shas(self, name: str) -> set[str]:
        idx = Idx(self.packdir / f"{name}.idx", self.width)
        try:
            return idx.shas()
        finally:
            idx.close()

    def _remove_retired(self, state: dict, superset: set[str] | None = None) -> None:
        """Delete the packs a newer one holds (`retired`), each verified against `superset` (default: the pack
        the last run recorded, recent or sealed, whose objects include it), and record that they are gone."""
        if not state["retired"]:
            return
        if superset is None:
            newest = state["recent"] or (state["sealed"][-1]["name"] if state["sealed"] else None)
            if not newest or not self._exists(newest):
                return
            superset = self._shas(newest)
        for old in state["retired"]:
            if old not in (state["recent"], *(s["name"] for s in state["sealed"])):
                self._remove_pack(old, superset)
        state["retired"] = []
        self._save_state(state)

    def _remove_pack(self, name: str, superset: set[str]) -> None:
        """Delete pack `name` — only when every object of it is in `superset` (the ids a newer pack's index holds)."""
        try:
            held = self._shas(name)
        except (OSError, ValueError):
            return
        if not held <= superset:
            return  # it holds objects the new pack lacks: kept (git gc packs it with the rest)
        (self.packdir / f"{name}.idx").unlink()  # first: git no longer looks in the pack
        for suffix in (".pack", ".rev", ".bitmap", ".promisor", ".mtimes"):
            try:
                (self.packdir / f"{name}{suffix}").unlink()
            except FileNotFoundError:
                pass
        try:
            (self.wb / "packs" / f"{name}.names").unlink()
        except FileNotFoundError:
            pass

    def _loose_path(self, sha: str) -> Path:
        return self.objects / sha[:2] / sha[2:]


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
