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


def test_a_big_blob_changed_in_place_reuses_the_runs_it_kept_and_git_reads_it(tmp_path: Path) -> None:
    """board.json changes at its top and its end at each write: deflated in runs, the unchanged ones reused
    (`_chunked`); every version is the loose object git reads, whatever changed where (a run's bytes shifted by a
    longer line, the blob shorter, longer or under the size that is compressed whole)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    repo = GitRepo(tmp_path)
    lines = [b'    {"id": "T-%04d", "title": "task %d %s"}' % (i, i, b"x" * (i % 37)) for i in range(1500)]

    def board(last: int, tasks: list[bytes]) -> bytes:
        return b'{\n  "last_event": %d,\n  "tasks": [\n' % last + b",\n".join(tasks) + b"\n  ]\n}\n"

    versions = [board(1, lines)]
    versions.append(board(2, [*lines, b'    {"id": "T-9999", "title": "added"}']))  # the top and the end
    versions.append(board(3, [*lines[:700], lines[700] + b" ", *lines[701:]]))  # a longer line in the middle
    versions.append(board(4, lines[:900]))  # shorter
    versions.append(board(5, lines[:20]))  # under four runs: one segment
    versions.append(board(6, lines))  # big again
    written = [(repo._write_object("blob", body, ".workbench/board.json"), body) for body in versions]
    assert len(versions[0]) > 4 * repo._CHUNK
    for sha, expected in written:
        shown = subprocess.run(["git", "cat-file", "blob", sha], cwd=tmp_path, capture_output=True, check=True)
        assert shown.stdout == expected
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=tmp_path, capture_output=True,
                          text=True)
    assert fsck.returncode == 0, fsck.stderr
