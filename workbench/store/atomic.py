"""The one place that writes workbench files durably."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from workbench import faults
from workbench.git.renames import exchange as _exchange

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.eventlog import Appended


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _file_mode()


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileChanged(Exception):
    """The file no longer holds the bytes its writer read: someone (a person's editor) saved it meanwhile, and
    it was left as they saved it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path.name} was saved by someone else while wb wrote it")


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new file `.tmp-RANDOM-NAME` in `path`'s directory, mode 0600, opened for writing: what
    tempfile.mkstemp makes, without importing tempfile and random on every write (issue 33)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = str(path.parent / f".tmp-{os.urandom(6).hex()}-{path.name}")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write(path: Path, data: bytes, *, durable: bool = True, sync_dir: bool = True,
                 expect: bytes | None = None) -> os.stat_result:
    """Write `data` to `path` so that a reader sees the old bytes or the new bytes, never a mix.

    Temp file in the same directory, fsync, os.replace, fsync of the directory. `durable=False` skips
    the fsyncs, for caches that can be rebuilt. `sync_dir=False` skips only the directory's fsync: after a
    power cut the file is then whole, old or new — for snapshots the event log can bring up to date.
    `expect`: the bytes the writer read; when the file holds others just before the rename (a person saved it
    meanwhile), nothing is replaced and FileChanged is raised. A file that is gone is written. With `expect`,
    the rename swaps the two files (Linux `renameat2(RENAME_EXCHANGE)`), so a save landing between the last
    look and the rename is not destroyed but comes back in the temp file's place, and is put back.
    Returns the stat of the bytes written (taken before the rename: a save just after it has another), for
    a cache that tells wb's own write from a person's by stat.
    """
    staged = Staged(path, data)
    if durable:
        staged.sync()
    return staged.put(expect=expect, sync_dir=durable and sync_dir, durable=durable)


class Staged:
    """An atomic write in two steps: the temp file beside `path` written now, renamed in by `put` (what
    atomic_write does in one go). Several writes staged together are made durable together (`sync_together`:
    their fsyncs overlap, one journal commit of the file system for all) before the first is renamed in."""

    def __init__(self, path: Path, data: bytes) -> None:
        refuse_links_under_workbench(path)
        self.path, self.data = path, data
        fd, self.tmp = _temp_beside(path)
        try:
            os.fchmod(fd, _FILE_MODE)  # mkstemp makes 0600; a workbench file is as readable as any other
            self._fh = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            self.drop()
            raise
        try:
            self._fh.write(data)
            self._fh.flush()
        except BaseException:
            self.drop()
            raise

    def sync(self) -> None:
        try:
            self.fsync()
        except BaseException:
            self.drop()
            raise

    def fsync(self) -> None:
        """Make the temp file's bytes durable (no clean-up on failure: sync_together drops them all)."""
        os.fsync(self._fh.fileno())

    def put(self, *, expect: bytes | None = None, sync_dir: bool = False, durable: bool = True) -> os.stat_result:
        """Rename the temp file in (see atomic_write). Returns the stat of the bytes written."""
        path, tmp = self.path, self.tmp
        try:
            written = os.fstat(self._fh.fileno())
            self._fh.close()
            faults.point("before_rename:" + path.name)
            if expect is not None and read_or_none(path) not in (expect, None):
                raise FileChanged(path)
            faults.point("after_look:" + path.name)
            if expect is not None and _exchange(tmp, path):
                _keep_displaced(tmp, path, self.data, expect)
            elif durable or not _exchange(tmp, path):
                os.replace(tmp, path)
            else:
                # a cache, not synced: swapped in and the old file unlinked, where a rename over it would have
                # the file system start writing the new one out at once (ext4's auto_da_alloc), ~0.1 ms a file
                os.unlink(tmp)
        except BaseException:
            self.drop()
            raise
        if sync_dir:
            fsync_dir(path.parent)
        return written

    def drop(self) -> None:
        """Give up the write: the temp file goes, the target is as it was."""
        fh = getattr(self, "_fh", None)
        if fh is not None:
            fh.close()
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


