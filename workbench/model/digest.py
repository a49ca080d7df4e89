"""SHA-1 and SHA-256 of a write's small inputs without loading OpenSSL: `import hashlib` loads `_hashlib` and
with it libcrypto, ~2 ms of a `wb task add` that hashes a few kilobytes (issue 33). Python's own
implementations (the `_sha1`/`_sha256` modules hashlib falls back to) give the same digests, 4-6x slower per byte:
an input of BIG bytes or more, every input once the process has hashed BULK bytes in all (a first command after a
clone hashes every sealed segment and every line of the log: 24 MB at 50,000 events), or a Python built without
them, goes to hashlib."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

BIG = 1 << 19  # 512 KiB: above it OpenSSL's speed outweighs its loading (~2 ms; Python's own hashes ~4 µs a KiB)
BULK = 1 << 21  # 2 MiB in all: a write on a 2,000-task board hashes its 480 KB board.json once, Python's way

_OWN: dict[str, Any] = {}
_OPENSSL: dict[str, Any] = {}
_hashed = 0  # bytes this process has hashed through `new`


def _own(algo: str) -> Any:
    """Python's own constructor of `algo` ("sha1" or "sha256"), None when this Python has none."""
    if algo not in _OWN:
        module = {"sha1": ("_sha1",), "sha256": ("_sha2", "_sha256")}.get(algo, ())
        found = None
        for name in module:
            try:
                found = getattr(__import__(name), algo)
                break
            except (ImportError, AttributeError):
                continue
        _OWN[algo] = found
    return _OWN[algo]


def new(algo: str, data: bytes = b"") -> Any:
    """A hash object of `algo` (hashlib's names: "sha1", "sha256") over `data`, as `hashlib.new(algo, data)`."""
    global _hashed
    _hashed += len(data)
    if len(data) < BIG and _hashed < BULK:
        own = _own(algo)
        if own is not None:
            return own(data)
    openssl = _OPENSSL.get(algo)
    if openssl is None:
        import hashlib

        openssl = _OPENSSL[algo] = getattr(hashlib, algo)
    return openssl(data)


def sha1(data: bytes) -> Any:
    return new("sha1", data)


def sha256(data: bytes) -> Any:
    return new("sha256", data)
