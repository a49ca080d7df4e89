"""git/gitconfig.py: the identity and commit.gpgsign from one `git config -z --list` (issue 33) agree with what
git itself says (`git var GIT_<WHO>_IDENT`, `git config --bool`) in every case they decide, against real git:
the environment over the config, <who>.name over user.name, an empty value, crud, includeIf, `-c`, a value
with a newline; every other case is left to git (None), and the commit wb makes carries git's identity."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git, run_wb
from workbench.git.gitconfig import explicit_ident, git_bool, read_config
from workbench.git.repo import GitRepo

pytestmark = about_git

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL")


def git_var(repo: Path, who: str) -> str | None:
    """`git var GIT_<WHO>_IDENT` without its date; None when git refuses (it is strict for one variable)."""
    proc = subprocess.run(["git", "var", f"GIT_{who.upper()}_IDENT"], cwd=repo, capture_output=True)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode(errors="replace").strip().rsplit(" ", 2)[0]


def agrees(repo: Path) -> dict[str, str | None]:
    """What explicit_ident decides for both, each checked against git: equal to `git var` when it decides."""
    config = read_config(repo)
    assert config is not None
    decided = {}
    for who in ("author", "committer"):
        mine = explicit_ident(config, who)
        if mine is not None:
            assert mine == git_var(repo, who), (who, mine)
        decided[who] = mine
    return decided


@pytest.fixture
def nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)


def test_the_environment_decides_over_the_config(repo: Path) -> None:
    run_git(repo, "config", "user.name", "Config Name")
    run_git(repo, "config", "user.email", "config@example.invalid")
    assert agrees(repo) == {"author": "Test Author <author@example.invalid>",
                            "committer": "Test Committer <committer@example.invalid>"}


def test_who_name_over_user_name_and_an_empty_one_falls_through(repo: Path, nobody: None) -> None:
    run_git(repo, "config", "user.name", "User Name")
    run_git(repo, "config", "user.email", "user@example.invalid")
    run_git(repo, "config", "author.name", "Author Name")
    run_git(repo, "config", "committer.email", "")  # empty: git takes user.email
    assert agrees(repo) == {"author": "Author Name <user@example.invalid>",
                            "committer": "User Name <user@example.invalid>"}


def test_crud_and_delimiters_are_stripped_as_git_strips_them(repo: Path, nobody: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", ' "; Ann <the> Author., ')
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", " <ann@example.invalid>; ")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Zoë\tMüller")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "zoe@example.invalid")
    assert agrees(repo) == {"author": "Ann the Author <ann@example.invalid>",
                            "committer": "Zoë\tMüller <zoe@example.invalid>"}


@pytest.mark.parametrize(("name", "email"), [("", "a@example.invalid"), (" ,;", "a@example.invalid"),
                                             ("Ann", ""), ("Ann", "<>")])
def test_an_empty_or_all_crud_value_is_left_to_git(repo: Path, nobody: None, monkeypatch: pytest.MonkeyPatch,
                                                    name: str, email: str) -> None:
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", name)
        monkeypatch.setenv(f"GIT_{who}_EMAIL", email)
    assert agrees(repo) == {"author": None, "committer": None}


def test_nothing_given_is_left_to_git_and_use_config_only_holds(repo: Path, nobody: None) -> None:
    assert agrees(repo) == {"author": None, "committer": None}  # git would guess one from the host
    run_git(repo, "config", "user.useConfigOnly", "true")
    run_git(repo, "config", "user.name", "Only A Name")
    assert agrees(repo) == {"author": None, "committer": None}
    assert git_var(repo, "author") is None  # and git refuses: no email given, auto-detection off
    run_wb(repo, "init")
    note = run_wb(repo, "note", "kept")
    assert note.returncode == 0 and "no identity" in note.stderr


def test_include_if_and_command_line_config_count(repo: Path, nobody: None, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "work.gitconfig"
    extra.write_text("[user]\n\tname = Included Name\n\temail = included@example.invalid\n")
    run_git(repo, "config", "user.name", "Before Include")
    run_git(repo, "config", "user.email", "before@example.invalid")
    run_git(repo, "config", f"includeIf.gitdir:{repo}/.path", str(extra))
    assert agrees(repo)["author"] == "Included Name <included@example.invalid>"
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.name")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "From The Command Line")
    assert agrees(repo)["committer"] == "From The Command Line <included@example.invalid>"


def test_a_value_with_a_newline_is_read_whole(repo: Path, nobody: None) -> None:
    run_git(repo, "config", "user.name", "Two\nLines")
    run_git(repo, "config", "user.email", "two@example.invalid")
    config = read_config(repo)
    assert config is not None and config["user.name"] == b"Two\nLines"
    assert agrees(repo)["author"] == "TwoLines <two@example.invalid>"


def test_a_wb_commit_carries_gits_identity(repo: Path, nobody: None, monkeypatch: pytest.MonkeyPatch) -> None:
    run_git(repo, "config", "user.name", "User Name")
    run_git(repo, "config", "user.email", "user@example.invalid")
    run_git(repo, "config", "committer.name", "Committer Name")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "env-author@example.invalid")
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "note", "who am I").returncode == 0
    assert run_git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == \
        "User Name <env-author@example.invalid>|Committer Name <user@example.invalid>\n"


def test_dates_from_the_environment_still_come_from_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2001-02-03T04:05:06+0700")
    assert run_wb(repo, "init").returncode == 0
    assert run_git(repo, "log", "-1", "--format=%ad|%an", "--date=iso-strict") == \
        "2001-02-03T04:05:06+07:00|Test Author\n"


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("YES", True), ("on", True), ("1", True), ("-2", True), ("false", False), ("No", False),
    ("off", False), ("0", False), ("", False), ("1k", None), ("maybe", None)])
def test_git_bool_reads_as_git_does(repo: Path, value: str, expected: bool | None) -> None:
    run_git(repo, "config", "commit.gpgsign", value)
    config = read_config(repo)
    assert config is not None
    assert git_bool(config["commit.gpgsign"]) is expected
    said = subprocess.run(["git", "config", "--bool", "--get", "commit.gpgsign"], cwd=repo, capture_output=True,
                          text=True)
    if expected is not None:
        assert said.stdout.strip() == ("true" if expected else "false")
    elif said.returncode == 0:  # what git_bool leaves to git, git reads (1k) or refuses (maybe)
        assert GitRepo(repo)._signing() is (said.stdout.strip() == "true")


def test_a_key_without_a_value_is_true(repo: Path) -> None:
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + "[commit]\n\tgpgsign\n")
    read = read_config(repo)
    assert read is not None and read["commit.gpgsign"] is None and git_bool(None) is True
    assert run_git(repo, "config", "--bool", "--get", "commit.gpgsign").strip() == "true"


def test_unreadable_config_leaves_everything_to_git(repo: Path) -> None:
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + "[broken\n")
    assert read_config(repo) is None
    policy = GitRepo(repo)
    assert policy._explicit_idents() is None
    assert os.environ["GIT_AUTHOR_NAME"] == "Test Author"  # even with the environment set: git refuses first


def test_random_names_and_emails_agree_with_git(repo: Path, nobody: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names and emails drawn from crud, delimiters, spaces, non-ASCII and plain letters (seeded): whatever
    explicit_ident decides is what `git var` says."""
    import random

    rng = random.Random(33)
    alphabet = list(" \t.,:;<>\"\\'aZ9é-_@") + ["ü", "中"]
    for _ in range(40):
        for who in ("AUTHOR", "COMMITTER"):
            monkeypatch.setenv(f"GIT_{who}_NAME", "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))))
            monkeypatch.setenv(f"GIT_{who}_EMAIL", "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))))
        agrees(repo)


def test_the_config_read_started_ahead_is_reaped_when_the_commit_needs_none(repo: Path) -> None:
    """A commit starts `git config -z --list` before it builds its trees; when nothing changed under
    .workbench/ it never reads it, and the process is reaped all the same (no zombie, no ResourceWarning)."""
    assert run_wb(repo, "init").returncode == 0
    git = GitRepo(repo)
    try:
        outcome = git.commit_workbench("nothing changed")
        assert outcome.sha is None and outcome.skipped is None
        assert git._config_proc is None
        (repo / ".workbench" / "artifacts" / "note.txt").write_text("new\n")
        outcome = git.commit_workbench("one file more")
        assert outcome.sha is not None and git._config_proc is None
        assert run_git(repo, "log", "-1", "--format=%an|%cn") == "Test Author|Test Committer\n"
    finally:
        git.close()
