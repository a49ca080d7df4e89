"""Fill an initialized workbench with generated history, fast, through wb's own encoders and reducer.

    python bench/_gen.py ROOT KIND TOTAL [--tasks N] [--done D]

KIND is `note` (note.add events: the decision log grows), `state` (state.set events: the snapshots stay
small) or `task` (task.add events: the board grows). With `task`, `--tasks N` makes only N task.add events
(the rest of TOTAL are state.set events, the history of work around them) and `--done D` marks the D oldest
of them done (task.done events, counted in TOTAL): `task 50000 --tasks 5000 --done 4800` is a long-lived
workbench's board. Afterwards the log holds exactly TOTAL events: the
generated ones, chained (seq without gaps, `prev` = sha256 of the previous line) and folded into state.md
and board.json exactly as the reducer would, then one real mutation through the Python API — with the
config's git recording — that writes the caches and commits everything (and, for a board with more finished
tasks than config.yaml's archive settings keep, the board.archive events that move them to sealed segments).
Run it with the interpreter wb is installed in; `wb validate` on the result is the caller's check.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    root, kind, total = Path(argv[0]), argv[1], int(argv[2])
    if kind not in ("note", "state", "task"):
        raise SystemExit(f"unknown kind {kind!r}")
    flags = dict(zip(argv[3::2], (int(v) for v in argv[4::2]), strict=True))
    if set(flags) - {"--tasks", "--done"} or (flags and kind != "task"):
        raise SystemExit(f"unknown flags {sorted(flags)} (only `task` takes --tasks N and --done D)")

    from workbench.api import Bench
    from workbench.model import ids, reducer, statefile
    from workbench.model.boardfile import encode_board
    from workbench.model.jsonl import encode, line_hash
    from workbench.store.atomic import atomic_write
    from workbench.store.workbench import Workbench

    wb = Workbench(root)
    loaded = wb.load(detect_human=False, need_node=True)
    if loaded.human_edits or loaded.replayed:
        raise SystemExit("the workbench is not at rest; generate into a freshly initialized one")
    docs = loaded.docs
    tail = loaded.tail
    count = total - tail.seq - 1  # the final real mutation brings the log to TOTAL
    if count < 0:
        raise SystemExit(f"the log already holds {tail.seq} events; cannot make it {total}")

    seq, prev = tail.seq, tail.hash
    lines: list[bytes] = []
    entries: list[str] = []
    next_task = 1 + sum(1 for _ in docs.board["tasks"])
    first_task = next_task
    adds = min(count, flags.get("--tasks", count))
    dones = min(flags.get("--done", 0), adds, count - adds)
    last_ts = None
    for n in range(count):
        seq += 1
        ts = ids.utc_now()
        event: dict[str, Any]
        if kind == "task" and adds <= n < adds + dones:
            event = {"type": "task.done", "payload": {"id": f"T-{first_task + n - adds:03d}", "from": "todo"}}
        elif kind == "state" or (kind == "task" and n >= adds):
            event = {"type": "state.set", "payload": {"changes": {"next_action": f"bench step {seq}"}}}
        elif kind == "note":
            text = f"bench note {seq}: generated history, one decision per line"
            event = {"type": "note.add", "payload": {"text": text}}
        else:
            task = {"id": f"T-{next_task:03d}", "kind": "build", "title": f"bench task {next_task}",
                    "status": "todo", "owner": "builder", "acceptance": [], "depends_on": [],
                    "created_at": ts, "updated_at": ts}
            next_task += 1
            event = {"type": "task.add", "payload": {"task": task}}
        event = {"schema_version": 1, "seq": seq, "id": ids.new_id(), "ts": ts, "type": event["type"],
                 "actor": "agent", "session": None, "payload": event["payload"], "prev": prev}
        line = encode(event)
        prev = line_hash(line)
        lines.append(line + b"\n")
        if kind == "note":
            # reducer._note_add, without re-copying the whole body for every event
            entries.append(reducer.note_entry(ts, "agent", text))
        else:
            reducer.apply(docs, event)
        last_ts = ts

    if count:
        if kind == "note":
            docs.body = docs.body.rstrip("\n") + "\n" + "".join(entries)
            docs.state["updated_at"] = last_ts
            docs.state["last_event"] = seq
        fd = os.open(wb.paths.events, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"".join(lines))
            os.fsync(fd)
        finally:
            os.close(fd)
        atomic_write(wb.paths.board, encode_board(docs.board))
        atomic_write(wb.paths.state, statefile.render(loaded.state_node, docs.state, docs.body))
        shutil.rmtree(wb.paths.cache, ignore_errors=True)  # wb rewrites it on the next write

    bench = Bench.open(root)
    if kind == "task":
        bench.add_task(f"bench task {next_task}")
    else:
        bench.note("bench: generated history ends here")
    final = bench.wb.log.tail().seq - (len(bench.last.seqs) - 1)  # and the board.archive events it made due
    if final != total:
        raise SystemExit(f"generated {final} events, wanted {total}")
    if bench.wb.config["git"].get("commit") != "off" and bench.last.commit is None:
        raise SystemExit(f"the final mutation was not committed: {bench.last.warnings}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