def sync_together(staged: list[Staged], log: Appended | None = None) -> None:
    """fsync every staged write, and `log` (an append to the event log not yet durable) with them, overlapping
    (all but the last on threads of their own): the file system commits its journal once for all of them rather
    than once each. Any failure drops them all, the log's batch included (it was never acknowledged); success
    leaves the log's batch durable and its file closed."""
    syncs: list[Staged | Appended] = [*staged, *([log] if log is not None else [])]
    if len(syncs) < 2:
        for one in staged:
            one.sync()
        if log is not None:
            log.sync()
        return
    import _thread

    errors: list[BaseException] = []
    waits = []
    jobs = _fsync_queue()
    for job in syncs[:-1]:  # each on a thread of the pool, the last on this one
        done = _thread.allocate_lock()
        done.acquire()
        jobs.put((job.fsync, errors, done))
        waits.append(done)
    try:
        syncs[-1].fsync()
    except BaseException as err:
        errors.append(err)
    for done in waits:
        done.acquire()
    if errors:
        for each in syncs:
            each.drop()
        raise errors[0]
    if log is not None:
        log.close()


_POOL: tuple[int, Any] | None = None  # (the process it was started in, its queue of fsyncs)


_DISCARDS: list[tuple[int, Any]] = []  # the unlinks `discard` handed to the pool: (pid, a lock released when done)


def discard(path: str) -> None:
    """Unlink `path` (an old snapshot a swap displaced) on a thread of the pool: freeing an fsynced file's blocks
    took 0.1–2 ms of a write (more on a busy disk, and more for a bigger board), now spent while the write goes
    on to its commit. `settle_discards` waits for them; until then the file is a `.tmp-*` no reader looks at."""
    import _thread

    def unlink() -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    done = _thread.allocate_lock()
    done.acquire()
    _fsync_queue().put((unlink, [], done))
    _DISCARDS.append((os.getpid(), done))


def settle_discards() -> None:
    """Wait for every unlink `discard` handed to the pool (a transaction does, before it lets go of its lock)."""
    while _DISCARDS:
        pid, done = _DISCARDS.pop()
        if pid == os.getpid():  # a forked child has none of its parent's pool threads to wait for
            done.acquire()


