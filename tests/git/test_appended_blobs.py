"""A blob that extends the last one written for its path (events.jsonl, on every write) is compressed a tail at
a time (git/objects.py `_deflate`): git must read every such loose object as the bytes it names, and fsck them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from workbench.git.repo import GitRepo


def test_appended_blobs_are_loose_objects_git_reads(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    repo = GitRepo(tmp_path)
    body = b""
    written = []
    for i in range(300):
        # lines of varied sizes, past 32 KiB so the window primed for a tail is a slice of what precedes it
        body += b'{"seq": %d, "payload": "%s"}\n' % (i, b"%x" % (i * 7919) * (1 + i % 60))
        written.append((repo._write_object("blob", body, ".workbench/events.jsonl"), body))
    written.append((repo._write_object("blob", b"sealed: a shorter file" * 300, ".workbench/events.jsonl"),
                    b"sealed: a shorter file" * 300))  # no longer an extension: compressed whole again
    assert len(body) > 40_000
    for sha, expected in written[::7] + written[-3:]:
        shown = subprocess.run(["git", "cat-file", "blob", sha], cwd=tmp_path, capture_output=True, check=True)
        assert shown.stdout == expected
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=tmp_path, capture_output=True,
                          text=True)
    assert fsck.returncode == 0, fsck.stderr
    fresh = GitRepo(tmp_path)  # another process reads the loose object from disk, not from memory
    assert fresh._loose(written[-2][0], "blob") == written[-2][1]
