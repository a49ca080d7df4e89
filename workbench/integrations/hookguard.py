"""What PreToolUse denies: an agent's hand on `.workbench/` (and on wb's journals in the git directory), and
the wb commands that are a person's to run.

Writes: a file tool (Write, Edit, MultiEdit, NotebookEdit; Codex's apply_patch) naming a path under
`.workbench/`, and a shell command that writes there — a redirection into it, `sed -i`/`perl -i` on it, `tee`,
`cp`/`mv`/`install`/`ln`/`rsync` into it, `rm`/`truncate`/`touch`/`dd of=` of it, `git checkout/restore` of
it, and inline interpreter code (`python -c`, `python3 -` with a heredoc, `node -e`, `perl -e`, `ruby -e`…)
that names it and writes — are denied, with a reason naming the wb command (or MCP tool) that makes the
change instead. Reading is never denied (`cat .workbench/board.json > /tmp/x` writes /tmp/x).

A workbench kept in SQLite: its database file (and its -wal, -shm, -journal) is guarded the same way, wherever
config.yaml puts it (`guard_also`, set by the hook from config.yaml's `sqlite_path`; the default, in the git
directory's `wb/`, is under `.git/wb` already), and so is `sqlite3` (SQLite's shell) on it without `-readonly`.

A person's commands (`person_only`): `--actor human` anywhere, `wb task done --force`, `wb resume
--approve|--deny`, `wb trust`, `wb untrust`, `wb task set … acceptance=|scope=`, and any wb run under a
pseudo-terminal (`script`, `unbuffer`, `expect`, `tmux`, `screen`: wb reads a terminal as a person's), found
through wrappers (`env`, `sudo`, `nohup`, `timeout`, `setsid`, `xargs`, `bash -c`, `sh -c`, `eval`,
`python -m workbench.cli.main`, `$(which wb)`, `/abs/path/wb`) — denied with a reason that asks the agent to
ask a person. `wb abort` is the agent's to run (recorded as the agent's).

A text guard, not a boundary: a determined process running as the same user can always spell a command no
parser foresees (base64, a script file written first). The boundary is elsewhere — wb refuses a hand edit's
effects at load, and a person's decisions need a person's proof (docs/security.md). Cheap: a command that
mentions none of `.workbench`, `.git/wb`, `wb`, `workbench` or `human` is not even tokenized.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this module is on every hook's path
if TYPE_CHECKING:
    from typing import Any

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell"})
PATCH_TOOLS = frozenset({"apply_patch"})
_MARKS: tuple[str, ...] = (".workbench", ".git/wb")
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", ";;"})
_WRAPPERS = frozenset({"sudo", "command", "env", "nohup", "time", "exec", "builtin"})
_PERSON_MARKS = ("wb", "workbench", "human")
TRUST_ENV = "WB_TRUST_REPO_COMMANDS"  # store/trust.ENV, spelled here: this module imports nothing of wb's
# a workbench kept in SQLite: its database file (and SQLite's files beside it), wherever config.yaml puts it, is
# guarded as .workbench/ is. Set once by the hook (one process, one workbench) before `denial` (`guard_also`).
_DB_SUFFIXES = ("", "-wal", "-shm", "-journal")
_db_marks: tuple[str, ...] = ()


def guard_also(db: str | None) -> None:
    """Guard the database file `db` (an absolute path) and SQLite's files beside it, as .workbench/ is; None:
    no database (a files workbench, or none found yet)."""
    import os

    global _db_marks, _MARKS
    _db_marks = tuple(sorted({db, os.path.realpath(db)})) if db else ()
    _MARKS = (".workbench", ".git/wb", *(os.path.basename(m) for m in _db_marks))


def denial(hook: dict[str, Any]) -> str | None:
    """The reason to deny this PreToolUse, or None to let it run."""
    tool = hook.get("tool_name")
    args = hook.get("tool_input")
    if not isinstance(args, dict) or not isinstance(tool, str):
        return None
    target: str | None = None
    if tool in FILE_TOOLS:
        path = args.get(FILE_TOOLS[tool])
        target = path if isinstance(path, str) and protected(path) else None
    elif tool in SHELL_TOOLS:
        command = args.get("command")
        if isinstance(command, list):  # Codex's shell tool: an argv
            command = " ".join(_quote(str(c)) for c in command)
        if not isinstance(command, str):
            return None
        if TRUST_ENV in command:  # the CI opt-in is a person's: an agent setting it is asking wb to skip trust
            return person_reason("the CI opt-in to run repository commands no one trusted here")
        if any(m in command for m in _PERSON_MARKS):
            person = person_only(command)
            if person:
                return person_reason(person)
        if any(m in command for m in _MARKS):
            target = shell_target(command) or interpreter_target(command)
    elif tool in PATCH_TOOLS:
        patch = args.get("command") or args.get("input") or args.get("patch")
        if isinstance(patch, str) and any(m in patch for m in _MARKS):
            target = patch_target(patch)
    return reason(target) if target else None


def protected(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    if ".workbench" in parts:
        return True
    if any(a == ".git" and b == "wb" for a, b in zip(parts, parts[1:], strict=False)):
        return True
    return bool(_db_marks) and _is_db(path)


def _is_db(path: str) -> bool:
    """Whether `path` names the SQLite database guarded (`guard_also`): absolute, or relative to the agent's
    directory or the work tree's top (both are where the hook runs from)."""
    import os

    full = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
    return any(full == mark + suffix for mark in _db_marks for suffix in _DB_SUFFIXES)


