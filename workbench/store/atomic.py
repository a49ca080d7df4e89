"""The one place that writes workbench files durably."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from workbench import faults


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


def atomic_write(path: Path, data: bytes, *, durable: bool = True, sync_dir: bool = True) -> None:
    """Write `data` to `path` so that a reader sees the old bytes or the new bytes, never a mix.

    Temp file in the same directory, fsync, os.replace, fsync of the directory. `durable=False` skips
    the fsyncs, for caches that can be rebuilt. `sync_dir=False` skips only the directory's fsync: after a
    power cut the file is then whole, old or new — for snapshots the event log can bring up to date.
    """
    import tempfile  # here, not at the top: a reader (wb status) writes nothing

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + path.name, dir=path.parent)
    try:
        os.fchmod(fd, _FILE_MODE)  # mkstemp makes 0600; a workbench file is as readable as any other
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        faults.point("before_rename:" + path.name)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable and sync_dir:
        fsync_dir(path.parent)


def append_lines(path: Path, lines: list[str]) -> None:
    """Append whole lines in one write and fsync them; a torn last line left by a crash is dropped first."""
    blob = "".join(line + "\n" for line in lines).encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            tail = os.pread(fd, min(size, 1 << 16), max(0, size - (1 << 16)))
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                os.ftruncate(fd, size - len(tail) + cut + 1 if cut >= 0 else (0 if size <= 1 << 16 else size))
                size = os.fstat(fd).st_size
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
