"""model/digest.py: Python's own SHA for a write's few small inputs (no OpenSSL load), OpenSSL for a large one and
for bulk (a first command after a clone hashes every sealed segment and every line of the log) — the same digests
either way."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from workbench.model import digest


@given(st.binary(max_size=4096), st.sampled_from(["sha1", "sha256"]))
def test_the_same_digests_as_hashlib(data: bytes, algo: str) -> None:
    assert digest.new(algo, data).hexdigest() == hashlib.new(algo, data).hexdigest()


def test_large_and_bulk_inputs_go_to_openssl_with_the_same_digests() -> None:
    probe = """
import json, sys
from workbench.model import digest
small, big = b"x" * 1000, b"y" * digest.BIG
out = {"small": [digest.sha256(small).hexdigest(), "_hashlib" in sys.modules]}
for _ in range(digest.BULK // 4096):
    digest.sha1(b"z" * 4096)
out["bulk"] = [digest.sha256(small).hexdigest(), type(digest.sha256(small)).__module__]
out["big"] = [digest.sha1(big).hexdigest(), type(digest.sha1(big)).__module__]
print(json.dumps(out))
"""
    out = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                    check=True).stdout)
    small, big = b"x" * 1000, b"y" * digest.BIG
    assert out["small"] == [hashlib.sha256(small).hexdigest(), False]  # a write's small input: no OpenSSL
    assert out["bulk"] == [hashlib.sha256(small).hexdigest(), "_hashlib"]  # after 2 MiB in all: OpenSSL
    assert out["big"] == [hashlib.sha1(big).hexdigest(), "_hashlib"]