def shell_target(command: str) -> str | None:
    """The first path under `.workbench/` a shell command plainly writes, or None."""
    for line in command.splitlines():
        found = _line_target(line)
        if found:
            return found
    return None


def _line_target(line: str) -> str | None:
    import shlex

    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:  # unbalanced quotes: judge the words as they stand
        tokens = line.split()
    words: list[str] = []
    inside = False  # after `cd .workbench`, a relative path is one of its files
    for i, tok in enumerate(tokens):
        if tok in _REDIRECTS or (tok.endswith(">") and tok.rstrip(">").isdigit()):
            if i + 1 < len(tokens) and _held(tokens[i + 1], inside):
                return tokens[i + 1]
            continue
        if tok in _SEPARATORS:
            found = _command_target(words, inside)
            if found:
                return found
            if len(words) >= 2 and words[0] in ("cd", "pushd") and protected(words[1]):
                inside = True
            words = []
            continue
        if i and (tokens[i - 1] in _REDIRECTS or tokens[i - 1] in ("<", "<<", "<<<")):
            continue  # a redirection's file, not an argument
        words.append(tok)
    return _command_target(words, inside)


def _held(path: str, inside: bool) -> bool:
    return protected(path) or (inside and not path.startswith(("/", "~", "..")))


def _command_target(words: list[str], inside: bool = False) -> str | None:
    while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    files = [a for a in args if not a.startswith("-")]
    hit = [a for a in files if _held(a, inside)]
    if name in ("tee", "rm", "truncate", "touch", "shred", "unlink", "rmdir", "mkdir"):
        return hit[0] if hit else None
    if name == "sqlite3":  # SQLite's shell on wb's database (or a file of .workbench/) may write: unless -readonly
        return hit[0] if hit and "-readonly" not in args else None
    if name in ("sed", "perl"):
        in_place = any(a == "-i" or a.startswith("-i") or a.startswith("--in-place")
                       or (a.startswith("-") and not a.startswith("--") and "i" in a[1:] and len(a) <= 4)
                       for a in args)
        return hit[0] if in_place and hit else None
    if name in ("cp", "mv", "install", "ln", "rsync"):
        for j, a in enumerate(args):
            if a in ("-t", "--target-directory") and j + 1 < len(args) and protected(args[j + 1]):
                return args[j + 1]
            if a.startswith("--target-directory=") and protected(a.split("=", 1)[1]):
                return a.split("=", 1)[1]
        return files[-1] if len(files) >= 2 and _held(files[-1], inside) else None
    if name == "dd":
        outs = [a[3:] for a in args if a.startswith("of=")]
        return outs[0] if outs and _held(outs[0], inside) else None
    if name == "git" and args and args[0] in ("checkout", "restore", "rm", "mv", "apply", "clean", "stash"):
        return hit[0] if hit else None  # git writes the work tree's copy of these paths
    return None


