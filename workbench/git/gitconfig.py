"""git's configuration read once per process (`git config -z --list`: every scope, includes and includeIf, `-c`
and GIT_CONFIG_* as git itself reads them), and what a commit needs of it: the author and committer identity
when it is set explicitly, and commit.gpgsign. One git process where a commit used to start three (`git var
GIT_AUTHOR_IDENT`, `git var GIT_COMMITTER_IDENT`, `git config --bool commit.gpgsign`; issue 33).

Only the plain case is decided here: a name and an email each given by git's environment variables or its
config, as git's ident.c takes them (GIT_<WHO>_NAME, else <who>.name when not empty, else user.name; the same
for the email) and formatted as it formats them (crud stripped from both ends, `<`, `>` and newlines dropped).
Anything else — no name or no email given (git would guess one, or refuse: user.useConfigOnly), a value that is
empty or all crud, a value-less key — returns None, and the caller asks `git var` strictly, as before: git's
own rules then decide, word for word.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.git.spawn import Git

Config = dict[str, bytes | None]  # key (section and name lower case, as git prints them) -> its last value

# ident.c's crud(): what git strips from both ends of a name or an email
_CRUD = frozenset(range(33)) | frozenset(b".,:;<>\"\\'")


def read_config(worktree: Path) -> Config | None:
    """Every key git's configuration sets for this repository, each with its last value (None: a key written
    without `=`, which git reads as true). None when git cannot read its configuration."""
    return config_of(start_reading(worktree))


def start_reading(worktree: Path) -> Git:
    """`git config -z --list` started, for `config_of` to read when it is needed: a commit starts it before it
    builds its trees, so git runs meanwhile (by git/spawn.py: a commit imports no subprocess)."""
    from workbench.git.spawn import DEVNULL, PIPE, Git

    return Git(worktree, ["config", "-z", "--list"], stdin=DEVNULL, stdout=PIPE, stderr=DEVNULL)


def config_of(proc: Git) -> Config | None:
    """What `start_reading`'s git printed, read as `read_config` says."""
    out, _err = proc.communicate()
    if proc.returncode != 0:
        return None
    config: Config = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        key, newline, value = entry.partition(b"\n")
        config[key.decode(errors="replace")] = value if newline else None
    return config


def _without_crud(value: bytes) -> bytes:
    """ident.c's strbuf_addstr_without_crud: crud off both ends, then every newline, `<` and `>` dropped."""
    start, end = 0, len(value)
    while start < end and value[start] in _CRUD:
        start += 1
    while end > start and value[end - 1] in _CRUD:
        end -= 1
    return value[start:end].replace(b"\n", b"").replace(b"<", b"").replace(b">", b"")


def _given(config: Config, who: str, field: str) -> bytes | None:
    """GIT_<WHO>_<FIELD> when set (even empty: git takes it as said), else <who>.<field> when not empty, else
    user.<field>; None when none is set, or a key has no value (git refuses that)."""
    env = os.environb.get(f"GIT_{who.upper()}_{field.upper()}".encode())
    if env is not None:
        return env
    own = config.get(f"{who}.{field}", b"")
    if own is None:
        return None
    if own:
        return own
    return config.get(f"user.{field}")


def explicit_ident(config: Config, who: str) -> str | None:
    """`Name <email>` of `who` ("author" or "committer") as `git var GIT_<WHO>_IDENT` gives it, less the date,
    when both are given explicitly and git would take them as they are; None otherwise (ask git)."""
    name, email = _given(config, who, "name"), _given(config, who, "email")
    if name is None or email is None:
        return None
    name, email = _without_crud(name), _without_crud(email)
    if not name or not email:  # git refuses an empty (or all-crud) name; an empty email: let git say
        return None
    return f"{name.decode(errors='replace')} <{email.decode(errors='replace')}>"


def git_bool(value: bytes | None) -> bool | None:
    """A boolean config value as git reads it (a key without `=` is true); None for what this does not know
    (an integer with a unit, a typo: ask git)."""
    if value is None:
        return True
    word = value.lower()
    if word in (b"true", b"yes", b"on"):
        return True
    if word in (b"false", b"no", b"off", b""):
        return False
    if word.lstrip(b"-").isdigit():
        return int(word) != 0
    return None
