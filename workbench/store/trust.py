"""What this clone trusts to run: the digests of the commands a workbench can run, kept under the git directory.

A workbench can run commands: config.yaml's tools (argv), hooks (`run:` argv, `python: module:function`) and
planner, board.json's acceptance commands, and a plan file given to `wb run --plan` that git tracks. What
arrives through git (clone, pull, merge, checkout, cherry-pick, `wb sync`) runs only once a person has trusted
it here (`wb trust`), like direnv's `direnv allow` and mise's `mise trust`; what this clone's wb wrote itself
is trusted as it writes it (a task added with `--accept`, the demo's config).

Trust is per command: the sha256 of a canonical JSON of what will run (`Command.key`: kind, name, what runs,
a tool's cwd and mode, the file it comes from). The digests live in `<common git dir>/wb/trust.json`, shared
by every worktree of the clone and out of reach of any checkout, never in the work tree. A change to a
command is a new digest: untrusted again. `WB_TRUST_REPO_COMMANDS=1` in the environment trusts every
command (CI, which runs the repository it checked out on purpose).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from workbench.errors import Untrusted

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

ENV = "WB_TRUST_REPO_COMMANDS"  # "1": every command is trusted (CI); docs/security.md#trust
CONFIG = ".workbench/config.yaml"
BOARD = ".workbench/board.json"
VERSION = 1
TOOL_MODE = "mutating"  # a tool's mode when config.yaml names none (harness/tools.py ToolSpec)


class Command:
    """One thing a workbench can run. `run` is what runs: an argv list, a shell command (acceptance), a
    `module:function` (python hooks and planners), or a plan file's sha256. `where` says where it is used
    (the task ids of an acceptance command), for people; it is not part of the digest. (A plain class: a
    dataclass would import inspect on the start-up path of `wb status`.)"""

    __slots__ = ("kind", "name", "source", "run", "cwd", "mode", "where", "rerun")

    def __init__(self, kind: str, name: str, source: str, run: Any, cwd: str | None = None,
                 where: Iterable[str] = (), mode: str | None = None, rerun: bool = False) -> None:
        self.kind = kind  # tool | hook | planner | acceptance | plan | setting
        self.name = name  # the tool's name, the hook's topic, "planner", "" (acceptance: any task), the plan's path
        self.source = source  # the file it comes from, relative to the work tree
        self.run = run
        self.cwd = cwd  # a tool's cwd: where it runs is part of what runs
        self.mode = mode  # a tool's mode: whether it runs without asking is part of what was trusted
        self.rerun = rerun  # a tool declared idempotent: run again after a crash — how often it runs (issue 30)
        self.where = tuple(where)

    def __repr__(self) -> str:
        return f"Command({self.kind!r}, {self.name!r}, {self.run!r})"

    def key(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "source": self.source, "run": self.run}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.mode is not None:
            out["mode"] = self.mode
        if self.rerun:  # only when set: what was trusted before this field existed keeps its digest
            out["rerun"] = True
        return out

    @property
    def canonical(self) -> str:
        return canonical(self.key())

    @property
    def digest(self) -> str:
        import hashlib  # here: `wb status` compares canonical keys and never loads OpenSSL

        return hashlib.sha256(self.canonical.encode()).hexdigest()

    @property
    def label(self) -> str:
        """What a refusal and `wb trust` call it: `config.yaml tool 'deploy'`, `T-002's acceptance command`."""
        if self.kind == "tool":
            return f"config.yaml tool {self.name!r}"
        if self.kind == "hook":
            return f"config.yaml hook {self.name}"
        if self.kind == "planner":
            return "config.yaml planner"
        if self.kind == "setting":
            return f"config.yaml setting `{self.run}`"
        if self.kind == "acceptance":
            tasks = ", ".join(self.where) or "a task"
            return f"{tasks}'s acceptance command" if len(self.where) <= 1 else \
                f"the acceptance command of {tasks}"
        return f"plan file {self.name}"

    @property
    def how(self) -> str:
        """How it runs, in full (never cut): `argv: [...]` as JSON, `sh -c: …`, `python: module:function`,
        `sha256: …` of a plan file. The caller escapes it for display (model/display.escape)."""
        if self.kind == "acceptance":
            return f"sh -c: {self.run}"
        if self.kind == "plan":
            return f"sha256: {self.run}"
        if self.kind == "setting" and self.name == "sqlite_path":
            return f"{self.run}: wb opens and writes this database, outside the repository and its git directory"
        if self.kind == "setting" and self.name in SETTING_EFFECTS:
            return f"{self.run}: {SETTING_EFFECTS[self.name]} (not applied until trusted)"
        if self.kind == "setting":
            return f"{self.run}: anyone, an agent over MCP or a script too, approves confirm_once and mutating tools"
        if isinstance(self.run, str):
            return f"python: {self.run} (imported from the repository)"
        where = f" (in {self.cwd})" if self.cwd else ""
        mode = f", mode {self.mode}" if self.mode else ""
        rerun = ", run again after a crash (idempotent)" if self.rerun else ""
        return "argv: " + json.dumps(list(self.run), ensure_ascii=False) + where + mode + rerun

    def record(self) -> dict[str, Any]:
        return {**self.key(), "digest": self.digest, "where": list(self.where)}


KEY_FIELDS = ("kind", "name", "source", "run", "cwd", "mode", "rerun")  # what Command.key holds, as a record keeps it


def canonical(key: dict[str, Any]) -> str:
    """The canonical JSON a digest is the sha256 of: sorted keys, no spaces, UTF-8 as it is."""
    return json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_key(record: Any) -> str | None:
    """The canonical key of a trust record (the fields its digest was made from), or None when it is no record."""
    if not isinstance(record, dict):
        return None
    return canonical({k: record[k] for k in KEY_FIELDS if k in record})


def config_commands(config: dict[str, Any]) -> list[Command]:
    """Every command config.yaml declares: its tools (with their modes), its hooks, its planner — and an
    `approvals: any`, which lets anyone approve what the modes hold for a person."""
    out = []
    for name, tool in sorted((config.get("tools") or {}).items()):
        if isinstance(tool, dict) and isinstance(tool.get("argv"), list):
            cwd = tool.get("cwd")
            out.append(Command("tool", str(name), CONFIG, [str(a) for a in tool["argv"]],
                               str(cwd) if cwd is not None else None, mode=str(tool.get("mode", TOOL_MODE)),
                               rerun=tool.get("idempotent") is True))
    for topic, entries in (config.get("hooks") or {}).items():
        for entry in entries or []:
            if isinstance(entry, dict) and "run" in entry:
                out.append(Command("hook", str(topic), CONFIG, [str(a) for a in entry["run"]]))
            elif isinstance(entry, dict) and "python" in entry:
                out.append(Command("hook", str(topic), CONFIG, str(entry["python"])))
    if config.get("approvals") == "any":  # who may approve is a person's decision (`approvals: human` by default)
        out.append(Command("setting", "approvals", CONFIG, "approvals: any"))
    outside = outside_path(config.get("sqlite_path"))
    if outside is not None:  # a path out of the repository is a person's to allow (issue 30): wb writes there
        out.append(outside)
    planner = config.get("planner")
    if isinstance(planner, dict) and "run" in planner:
        out.append(Command("planner", "planner", CONFIG, [str(a) for a in planner["run"]]))
    elif isinstance(planner, dict) and "python" in planner:
        out.append(Command("planner", "planner", CONFIG, str(planner["python"])))
    return out


# config.yaml settings that act on the person at this machine rather than on the workbench (issue 30.2): applied
# only once trusted here; until then wb acts as if they were not set (store/workbench.Workbench.config)
SETTING_EFFECTS = {
    "git.author": "whose name is on the commits wb makes in this clone",
    "git.sign": "wb signs its commits with your git signing key",
    "sync.on_session_start": "the agent hooks' SessionStart runs `wb sync` (a fetch and a push) by itself",
}


def setting_commands(config: dict[str, Any]) -> list[Command]:
    """The settings of config.yaml that act on the person (SETTING_EFFECTS), as they are set."""
    git: dict[str, Any] = config["git"] if isinstance(config.get("git"), dict) else {}
    sync: dict[str, Any] = config["sync"] if isinstance(config.get("sync"), dict) else {}
    out = []
    if isinstance(git.get("author"), str) and git["author"]:
        out.append(Command("setting", "git.author", CONFIG, f"git.author: {git['author']}"))
    if git.get("sign") is True:
        out.append(Command("setting", "git.sign", CONFIG, "git.sign: true"))
    if sync.get("on_session_start") is True:
        out.append(Command("setting", "sync.on_session_start", CONFIG, "sync.on_session_start: true"))
    return out


def held_settings(common_dir: Path, config: dict[str, Any]) -> list[Command]:
    """The settings of `config` this clone has not trusted (none when the environment trusts every command):
    one read of trust.json, and only when such a setting is set at all."""
    settings = setting_commands(config)
    if not settings or env_trusts():
        return []
    return TrustStore(common_dir).untrusted(settings)


def without(config: dict[str, Any], held: list[Command]) -> dict[str, Any]:
    """`config` as if the `held` settings were not set (a copy)."""
    out = dict(config)
    for cmd in held:
        section, key = cmd.name.split(".", 1)
        out[section] = {k: v for k, v in (out.get(section) or {}).items() if k != key}
    return out


def outside_path(named: Any) -> Command | None:
    """The `setting` a config.yaml `sqlite_path` that leaves the work tree is (absolute, or through `..`), or None
    for one inside it (or none): wb opens and writes the file it names, so a clone's config must not choose it."""
    if not isinstance(named, str) or not named:
        return None
    parts = named.replace("\\", "/").split("/")
    if not (os.path.isabs(named) or ".." in parts):
        return None
    return Command("setting", "sqlite_path", CONFIG, f"sqlite_path: {named}")