def patch_paths(patch: str) -> list[str]:
    """Every path an apply_patch patch adds, updates, deletes or moves to, in order."""
    heads = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
    return [line[len(head):].strip() for line in patch.splitlines() for head in heads if line.startswith(head)]


def patch_target(patch: str) -> str | None:
    """The first path under `.workbench/` an apply_patch patch adds, updates, deletes or moves to."""
    return next((path for path in patch_paths(patch) if protected(path)), None)


def reason(path: str) -> str:
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if name == "board.json":
        how = ("change tasks with `wb task add|start|block|set` and finish one with `wb task done ID`, which runs "
               "its acceptance (MCP tools: task_add, task_update)")
    elif name == "state.md":
        how = "use `wb set KEY=VALUE` and `wb note TEXT` (MCP tools: set_state, note)"
    elif (_db_marks and _is_db(path)) or name.startswith("workbench.sqlite3"):
        how = "that is the workbench's database; read it with `wb status`, `wb log` and `wb task list`"
    elif ".workbench" not in path.replace("\\", "/").split("/"):
        how = "that is wb's own journal of your hook events; leave it to wb"
    else:
        how = "use the wb commands (`wb --help`) or wb's MCP tools"
    return (f"{path} is written by wb alone, so that every change is validated and recorded as yours: {how}. "
            "Do not edit .workbench/ by hand.")


def out_of_scope(root: str, hook: dict[str, Any], db: str | None = None) -> str | None:
    """Why a file tool may not write its path, or Codex's apply_patch one of the files it writes (issue 16): it
    lies under a `forbidden` glob of the active task's scope. Read from board.json and wb's own state cache (or,
    kept in SQLite, from the database `db`: its board and state snapshots), never a load: this runs on every
    tool call. Shell commands are judged at `wb task done`, which compares what changed with the scope."""
    import os

    tool = hook.get("tool_name")
    args = hook.get("tool_input")
    if not isinstance(args, dict):
        return None
    if tool in FILE_TOOLS:
        path = args.get(FILE_TOOLS[tool])
        paths = [path] if isinstance(path, str) and path else []
    elif tool in PATCH_TOOLS:  # Codex's file edits: every file the patch writes
        patch = args.get("command") or args.get("input") or args.get("patch")
        paths = [p for p in patch_paths(patch) if p] if isinstance(patch, str) else []
    else:
        return None
    if not paths:
        return None
    board, active = _db_board(db) if db is not None else _files_board(root)
    try:
        tasks = [t for t in board.get("tasks") or [] if isinstance(t, dict) and t.get("status") == "in_progress"
                 and isinstance(t.get("scope"), dict) and t["scope"].get("forbidden")]
    except AttributeError:
        return None
    if not tasks:
        return None
    if active is not None:  # else every task in progress with a scope is held to it
        tasks = [t for t in tasks if t.get("id") == active] or tasks
    from workbench.model import scope as scopes

    for path in paths:
        full = path if os.path.isabs(path) else os.path.join(hook.get("cwd") or root, path)
        rel = os.path.relpath(os.path.realpath(full), os.path.realpath(root)).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):
            continue  # outside the repository: not the scope's to judge
        for task in tasks:
            glob = scopes.first_match([str(g) for g in task["scope"]["forbidden"]], rel)
            if glob is not None:
                return (f"{rel} is out of bounds for {task['id']}: its scope forbids {glob}. Work inside the "
                        f"task's scope; to change it, ask a person to run: wb task set {task['id']} scope=JSON")
    return None


