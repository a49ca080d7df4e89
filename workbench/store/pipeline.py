"""The write path as data: the transaction's stages, declared in the order they run, the way the harness's
transition table is declared (harness/machine.py). Each stage is a module of `store/stages/` with one
function `run(tx)` of the transaction (store/transaction.py, the context they share, typed as the
`StageContext` of store/stagecontext.py), knowing nothing of the others. The declaration is checked when it is
made (names unique, spans in order, every stage in one span) and renders itself into docs/architecture.md
(`render`; tests/arch/test_write_stages.py keeps the two the same).

A transaction runs its declaration in spans: `enter` when the `with` block opens (ending with `apply`, the
caller's block, where `tx.emit()` is called), `load` again whenever it must read the files afresh (a person
saved a snapshot under the write, a config.yaml edit was committed first), `write` when the block ends
(`tx.commit()`; a stage returning STOP ends the span: deferred, nothing to write, a dry run's checks done),
`finish` after the block unless its write raised or was a dry run (its stages tell a block that raised:
`tx.failed`), and `release` whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from workbench.store.stages import (
    STOP,
    adopt,
    append,
    apply,
    archive_due,
    commit_owed,
    config_edit,
    fold_spool,
    git_commit,
    hand_edits,
    journal,
    keep_refusal,
    load,
    log_prefix,
    new_files,
    note_config,
    put_files,
    release,
    revive,
    seal_log,
    sealed,
    set_aside,
    settle,
    settle_spool,
    snapshot,
    take_lock,
    validate,
    warnings,
)

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext

Stage = tuple[str, Callable[["StageContext"], object]]

# the files backend: .workbench/ in the work tree, the pending journal in the git directory, a git commit
STAGES: tuple[Stage, ...] = (
    ("lock", take_lock.run),
    ("revive pending", revive.run),
    ("load", load.run),
    ("adopt pending", adopt.run),
    ("detect edits", hand_edits.run),
    ("fold spool", fold_spool.run),
    ("commit config edit", config_edit.run),
    ("apply", apply.run),
    ("set aside", set_aside.run),
    ("check sealed", sealed.run),
    ("archive", archive_due.run),
    ("validate", validate.run),
    ("check log", log_prefix.run),
    ("journal", journal.run),
    ("new files", new_files.run),
    ("append", append.run),
    ("snapshot", snapshot.run),
    ("put files", put_files.run),
    ("seal log", seal_log.run),
    ("commit", git_commit.run),
    ("settle", settle.run),
    ("settle spool", settle_spool.run),
    ("note config", note_config.run),
    ("warnings", warnings.run),
    ("keep refusal", keep_refusal.run),
    ("commit owed", commit_owed.run),
    ("release", release.run),
)



def _sqlite_stages() -> tuple[Stage, ...]:
    """The SQLite backend's stages (store/sqlitedb.py): one database transaction, BEGIN IMMEDIATE … COMMIT.
    Declared when first asked for (`SQLITE_STAGES`, `SQLITE`): a write on files imports none of its modules."""
    from workbench.store.stages import (
        sqlite_archive,
        sqlite_catch_up,
        sqlite_commit,
        sqlite_load,
        sqlite_lock,
        sqlite_validate,
        sqlite_write,
    )

    return (
        ("lock", sqlite_lock.run),
        ("load", sqlite_load.run),
        ("fold spool", fold_spool.run),
        ("apply", apply.run),
        ("catch up", sqlite_catch_up.run),
        ("archive", sqlite_archive.run),
        ("validate", sqlite_validate.run),
        ("write", sqlite_write.run),
        ("commit", sqlite_commit.run),
        ("put files", put_files.run),
        ("settle spool", settle_spool.run),
        ("release", release.run),
    )


class Pipeline:
    """One backend's stages and the spans a transaction runs them in (each a first and last stage name). A plain
    class, not a dataclass: dataclasses imports inspect, ast and tokenize on every write (issue 33)."""

    def __init__(self, name: str, stages: tuple[Stage, ...], *, enter: tuple[str, str], load: tuple[str, str],
                 write: tuple[str, str], finish: tuple[str, str],
                 release: tuple[str, str] = ("release", "release")) -> None:
        self.name, self.stages = name, stages
        self.enter, self.load, self.write, self.finish, self.release = enter, load, write, finish, release
        self._check()

    def _check(self) -> None:
        names = [n for n, _run in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: a stage named twice")
        spans = (self.enter, self.load, self.write, self.finish, self.release)
        if any(end not in names for span in spans for end in span):
            raise ValueError(f"{self.name}: a span names a stage not declared")
        if any(names.index(first) > names.index(last) for first, last in spans):
            raise ValueError(f"{self.name}: a span's stages out of order")
        if self.enter[1] != "apply" or names[-1] != "release" or self.release != ("release", "release"):
            raise ValueError(f"{self.name}: the enter span ends with the caller's block, the lock is released last")
        order = [self.enter, self.write, self.finish, self.release]
        if any(names.index(a[1]) + 1 != names.index(b[0]) for a, b in pairwise(order)):
            raise ValueError(f"{self.name}: the spans enter, write, finish and release overlap or leave a gap")
        load = self.span(*self.load)
        if load != self.span(*self.enter)[1:len(load) + 1]:
            raise ValueError(f"{self.name}: the load span is not the enter span's after the lock")

    def span(self, first: str, last: str) -> tuple[Stage, ...]:
        names = [n for n, _run in self.stages]
        return self.stages[names.index(first):names.index(last) + 1]


FILES = Pipeline("files", STAGES, enter=("lock", "apply"), load=("revive pending", "fold spool"),
                 write=("set aside", "settle"), finish=("settle spool", "commit owed"))
if TYPE_CHECKING:
    SQLITE_STAGES: tuple[Stage, ...]
    SQLITE: Pipeline


def __getattr__(name: str) -> object:
    """SQLITE_STAGES and SQLITE, declared (and checked) on first use: by store/sqlitetx.py, the docs, the tests."""
    if name in ("SQLITE_STAGES", "SQLITE"):
        stages = _sqlite_stages()
        globals().update(SQLITE_STAGES=stages, SQLITE=Pipeline(
            "sqlite", stages, enter=("lock", "apply"), load=("load", "fold spool"), write=("catch up", "put files"),
            finish=("settle spool", "settle spool")))
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run(tx: StageContext, stages: tuple[Stage, ...]) -> None:
    """Run `stages` in order, until one returns STOP. An OSError undoes what the stages registered for it
    (`tx.on_os_error`: the pending journal takes back a batch that never reached the log), then propagates."""
    try:
        for _name, stage in stages:
            if stage(tx) == STOP:
                return
    except OSError:
        for undo in reversed(tx.on_os_error):
            undo()
        raise


def render(pipeline: Pipeline = FILES, form: str = "text") -> str:
    """The stages as docs/architecture.md draws them, in the declared order with their spans: `text` (one line
    a stage, naming its module) or `mermaid` (a flowchart)."""
    load = {n for n, _run in pipeline.span(*pipeline.load)}
    heads = {pipeline.enter[0]: "with wb.transaction() as tx:  (enter)",
             pipeline.write[0]: "the block ends: tx.commit()  (write: a stage may STOP the rest of it)",
             pipeline.finish[0]: "after the block, unless its write raised  (finish)",
             pipeline.release[0]: "always  (release)"}
    if form == "mermaid":
        lines = ["flowchart TD"]
        ids = [f"s{i}" for i in range(len(pipeline.stages))]
        for i, (name, _run) in enumerate(pipeline.stages):
            lines.append(f'    {ids[i]}["{name}"]')
        lines += [f"    {a} --> {b}" for a, b in pairwise(ids)]
        return "\n".join(lines)
    lines = []
    for name, stage in pipeline.stages:
        if name in heads:
            lines.append(f"── {heads[name]}")
        module = stage.__module__.rsplit(".", 1)[-1]
        again = "   ↺ again at each reload (tx.begin)" if name in load else ""
        lines.append(f"  {name:<20} stages/{module}.py{again}")
    return "\n".join(lines)