def acceptance_command(cmd: str, where: Iterable[str] = ()) -> Command:
    """An acceptance command, whichever task holds it: what runs is the shell command (`sh -c`)."""
    return Command("acceptance", "", BOARD, str(cmd), where=tuple(where))


def board_commands(board: dict[str, Any], *, open_only: bool = True) -> list[Command]:
    """The acceptance commands of the board's tasks (only those not done or cancelled: no other can run),
    one per distinct command, naming the tasks that hold it."""
    holders: dict[str, list[str]] = {}
    for task in board.get("tasks") or []:
        if open_only and task.get("status") in ("done", "cancelled"):
            continue
        for cmd in task.get("acceptance") or []:
            holders.setdefault(str(cmd), []).append(str(task.get("id", "?")))
    return [acceptance_command(cmd, ids) for cmd, ids in holders.items()]


def plan_command(root: Path, path: Path) -> Command | None:
    """A plan file inside the work tree that git tracks (it can come through git), or None: a plan file
    elsewhere, or one git does not track, is the user's own."""
    from workbench.git.repo import run_git

    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None
    try:
        listed = run_git(root, "ls-files", "-z", "--", rel).stdout
    except Exception:  # noqa: BLE001 - no git to ask: nothing of the tree came through it
        return None
    if not listed.strip(b"\0"):
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None  # the planner's own reading says what is wrong with it
    import hashlib

    return Command("plan", rel, rel, hashlib.sha256(data).hexdigest())