def _files_board(root: str) -> tuple[Any, Any]:
    """(board.json, the active task's id from wb's state cache, or None)."""
    import os

    from workbench.model import cjson

    try:
        with open(os.path.join(root, ".workbench", "board.json"), "rb") as f:
            board = cjson.loads(f.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return {}, None
    try:
        from pathlib import Path

        from workbench.model.layout import Paths  # wb's own cache, in the git directory: never the tree's

        with open(Paths(Path(root)).state_cache, "rb") as f:
            active = cjson.loads(f.read().decode("utf-8", "replace"))["state"].get("active_task_id")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        active = None
    return board, active


def _db_board(db: str) -> tuple[Any, Any]:
    """(the board, the active task's id) from a SQLite workbench's snapshots (store/sqlitedb.py: board.json, and
    state.md's frontmatter as JSON in state.json), in one read; ({}, None) when they cannot be read."""
    import sqlite3

    from workbench.model import cjson
    from workbench.store.sqlitefile import read_board  # board.json's row and the rows it continues in

    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
        try:
            conn.execute("BEGIN")  # one read: the board and state.json as one write left them
            rows: dict[str, Any] = dict(conn.execute("SELECT name, data FROM snapshots WHERE name = 'state.json'"))
            rows["board.json"] = read_board(conn)
        finally:
            conn.close()
        board = cjson.loads(bytes(rows["board.json"]).decode("utf-8", "replace"))
    except (sqlite3.Error, KeyError, ValueError, TypeError):
        return {}, None
    try:
        active = cjson.loads(bytes(rows["state.json"]).decode("utf-8", "replace")).get("active_task_id")
    except (KeyError, ValueError, AttributeError):
        active = None
    return board, active


# --- a person's commands -------------------------------------------------------------------------------------

_PTY_WRAPPERS = frozenset({"script", "unbuffer", "expect", "tmux", "screen", "socat", "ptyrun", "zpty", "faketty",
                           "pty"})
_WHICH = (r"\$\(\s*(?:which|command\s+-v|type\s+-[pP]|whence\s+-p)\s+(\S+?)\s*\)",
          r"`\s*(?:which|command\s+-v|type\s+-[pP])\s+(\S+?)\s*`")
_PUNCT = frozenset(";&|()<>$`")
# programs that run an argument as a command (or hand it to one that does)
_RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "eval", "su", "runuser", "watch",
                      "xargs", "sudo", "doas", "env", "nohup", "timeout", "setsid", "time", "nice", "ionice",
                      "stdbuf", "flock", "chronic", "parallel", "find", "ssh", "command", "exec", "builtin",
                      "trap", "source", "."}) | _PTY_WRAPPERS


_INTERPRETERS = frozenset({"python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua",
                           "tclsh", "osascript"})


def _interpreter(word: str) -> bool:
    return word.rsplit("/", 1)[-1].rstrip("0123456789.") in _INTERPRETERS


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _tokens(text: str) -> list[str]:
    import shlex

    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = ""
        return list(lex)
    except ValueError:  # unbalanced quotes: judge the words as they stand
        return text.replace("'", " ").replace('"', " ").split()


def _split(text: str) -> list[list[str]]:
    """The simple commands of a shell text (its words, split at operators), `$(which wb)` read as `wb`."""
    import re

    for pattern in _WHICH:
        text = re.sub(pattern, r"\1", text)
    commands: list[list[str]] = [[]]
    for w in _tokens(text.replace("`", " ; ")):
        if w and set(w) <= _PUNCT:
            if commands[-1]:
                commands.append([])
        else:
            commands[-1].append(w)
    return [c for c in commands if c]


def _nested(word: str) -> bool:
    """A word that holds a command of its own (`sh -c '…'`, `script -qc '…'`, `eval "…"`, a heredoc's text)."""
    return len(word) > 2 and any(c in word for c in " \t\n;&|`")


def _is_wb(words: list[str], i: int) -> bool:
    word = words[i]
    base = word.rsplit("/", 1)[-1]
    if base in ("wb", "wb.exe"):
        return True
    return word in ("workbench", "workbench.cli", "workbench.cli.main") and i > 0 and words[i - 1] == "-m"


