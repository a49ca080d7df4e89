"""The Python API: every wb operation without the CLI, for agents that import wb.

    from workbench.api import Bench, init
    init("path/to/repo")
    bench = Bench.open("path/to/repo")
    task = bench.add_task("Write the parser", acceptance=["pytest -q tests/test_parser.py"])
    bench.start_task(task["id"])
    bench.note("Chose a hand-written parser: the grammar is tiny.")
    bench.done_task(task["id"])
    outcome = bench.run("Ship it", plan="plan.yaml")       # `wb run`: a Result, or a Pending at a yield
    outcome = bench.resume(approve=True)                   # `wb resume --approve`

The verbs are the command line's, in snake_case: `wb resume --approve` is `bench.resume(approve=True)`,
`wb doctor --fix` is `bench.doctor(fix=True)`, `wb diff --format json A B` is `bench.diff("A", "B")`. Each
returns data and never prints. Each mutating method is one transaction (lock, validation, event log, atomic
snapshots, one git commit) and raises a WorkbenchError subclass when refused. `bench.last` describes the
last commit and its warnings.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.api.bench import Bench
    from workbench.api.revisions import diff
    from workbench.api.rules import (
        EVENT_TYPE,
        GOALPOSTS,
        KEPT_STATE_KEYS,
        SETTABLE_STATE_KEYS,
        SETTABLE_TASK_KEYS,
        goalposts_moved,
        lease_seconds,
        next_task_id,
        open_children,
        parent_problem,
        person_only,
        scope_blocking,
        set_command,
    )
    from workbench.api.setup import export_workbench, import_workbench, init, join
    from workbench.ops.acceptance import run_acceptance
    from workbench.ops.replay import ReplayReport, replay
    from workbench.ops.status import status_of
    from workbench.ops.taskquery import TASK_FILTERS, filter_tasks
    from workbench.ops.validate import validate_workbench
    from workbench.store.transaction import LastWrite

__all__ = [
    "Bench", "EVENT_TYPE", "GOALPOSTS", "KEPT_STATE_KEYS", "LastWrite", "ReplayReport", "SETTABLE_STATE_KEYS",
    "SETTABLE_TASK_KEYS", "TASK_FILTERS", "diff", "export_workbench", "filter_tasks", "goalposts_moved",
    "import_workbench", "init", "join", "lease_seconds", "next_task_id", "open_children", "parent_problem",
    "person_only", "replay", "run_acceptance", "scope_blocking", "set_command", "status_of",
    "validate_workbench",
]


# Each name is imported from its module when first asked for (PEP 562), so importing one module of this package
# (`workbench.api.tasks`, for the command line's `wb task add`: cli/writes.py) brings no other family of verbs;
# replay's dataclasses bring inspect, ast and tokenize, which no write needs (issue 33).
_HOME = {
    "Bench": "workbench.api.bench", "diff": "workbench.api.revisions",
    **dict.fromkeys(("EVENT_TYPE", "GOALPOSTS", "KEPT_STATE_KEYS", "SETTABLE_STATE_KEYS", "SETTABLE_TASK_KEYS",
                     "goalposts_moved", "lease_seconds", "next_task_id", "open_children", "parent_problem",
                     "person_only", "scope_blocking", "set_command"), "workbench.api.rules"),
    **dict.fromkeys(("export_workbench", "import_workbench", "init", "join"), "workbench.api.setup"),
    "run_acceptance": "workbench.ops.acceptance", "ReplayReport": "workbench.ops.replay",
    "replay": "workbench.ops.replay", "status_of": "workbench.ops.status", "TASK_FILTERS": "workbench.ops.taskquery",
    "filter_tasks": "workbench.ops.taskquery", "validate_workbench": "workbench.ops.validate",
    "LastWrite": "workbench.store.transaction",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(home, fromlist=[name]), name)
    globals()[name] = value  # asked once
    return value
