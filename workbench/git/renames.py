"""Swapping two paths in one step (Linux renameat2 RENAME_EXCHANGE), looked up once: the user's index put in
place by git/indexfile.py, and the store's atomic writes (store/atomic.py). A rename over an existing file has
ext4 write the renamed file's data out at once (auto_da_alloc, ~0.1 ms, far more on a busy disk); a swap, then
an unlink of what it displaced, does not."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path

_RENAME_EXCHANGE = 2
_renameat2: object = None  # the libc function once looked up; False where there is none


def exchange(a: str | Path, b: str | Path) -> bool:
    """Swap two paths in one step. False where the system or the file system cannot, or `b` does not exist: the
    caller renames as before."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if hasattr(os, "sched_getaffinity"):  # Linux
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                _renameat2 = fn
            except (OSError, AttributeError):
                pass
    if _renameat2 is False:
        return False
    at_fdcwd = -100
    return _renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0  # type: ignore[operator]