def _wb_args(args: list[str]) -> list[str]:
    """wb's arguments less its global options (`-C PATH`, `--debug`)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "-C":
            i += 2
            continue
        if args[i] == "--debug" or args[i].startswith("-C") and len(args[i]) > 2:
            i += 1
            continue
        out.append(args[i])
        i += 1
    return out


def _person_verb(args: list[str]) -> str | None:
    """The person's command a wb argument list makes, spelled for the reason, or None."""
    verb = args[:2]
    if verb[:1] in (["trust"], ["untrust"]):
        return f"wb {args[0]}"
    if verb[:1] == ["resume"]:
        for a in args[1:]:
            flag = a.split("=", 1)[0]
            if flag in ("--approve", "--deny"):
                return f"wb resume {flag}"
    if verb[:1] == ["serve"] and "--act" in args[1:]:  # the page a person acts from (web/acting.py)
        return "wb serve --act"
    if verb == ["task", "done"] and any(a == "--force" or a.startswith("--force=") for a in args[2:]):
        return "wb task done --force"
    if verb == ["task", "set"]:
        for a in args[2:]:
            key = a.split("=", 1)[0].rstrip("+-").strip() if "=" in a else ""
            if key in ("acceptance", "scope"):
                return f"wb task set {key}="
    return None


def person_only(command: str, depth: int = 0, under_pty: str | None = None) -> str | None:
    """The person's command a shell command runs (spelled as in the reason), or None. Quoted commands inside it
    are read too, to a depth of four, and a wb run under a pseudo-terminal wrapper is a person's command."""
    for words in _split(command):
        for i, w in enumerate(words):
            if w == "--actor=human" or (w == "--actor" and i + 1 < len(words) and words[i + 1] == "human"):
                return "--actor human"
        pty = under_pty or next((b for b in (w.rsplit("/", 1)[-1] for w in words) if b in _PTY_WRAPPERS), None)
        for i in range(len(words)):
            if not _is_wb(words, i):
                continue
            if pty:
                return f"running wb under `{pty}` (a pseudo-terminal, which wb takes for a person's terminal)"
            verb = _person_verb(_wb_args(words[i + 1:]))
            if verb:
                return verb
        first_wb = next((i for i in range(len(words)) if _is_wb(words, i)), len(words))
        runs = {w.rsplit("/", 1)[-1] for w in words[:first_wb]} & _RUNNERS
        if depth < 4 and (runs or any(_interpreter(w) for w in words[:first_wb])):
            for w in words[:first_wb]:  # a wb command's own words (a note, a title) are not commands
                if _nested(w):
                    found = person_only(w, depth + 1, pty)
                    if found:
                        return found
    return None


def person_reason(what: str) -> str:
    return (f"{what}: that is for a person to do, not the agent. wb records who acts, and this decision must "
            "be a person's, at their own terminal. Stop and ask the person you work with to run it themselves; "
            "tell them what you would run and why.")


# --- inline interpreter code ---------------------------------------------------------------------------------

_INTERPRETER = (r"(?:^|[\s;&|(/'\"])(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|lua|"
                r"Rscript|osascript|awk|gawk|mawk|tclsh|jshell)(?:\s|$)")
_WRITES = (r"(?<!stdout)(?<!stderr)(?<!STDOUT)(?<!STDERR)\.write\b|write_text|write_bytes|writeFile|appendFile|"
           r"createWriteStream|open\s*\([^)]*,\s*(?:mode\s*=\s*)?['\"][^'\"]*[wax+]|os\.replace|rename|remove|"
           r"unlink|rmtree|truncate|shutil|copyfile|symlink|mkdir|rmdir|sysopen|File\.(?:open|write)|IO\.write|"
           r"fs\.(?:write|append|rm|unlink|rename|copy|truncate|mkdir|symlink|open|cp)|"
           r"['\"]\s*\+?>|>\s*['\"]|system\s*\(|subprocess|spawn|popen|\bexec|sqlite3?\.connect|new\s+Database")


def interpreter_target(command: str) -> str | None:
    """`.workbench/` (or wb's journal) when inline interpreter code in the command names it and writes."""
    import re

    if not re.search(_INTERPRETER, command) or not re.search(_WRITES, command):
        return None
    found = re.search(r"[^\s'\"();=,]*(?:\.workbench|\.git/wb)(?:/[^\s'\"();,]*)?", command)
    if found and protected(found.group(0)):
        return found.group(0)
    for word in re.findall(r"[^\s'\"();=,]+", command) if _db_marks else ():  # the database, named in the code
        if protected(word):
            return word
    return None