def _fsync_queue() -> Any:
    """The queue of a few threads kept for sync_together's fsyncs (and `discard`'s unlinks): a thread started per
    fsync cost ~0.3 ms of a mutation (its start waits until it runs; issue 33). Started again in a forked child
    (threads do not fork). Plain _thread threads, as threading's daemon threads are (none is waited for at exit),
    without importing threading (a commit's git processes no longer import it either: git/spawn.py) nor waiting
    for each to start."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        import _thread
        from _queue import SimpleQueue  # queue.SimpleQueue itself: queue.py would bring heapq along (issue 33)

        jobs: SimpleQueue[Any] = SimpleQueue()

        def work() -> None:
            while True:
                job, errors, done = jobs.get()
                try:
                    job()
                except BaseException as err:  # re-raised by the caller's thread
                    errors.append(err)
                finally:
                    done.release()

        for _ in range(2):
            _thread.start_new_thread(work, ())
        _POOL = (os.getpid(), jobs)
    return _POOL[1]


def _keep_displaced(tmp: str, path: Path, data: bytes, expect: bytes) -> None:
    """After the swap, `tmp` holds what `path` held. When that is what the writer read, it goes; when it is a
    save that landed in the last moment, it is swapped back and FileChanged is raised, the person's file in
    place. (Should they have saved yet again over the writer's file between the two swaps, that newer save
    comes out instead, and is swapped back in: the person's last save stands.)"""
    if read_or_none(Path(tmp)) == expect:
        discard(tmp)
        return
    if _exchange(tmp, path) and read_or_none(Path(tmp)) != data:
        _exchange(tmp, path)
    os.unlink(tmp)
    raise FileChanged(path)


def append_lines(path: Path, lines: list[str]) -> None:
    """Append whole lines in one write and fsync them; a torn last line left by a crash is dropped first."""
    blob = "".join(line + "\n" for line in lines).encode("utf-8")
    refuse_links_under_workbench(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        size = os.fstat(fd).st_size
        whole = _whole_lines_end(fd, size)
        if whole != size:
            os.ftruncate(fd, whole)
            size = whole
        os.lseek(fd, size, os.SEEK_SET)
        try:
            if os.write(fd, blob) != len(blob):  # a disk that fills up mid-write writes short, silently
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, size)  # lines not wholly durable were never acknowledged: take them back
            raise
    finally:
        os.close(fd)


def truncate_torn_line(path: Path) -> int:
    """Cut a torn last line (no newline: an interrupted append, never acknowledged) off a JSON Lines file and
    fsync it. Returns the bytes removed."""
    refuse_links_under_workbench(path)
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        cut = _whole_lines_end(fd, size)
        if cut != size:
            os.ftruncate(fd, cut)
            os.fsync(fd)
        return size - cut
    finally:
        os.close(fd)


def torn_line_bytes(path: Path) -> int:
    """The bytes of a torn last line of a JSON Lines file (0 when it ends with a newline, or is absent)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return 0
    try:
        size = os.fstat(fd).st_size
        return size - _whole_lines_end(fd, size)
    finally:
        os.close(fd)


def _whole_lines_end(fd: int, size: int) -> int:
    """The size of the file's whole lines: its size, less a torn last line (within the last 64 KiB)."""
    if not size:
        return 0
    tail = os.pread(fd, min(size, 1 << 16), max(0, size - (1 << 16)))
    if tail.endswith(b"\n"):
        return size
    cut = tail.rfind(b"\n")
    return size - len(tail) + cut + 1 if cut >= 0 else (0 if size <= 1 << 16 else size)


# -- files of .workbench/ written outside the transaction ------------------------------------------------------
def write_workbench_file(wb_dir: Path, rel: str, data: bytes, *, durable: bool = True) -> Path:
    """Write a whole file of `.workbench/` atomically (`rel` is relative to it), creating its folder: the one
    way a write that cannot be a transaction (an artifact, a migration's files and intent) reaches the
    workbench. Never through a symbolic link, never outside `wb_dir`."""
    target = _inside(wb_dir, rel)
    _no_link(wb_dir, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data, durable=durable)
    return target


def remove_workbench_file(wb_dir: Path, rel: str) -> bool:
    """Remove a file of `.workbench/` durably (the directory is fsynced). Returns whether it was there.
    Never through a symbolic link (a linked folder would have it delete a file elsewhere)."""
    target = _inside(wb_dir, rel)
    _no_link(wb_dir, target)
    try:
        target.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(target.parent)
    return True


def remove_workbench_dir(wb_dir: Path, rel: str) -> bool:
    """Remove a folder of `.workbench/` and everything in it (a link inside is removed, never followed; the
    folder itself, or one on its way, being a link is refused). Returns whether it was there."""
    import shutil

    target = _inside(wb_dir, rel)
    _no_link(wb_dir, target)
    if not target.is_dir():
        return False
    shutil.rmtree(target)  # fd-based on Linux: never follows a link, even one swapped in meanwhile
    fsync_dir(target.parent)
    return True


def remove_temp_files(wb_dir: Path) -> int:
    """Remove the temp files interrupted atomic writes left in `.workbench/` (the caller holds the lock, so
    none is in flight). Returns how many there were."""
    _no_link(wb_dir, wb_dir)  # a linked .workbench: its files are elsewhere (subfolders: rglob never follows)
    temps = [path for path in wb_dir.rglob(".tmp-*") if path.is_file() and not path.is_symlink()]
    for path in temps:
        path.unlink(missing_ok=True)
    return len(temps)


def _inside(wb_dir: Path, rel: str) -> Path:
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise ValueError(f"not a path inside .workbench/: {rel!r}")
    return wb_dir.joinpath(*parts)


def _no_link(wb_dir: Path, target: Path) -> None:
    from workbench.errors import Refused

    node = target
    while node != wb_dir.parent:
        if node.is_symlink():
            raise Refused(f"{node.relative_to(wb_dir.parent).as_posix()} is a symbolic link: wb writes only "
                          "inside .workbench/ (replace the link with the real file or directory)")
        node = node.parent


def refuse_links_under_workbench(path: Path) -> None:
    """Refuse a write or a delete of `path` when it lies under a `.workbench/` and it, or any folder between it
    and that `.workbench` (included), is a symbolic link: a clone or an agent can commit one, and wb would
    write through it to anywhere. Paths elsewhere (the git directory, a temp file) are not looked at."""
    from workbench.model.layout import WB_DIR

    parts = path.parts
    if WB_DIR not in parts:
        return
    top = len(parts) - 1 - parts[::-1].index(WB_DIR)
    if ".git" in parts[top + 1:]:  # the git directory of a repository that sits in some `.workbench/` folder
        return
    _no_link(Path(*parts[:top + 1]), path)