def env_trusts() -> bool:
    """WB_TRUST_REPO_COMMANDS=1, honoured only where wb would take a person's word: never in an agent's
    environment or under a process whose environment holds an agent's marker (`env -u CLAUDECODE` included).
    The CI opt-in is a person's (or CI's), not one more door an agent can open with a variable (issue 30)."""
    if os.environ.get(ENV) != "1":
        return False
    from workbench.model import provenance

    if provenance.current().via in ("mcp", "hook"):  # an agent's doors, whatever their environment says
        return False
    return not (provenance.agent_marker() or provenance.ancestor_agent())


_SKIPPED: list[str] = []  # the commands WB_TRUST_REPO_COMMANDS let run untrusted in this process (labels)


def skipped() -> bool:
    """Whether WB_TRUST_REPO_COMMANDS let an untrusted command run in this process: every event written after
    it says so (`trust: "env"`), so a reviewer can tell what ran on the variable's word alone."""
    return bool(_SKIPPED)


def forget_skipped() -> None:
    """A command ended: what the next one lets run on the variable's word is its own (one process, many
    commands: the tests' in-process runner, the MCP server)."""
    _SKIPPED.clear()


class TrustStore:
    """`<common git dir>/wb/trust.json`: {"version": 1, "commands": {digest: record}}, written atomically
    under a lock of its own (`trust.lock` beside it)."""

    def __init__(self, common_dir: Path) -> None:
        self.path = common_dir / "wb" / "trust.json"

    @classmethod
    def for_root(cls, root: Path) -> TrustStore | None:
        """The store of the clone holding the work tree `root`, or None outside git (nothing came by git)."""
        from workbench.git.repo import GitRepo

        try:
            return cls(GitRepo(root).common_dir)
        except Exception:  # noqa: BLE001 - not a git work tree (an in-memory loop, a bare directory)
            return None

    def records(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable: trust nothing (wb trust writes it anew)
        commands = data.get("commands") if isinstance(data, dict) else None
        return dict(commands) if isinstance(commands, dict) else {}

    def untrusted(self, cmds: Iterable[Command]) -> list[Command]:
        """The commands of `cmds` this clone does not trust. Compared by canonical key (what each digest was
        made from), so the check hashes nothing: a record whose fields no longer make its digest was edited
        outside wb, and the store is the user's own file."""
        records = self.records()
        if not records:
            return list(cmds)
        keys = {record_key(r) for r in records.values()}
        return [c for c in cmds if c.canonical not in keys]

    def add(self, cmds: Iterable[Command], by: str) -> int:
        """Trust `cmds` (by "person" through `wb trust`, or "wb" for what this clone's wb wrote). Returns how
        many were new."""
        from workbench.model.ids import utc_now

        cmds = list(cmds)
        if not cmds:
            return 0
        with self._locked() as records:
            new = 0
            for cmd in cmds:
                if cmd.digest not in records:
                    new += 1
                    records[cmd.digest] = {**cmd.record(), "trusted_at": utc_now(), "by": by}
        return new

    def remove(self, digests: Iterable[str]) -> int:
        gone = set(digests)
        with self._locked() as records:
            before = len(records)
            for digest in gone:
                records.pop(digest, None)
            return before - len(records)

    def _locked(self) -> _Locked:
        return _Locked(self)


class _Locked:
    """`with store._locked() as records:` the records under the store's lock, written back when the block
    changed them and ended without an exception. (A class, not a contextlib.contextmanager: every write imports
    this module, and contextlib is imported for nothing else on `wb task add`'s path: issue 33.)"""

    def __init__(self, store: TrustStore) -> None:
        self.store = store
        self.fd = -1

    def __enter__(self) -> dict[str, dict[str, Any]]:
        import fcntl

        path = self.store.path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(path.with_name("trust.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.records = self.store.records()
            self.before = json.dumps(self.records, sort_keys=True)
        except BaseException:
            os.close(self.fd)
            raise
        return self.records

    def __exit__(self, kind: object, err: object, tb: object) -> None:
        from workbench.store.atomic import atomic_write

        try:
            if kind is None and json.dumps(self.records, sort_keys=True) != self.before:
                body = {"version": VERSION, "commands": self.records}
                atomic_write(self.store.path, (json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False)
                                               + "\n").encode())
        finally:
            os.close(self.fd)


def require(root: Path, cmds: Iterable[Command]) -> None:
    """Refuse (Untrusted, exit 5) before anything runs when one of `cmds` is not trusted on this clone."""
    cmds = list(cmds)
    if not cmds:
        return
    store = TrustStore.for_root(root)
    if store is None:
        return
    missing = store.untrusted(cmds)
    if missing and env_trusts():
        _SKIPPED.extend(c.label for c in missing)
        return
    if missing:
        raise Untrusted(missing[0].label, len(missing), missing[0].kind == "plan" and missing[0].name or None)


def remember(root: Path, cmds: Iterable[Command]) -> None:
    """What this clone's wb wrote itself is trusted (a task added with `--accept`, the demo's config)."""
    cmds = list(cmds)
    if not cmds:  # most writes carry no command: no store to open
        return
    store = TrustStore.for_root(root)
    if store is not None:
        store.add(cmds, by="wb")
