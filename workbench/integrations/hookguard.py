"""What PreToolUse denies: an agent's hand on `.workbench/` (and on wb's journals in the git directory).

A file tool (Write, Edit, MultiEdit, NotebookEdit; Codex's apply_patch) naming a path under `.workbench/`,
and a shell command that plainly writes there — a redirection into it, `sed -i`/`perl -i` on it, `tee`,
`cp`/`mv`/`install`/`ln`/`rsync` into it, `rm`/`truncate`/`touch`/`dd of=` of it — are denied through the
client's decision control, with a reason naming the wb command (or MCP tool) that makes the change instead.
Reading is never denied (`cat .workbench/board.json > /tmp/x` writes /tmp/x). Cheap: a command that does not
mention `.workbench` or `.git/wb` is not even tokenized.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this module is on every hook's path
if TYPE_CHECKING:
    from typing import Any

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell"})
PATCH_TOOLS = frozenset({"apply_patch"})
_MARKS = (".workbench", ".git/wb")
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", ";;"})
_WRAPPERS = frozenset({"sudo", "command", "env", "nohup", "time", "exec", "builtin"})


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
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        if isinstance(command, str) and any(m in command for m in _MARKS):
            target = shell_target(command)
    elif tool in PATCH_TOOLS:
        patch = args.get("command") or args.get("input") or args.get("patch")
        if isinstance(patch, str) and any(m in patch for m in _MARKS):
            target = patch_target(patch)
    return reason(target) if target else None


def protected(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    if ".workbench" in parts:
        return True
    return any(a == ".git" and b == "wb" for a, b in zip(parts, parts[1:], strict=False))


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
    for i, tok in enumerate(tokens):
        if tok in _REDIRECTS or (tok.endswith(">") and tok.rstrip(">").isdigit()):
            if i + 1 < len(tokens) and protected(tokens[i + 1]):
                return tokens[i + 1]
            continue
        if tok in _SEPARATORS:
            found = _command_target(words)
            if found:
                return found
            words = []
            continue
        if i and (tokens[i - 1] in _REDIRECTS or tokens[i - 1] in ("<", "<<", "<<<")):
            continue  # a redirection's file, not an argument
        words.append(tok)
    return _command_target(words)


def _command_target(words: list[str]) -> str | None:
    while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    files = [a for a in args if not a.startswith("-")]
    hit = [a for a in files if protected(a)]
    if name in ("tee", "rm", "truncate", "touch", "shred", "unlink", "rmdir", "mkdir"):
        return hit[0] if hit else None
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
        return files[-1] if len(files) >= 2 and protected(files[-1]) else None
    if name == "dd":
        outs = [a[3:] for a in args if a.startswith("of=")]
        return outs[0] if outs and protected(outs[0]) else None
    return None


def patch_target(patch: str) -> str | None:
    """The first path under `.workbench/` an apply_patch patch adds, updates, deletes or moves to."""
    for line in patch.splitlines():
        for head in ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "):
            if line.startswith(head) and protected(line[len(head):].strip()):
                return line[len(head):].strip()
    return None


def reason(path: str) -> str:
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if name == "board.json":
        how = ("change tasks with `wb task add|start|block|set` and finish one with `wb task done ID`, which runs "
               "its acceptance (MCP tools: task_add, task_update)")
    elif name == "state.md":
        how = "use `wb set KEY=VALUE` and `wb note TEXT` (MCP tools: set_state, note)"
    elif ".workbench" not in path.replace("\\", "/").split("/"):
        how = "that is wb's own journal of your hook events; leave it to wb"
    else:
        how = "use the wb commands (`wb --help`) or wb's MCP tools"
    return (f"{path} is written by wb alone, so that every change is validated and recorded as yours: {how}. "
            "Do not edit .workbench/ by hand.")


def out_of_scope(root: str, hook: dict[str, Any]) -> str | None:
    """Why a file tool may not write its path (issue 16): it lies under a `forbidden` glob of the active task's
    scope. Read from board.json and wb's own state cache, never a load: this runs on every tool call. Shell
    commands are judged at `wb task done`, which compares what changed with the scope."""
    import os

    tool = hook.get("tool_name")
    args = hook.get("tool_input")
    if tool not in FILE_TOOLS or not isinstance(args, dict):
        return None
    path = args.get(FILE_TOOLS[tool])
    if not isinstance(path, str) or not path:
        return None
    from workbench.model import cjson

    try:
        with open(os.path.join(root, ".workbench", "board.json"), "rb") as f:
            board = cjson.loads(f.read().decode("utf-8", "replace"))
        tasks = [t for t in board.get("tasks") or [] if isinstance(t, dict) and t.get("status") == "in_progress"
                 and isinstance(t.get("scope"), dict) and t["scope"].get("forbidden")]
    except (OSError, ValueError, AttributeError):
        return None
    if not tasks:
        return None
    try:
        with open(os.path.join(root, ".workbench", ".cache", "state.json"), "rb") as f:
            active = cjson.loads(f.read().decode("utf-8", "replace"))["state"].get("active_task_id")
        tasks = [t for t in tasks if t.get("id") == active] or tasks
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # no cache: every task in progress with a scope is held to it
    full = path if os.path.isabs(path) else os.path.join(hook.get("cwd") or root, path)
    rel = os.path.relpath(os.path.realpath(full), os.path.realpath(root)).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../"):
        return None  # outside the repository: not the scope's to judge
    from workbench.model import scope as scopes

    for task in tasks:
        glob = scopes.first_match([str(g) for g in task["scope"]["forbidden"]], rel)
        if glob is not None:
            return (f"{rel} is out of bounds for {task['id']}: its scope forbids {glob}. Work inside the task's "
                    f"scope; to change it, ask a person to run: wb task set {task['id']} scope=JSON")
    return None
