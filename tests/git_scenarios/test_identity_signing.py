"""wb commits as the user would: their identity (or git.author; never an invented one), signed when
commit.gpgsign is set, and through their commit hooks only when git.run_hooks asks for it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import committed_notes

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL")


@pytest.fixture
def nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where git knows no identity: no user.name/email anywhere, no GIT_* identity variables."""
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)


def _set_config(repo: Path, **git: object) -> None:
    config = repo / ".workbench" / "config.yaml"
    text = config.read_text()
    lines = "".join(f"  {k}: {v}\n" for k, v in git.items())
    config.write_text(text.replace("git:\n", "git:\n" + lines, 1))


def test_no_identity_records_without_committing_and_says_why(repo: Path, nobody: None) -> None:
    init = run_wb(repo, "init")
    assert init.returncode == 0
    assert "no identity" in init.stderr
    before = run_git(repo, "rev-list", "--all", "--count")
    note = run_wb(repo, "note", "kept")
    assert note.returncode == 0
    assert note.stderr.count("\n") == 1 and "no identity" in note.stderr and "git.author" in note.stderr
    assert run_git(repo, "rev-list", "--all", "--count") == before  # no root@host.(none) commit
    assert "kept" in (repo / ".workbench" / "events.jsonl").read_text()  # recorded, not lost


def test_use_config_only_is_respected(repo: Path, nobody: None) -> None:
    run_git(repo, "config", "user.useConfigOnly", "true")
    run_wb(repo, "init")
    note = run_wb(repo, "note", "kept")
    assert "no identity" in note.stderr
    assert "(none)" not in run_git(repo, "log", "--all", "--format=%ae")


def test_git_author_in_config_yaml_is_used(repo: Path, nobody: None) -> None:
    run_wb(repo, "init")
    _set_config(repo, author="'State Bot <bot@example.invalid>'")
    note = run_wb(repo, "note", "by the bot")
    assert note.returncode == 0, note.stderr
    assert "not committed" not in note.stderr
    assert run_git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == \
        "State Bot <bot@example.invalid>|State Bot <bot@example.invalid>\n"
    assert committed_notes(repo) == ["by the bot"]


def _ssh_signing(repo: Path, tmp_path: Path) -> Path:
    key = tmp_path / "signing_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    run_git(repo, "config", "gpg.format", "ssh")
    run_git(repo, "config", "user.signingkey", str(key) + ".pub")
    run_git(repo, "config", "commit.gpgsign", "true")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"author@example.invalid {(tmp_path / 'signing_key.pub').read_text()}")
    run_git(repo, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    return key


def test_commit_gpgsign_signs_state_commits(repo: Path, tmp_path: Path) -> None:
    _ssh_signing(repo, tmp_path)
    assert run_wb(repo, "init").returncode == 0
    note = run_wb(repo, "note", "signed")
    assert note.returncode == 0 and "not committed" not in note.stderr, note.stderr
    verify = subprocess.run(["git", "verify-commit", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    assert "Good" in verify.stderr
    assert committed_notes(repo) == ["signed"]
    assert run_git(repo, "log", "-1", "--format=%s") == "wb: note signed\n"


def test_signing_that_cannot_work_says_so_and_git_sign_false_silences_it(repo: Path, tmp_path: Path) -> None:
    key = _ssh_signing(repo, tmp_path)
    run_wb(repo, "init")
    os.unlink(key)
    os.unlink(str(key) + ".pub")
    note = run_wb(repo, "note", "unsignable")
    assert "could not be signed" in note.stderr and "git.sign: false" in note.stderr
    _set_config(repo, sign="false")
    note = run_wb(repo, "note", "unsigned then")
    assert note.returncode == 0 and note.stderr == "", note.stderr
    assert committed_notes(repo) == ["unsignable", "unsigned then"]  # the recorded one rode along


def test_hooks_do_not_run_unless_asked(repo: Path, tmp_path: Path) -> None:
    hooks = repo / ".git" / "hooks"
    marker = tmp_path / "ran"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho pre >> {marker}\n")
    (hooks / "commit-msg").write_text(f"#!/bin/sh\necho msg >> {marker}\necho 'Signed-off-by: hook' >> \"$1\"\n")
    for hook in ("pre-commit", "commit-msg"):
        (hooks / hook).chmod(0o755)
    run_wb(repo, "init")
    run_wb(repo, "note", "quiet")
    assert not marker.exists()
    _set_config(repo, run_hooks="true")
    assert run_wb(repo, "note", "hooked").returncode == 0
    # two commits, each through the hooks: the config.yaml edit's own (issue 31), then the note's
    assert marker.read_text().split() == ["pre", "msg", "pre", "msg"]
    assert "Signed-off-by: hook" in run_git(repo, "log", "-1", "--format=%B")
    (hooks / "pre-commit").write_text("#!/bin/sh\necho 'lint failed' >&2\nexit 1\n")
    refused = run_wb(repo, "note", "refused by the hook")
    assert "pre-commit hook refused" in refused.stderr and "lint failed" in refused.stderr
    assert "refused by the hook" in (repo / ".workbench" / "events.jsonl").read_text()
