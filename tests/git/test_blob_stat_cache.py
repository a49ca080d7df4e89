"""The blob ids wb keeps by stat across processes (`.git/wb/blob-stat.json`, docs/git.md): a file whose stat is
unchanged is not hashed again, and nothing about the cache can make a commit hold other bytes than the work
tree's — a rewrite that keeps size and mtime, a damaged cache, an id the parent commit does not hold."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.conftest import about_git, make_repo, run_git, run_wb

pytestmark = about_git  # the cache of git blob stats for committing .workbench/


def _ok(repo: Path, *args: str) -> None:
    out = run_wb(repo, *args)
    assert out.returncode == 0, out.stdout + out.stderr


def _cache(repo: Path) -> dict:
    return json.loads((repo / ".git" / "wb" / "blob-stat.json").read_text())["files"]


def _committed_as_on_disk(repo: Path, rel: str) -> None:
    assert run_git(repo, "cat-file", "blob", f"HEAD:.workbench/{rel}").encode() == \
        (repo / ".workbench" / rel).read_bytes()
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""


def test_a_rewrite_keeping_size_and_mtime_is_committed_and_a_bad_cache_is_ignored(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init")
    config = repo / ".workbench" / "config.yaml"
    time.sleep(2.1)  # past the racy window: the next commit records config.yaml's stat
    _ok(repo, "note", "one")
    assert "config.yaml" in _cache(repo)
    # an editor's save of the same length, with the old mtime put back (rsync -t, a tool that keeps times)
    st = config.stat()
    text = config.read_text()
    assert "# " in text
    config.write_text(text.replace("# ", "#-", 1))  # a comment: the config still reads the same
    assert config.stat().st_size == st.st_size
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    _ok(repo, "note", "two")
    _committed_as_on_disk(repo, "config.yaml")
    assert "#-" in run_git(repo, "show", "HEAD:.workbench/config.yaml")
    # a cache naming, for the file's very stat, a blob the parent commit does not hold is not trusted
    time.sleep(2.1)
    _ok(repo, "note", "three")
    cache_path = repo / ".git" / "wb" / "blob-stat.json"
    data = json.loads(cache_path.read_text())
    data["files"]["config.yaml"][4] = "0" * 40
    cache_path.write_text(json.dumps(data))
    _ok(repo, "note", "four")
    _committed_as_on_disk(repo, "config.yaml")
    # and a damaged cache is an empty one
    cache_path.write_text("{not json")
    _ok(repo, "note", "five")
    _committed_as_on_disk(repo, "config.yaml")
    assert run_git(repo, "fsck", "--no-dangling", check=False).count("missing") == 0
