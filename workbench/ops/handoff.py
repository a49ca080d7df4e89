"""The handoff packet (issue 16): what the next session needs, built only from what the workbench and git hold.

`packet(wb, docs, events)` is the JSON (`handoff.json`, schemas/handoff.schema.json; it wins when the two differ)
and `render_markdown(packet)` the page for people (`handoff.md`). Both are deterministic: the same workbench and
work tree give the same bytes — no clock, no absolute path, and wb's own `handoff.write` events and state
commits are left out of what they describe — so generating it twice changes nothing the second time.

Sections: the session (the latest `wb run` session, or the latest agent turn), changed files since it began
(git), commands run (harness tool calls, agent hook tool calls: the last K), failed attempts (tool errors,
failed acceptance of a forced done: every one in the session), open risks (the clean-state check: dirty tree
outside .workbench/, stray temp files named in config.yaml `handoff.stray`, a detached HEAD, a branch other
than `handoff.branches`; then blockers, red checks, unfinished tasks, a waiting yield), the next action, and
pointers to the proof events (task.done seqs).

It reads the log from the end, back to the latest session start (`recent`), never further than WINDOW events:
a handoff costs the same at 50 events and at 50,000. A workbench with no session start in its last WINDOW
events gets a packet of those events, and its summary says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.git import changes
from workbench.model import scope as scopes
from workbench.model.proof import unproven_tasks
from workbench.model.reducer import Docs
from workbench.ops.status import next_action_set
from workbench.store.eventlog import EventLog
from workbench.store.workbench import Workbench

SCHEMA_VERSION = 1
OWN_EVENTS = ("handoff.write",)  # what the packet records about itself: never part of what it describes
DEFAULT_LAST = 10
MAX_FILES = 200
MAX_FAILURES = 100
WINDOW = 1000  # events read back at most, looking for the latest session start
SESSION_STARTS = ("session.start", "agent.session_start")


def _settings(config: dict[str, Any]) -> dict[str, Any]:
    raw = config.get("handoff") or {}
    return {"last": int(raw.get("last", DEFAULT_LAST)), "stray": list(raw.get("stray") or []),
            "branches": list(raw.get("branches") or [])}


def _session_window(events: list[dict[str, Any]]) -> tuple[int, dict[str, Any] | None]:
    """(index in `events` where the latest session or agent turn began, its description)."""
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if e["type"] == SESSION_STARTS[0]:
            return i, {"kind": "harness", "id": e.get("session"), "goal": e["payload"].get("goal", ""),
                       "began_at_event": e["seq"], "where": e["payload"].get("where")}
        if e["type"] == SESSION_STARTS[1]:
            return i, {"kind": "agent", "id": e["payload"].get("agent_session") or None,
                       "goal": "", "began_at_event": e["seq"], "agent": e["payload"].get("agent", ""),
                       "where": None}
    return 0, None


def _command_of_agent(payload: dict[str, Any]) -> str:
    found = payload.get("args")
    args: dict[str, Any] = found if isinstance(found, dict) else {}
    if isinstance(args.get("command"), str):
        return str(args["command"])
    target = args.get("file_path") or args.get("path") or args.get("pattern") or ""
    return f"{payload.get('tool', '')} {target}".strip()


def _one_line(text: Any, width: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _commands_and_failures(window: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    commands: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    by_key: dict[str, dict[str, Any]] = {}
    for e in window:
        p, kind = e["payload"], e["type"]
        if kind == "tool.call":
            cmd = {"seq": e["seq"], "source": "harness", "command": _one_line(
                f"{p.get('tool', '')} {json.dumps(p.get('args', {}), sort_keys=True)}"), "status": "called"}
            commands.append(cmd)
            by_key[str(p.get("key"))] = cmd
        elif kind == "tool.result" and str(p.get("key")) in by_key:
            by_key[str(p.get("key"))]["status"] = "ok"
        elif kind == "tool.error":
            if str(p.get("key")) in by_key:
                by_key[str(p.get("key"))]["status"] = "error"
            failures.append({"seq": e["seq"], "kind": "tool_error", "what": f"step {p.get('step', '')}",
                             "error": _one_line(p.get("error", ""))})
        elif kind == "agent.tool_call":
            commands.append({"seq": e["seq"], "source": "agent", "command": _one_line(_command_of_agent(p)),
                             "status": "called"})
        elif kind == "agent.tool_result":
            result = p.get("result")
            if isinstance(result, dict) and (result.get("is_error") or result.get("error")):
                failures.append({"seq": e["seq"], "kind": "agent_tool_error", "what": str(p.get("tool", "")),
                                 "error": _one_line(result.get("error") or result.get("stderr") or "error")})
        elif kind == "task.done":
            for check in p.get("acceptance") or []:
                commands.append({"seq": e["seq"], "source": "acceptance", "command": _one_line(check.get("cmd", "")),
                                 "status": "ok" if check.get("exit") == 0 else f"exit {check.get('exit')}"})
                if check.get("exit") != 0:
                    failures.append({"seq": e["seq"], "kind": "acceptance_failed", "what": str(p.get("id", "")),
                                     "error": _one_line(f"`{check.get('cmd', '')}` {check.get('outcome', '')}")})
    return commands, failures


def _risks(root: Path, docs: Docs, settings: dict[str, Any], dirty: list[str], branch: str | None,
           failures: list[dict[str, Any]]) -> list[dict[str, str]]:
    risks: list[dict[str, str]] = []
    # the clean-state check first
    if dirty:
        shown = ", ".join(dirty[:10]) + (f" and {len(dirty) - 10} more" if len(dirty) > 10 else "")
        risks.append({"kind": "dirty_tree", "detail": f"{len(dirty)} uncommitted change(s) outside .workbench/: "
                                                      f"{shown}"})
    stray = sorted({p for p in dirty if scopes.first_match(settings["stray"], p) is not None})
    for path in stray:
        risks.append({"kind": "stray_file", "detail": f"{path} (matches handoff.stray in config.yaml)"})
    if branch is None:
        risks.append({"kind": "detached_head", "detail": "HEAD is detached: new commits belong to no branch"})
    elif settings["branches"] and branch not in settings["branches"]:
        risks.append({"kind": "unexpected_branch", "detail": f"on branch {branch}, not "
                                                             f"{' or '.join(settings['branches'])}"})
    for blocker in docs.state.get("blockers") or []:
        risks.append({"kind": "blocker", "detail": str(blocker)})
    status = {t.get("id"): t.get("status") for t in docs.board["tasks"]}
    still_red = {}  # a refused done of a task still not done: its last failure
    for failure in failures:
        if failure["kind"] == "acceptance_failed":
            risks.append({"kind": "red_check", "detail": f"{failure['what']}: {failure['error']} (forced done)"})
        elif failure["kind"] == "acceptance_refused" and status.get(failure["what"]) != "done":
            still_red[failure["what"]] = failure
    for tid, failure in still_red.items():
        risks.append({"kind": "red_check", "detail": f"{tid}: acceptance fails: {failure['error']} (not done)"})
    session = docs.state.get("session")
    if isinstance(session, dict):
        failed = [s for s in session.get("plan") or [] if s.get("status") in ("failed", "aborted")]
        for step in failed:
            risks.append({"kind": "red_check", "detail": f"step {step.get('id')} {step.get('status')}: "
                                                         f"{_one_line(step.get('error', ''))}"})
        pending = session.get("pending")
        if isinstance(pending, dict):
            risks.append({"kind": "waiting_yield", "detail": f"the session waits: {pending.get('reason', '')} "
                                                             f"(`{pending.get('command') or 'wb resume'}`)"})
    for task in docs.board["tasks"]:
        if task.get("status") in ("in_progress", "blocked"):
            risks.append({"kind": "unfinished_task", "detail": f"{task['id']} {task['status']}: {task.get('title')}"})
    if docs.state.get("memory"):  # issue 22: what a note or an assumption said, about paths a commit changed since
        from workbench.ops.memory import line, stale_items

        for item in stale_items(root, docs.state):
            risks.append({"kind": "stale_memory", "detail": line(item, 120)})
    return risks


def _next_action(docs: Docs) -> dict[str, str]:
    """What the next session does first, in the order `wb status` derives it (issue 22): the active task in
    progress, a waiting yield (or the live session), the next action set by hand while it still holds, blocked
    work, then the ready task of the highest priority."""
    from workbench.ops.status import ready_tasks

    state, tasks = docs.state, docs.board["tasks"]
    session = state.get("session")
    active = next((t for t in tasks if t.get("id") == state.get("active_task_id")), None)
    if active is not None and active.get("status") == "in_progress":
        return {"text": f"finish {active['id']}: {active.get('title')}", "command": f"wb task done {active['id']}"}
    if isinstance(session, dict) and isinstance(session.get("pending"), dict):
        pending = session["pending"]
        return {"text": f"answer the waiting session: {pending.get('reason', '')}",
                "command": str(pending.get("command") or "wb resume").split(" | ")[0]}
    if isinstance(session, dict):
        return {"text": "continue the live session", "command": "wb resume"}
    if next_action_set(state, tasks):  # wb init's placeholder, or one that no longer holds, is not set
        return {"text": str(state["next_action"]), "command": ""}
    blocked = active if active is not None and active.get("status") == "blocked" else None  # the work in hand
    if blocked is not None:
        return {"text": f"unblock {blocked['id']}: {blocked.get('title')} "
                        f"({blocked.get('blocked_reason') or 'no reason given'})",
                "command": f"wb task start {blocked['id']}"}
    ready = ready_tasks(tasks, docs.board)
    if ready:
        task = min(ready, key=lambda t: t.get("priority", 2))
        return {"text": f"start {task['id']}: {task.get('title')}", "command": f"wb task start {task['id']}"}
    return {"text": "nothing open on the board: add the next task", "command": "wb task add TITLE"}


def _with_refused(failures: list[dict[str, Any]], attempts: list[dict[str, Any]],
                  since: int) -> list[dict[str, Any]]:
    """The log's failures and the refused attempts made since event `since` (a `wb task done` whose
    acceptance failed leaves no event: store/attempts.py keeps it), in the order of the log."""
    refused = [{"seq": int(a.get("after_event") or 0), "kind": "acceptance_refused", "what": str(a.get("task", "")),
                "error": _one_line("; ".join(f"`{f.get('cmd', '')}` {f.get('outcome', '')}"
                                             for f in a.get("failed") or []))}
               for a in attempts if a.get("kind") == "acceptance_refused" and int(a.get("after_event") or 0) >= since]
    return sorted(failures + refused, key=lambda f: f["seq"])  # stable: each side keeps its own order


def packet(root: Path, config: dict[str, Any], docs: Docs, events: list[dict[str, Any]],
           attempts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The packet for the workbench whose documents are `docs` and whose log is `events` (all of it);
    `attempts`: the refused attempts store/attempts.py kept. `events` may be the newest ones only, as
    `recent` reads them: back to the latest session start, or WINDOW of them."""
    settings = _settings(config)
    described = [e for e in events if e["type"] not in OWN_EVENTS]
    start, session = _session_window(described)
    cut = session is None and bool(described) and described[0]["seq"] > 1  # the reading stopped before the start
    window = described[start:]
    where = session.get("where") if session else None
    base = where.get("code_head") if isinstance(where, dict) else None
    if not base:  # no harness session recorded where it began: the earliest start of a task still open
        open_heads = [t["start_head"] for t in docs.board["tasks"]
                      if t.get("start_head") and t.get("status") in ("in_progress", "blocked")]
        base = open_heads[0] if open_heads else None
    if not base:  # issue 22: every task done — the HEAD the window's first task start or done recorded
        base = next((e["payload"]["head"] for e in window if e["type"] in ("task.start", "task.done")
                     and isinstance(e["payload"].get("head"), str) and e["payload"]["head"]), None)
    dirty = changes.dirty(root)
    branch = changes.branch(root)
    committed = changes.committed_since(root, base) if base else []
    commits = changes.commits_since(root, base) if base else []
    commands, failures = _commands_and_failures(window)
    failures = _with_refused(failures, attempts or [], window[0]["seq"] - 1 if window else (
        described[-1]["seq"] if described else 0))
    state = docs.state
    live = state.get("session") if isinstance(state.get("session"), dict) else None
    outcome = None
    for e in reversed(window):
        if e["type"] in ("session.complete", "session.abort"):
            outcome = {"type": e["type"], "reason": e["payload"].get("reason", "")}
            break
    counts: dict[str, int] = {}
    for task in docs.board["tasks"]:
        counts[task.get("status", "todo")] = counts.get(task.get("status", "todo"), 0) + 1
    proofs = [{"task": e["payload"].get("id"), "seq": e["seq"], "forced": bool(e["payload"].get("forced")),
               "head": e["payload"].get("head")} for e in window if e["type"] == "task.done"]
    summary_parts = []
    if session:
        summary_parts.append(f"{session['kind']} session" + (f" \u201c{_one_line(session['goal'], 80)}\u201d"
                                                             if session.get("goal") else ""))
        summary_parts.append(f"live ({live['harness_state']})" if live and live.get("id") == session.get("id")
                             else (outcome["type"].split(".")[1] + (f": {outcome['reason']}" if outcome["reason"]
                                                                    else "") if outcome else "ended"))
    elif cut:
        summary_parts.append(f"no session start in the last {len(described)} events")
    else:
        summary_parts.append("no session recorded")
    summary_parts.append(f"{len(window)} event(s), {len(proofs)} task(s) done, {len(failures)} failure(s)")
    summary_parts.append(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "empty board")
    last = settings["last"]
    return {
        "schema_version": SCHEMA_VERSION,
        "describes": {"last_event": described[-1]["seq"] if described else 0,
                      "branch": branch, "code_head": changes.code_head(root), "worktree": changes.worktree_name(root)},
        "summary": "; ".join(summary_parts),
        "session": None if session is None else {k: session[k] for k in ("kind", "id", "goal", "began_at_event")},
        "next_action": _next_action(docs),
        "changed_files": {"since": base, "committed": committed[:MAX_FILES], "uncommitted": dirty[:MAX_FILES],
                          "truncated": len(committed) > MAX_FILES or len(dirty) > MAX_FILES},
        "commits": commits,
        "commands": {"total": len(commands), "last": commands[-last:] if last > 0 else []},
        "failures": {"total": len(failures), "items": failures[-MAX_FAILURES:]},
        "risks": _risks(root, docs, settings, dirty, branch, failures),
        "tasks": {"by_status": dict(sorted(counts.items())),
                  "open": [{"id": t["id"], "status": t["status"], "title": t.get("title", "")}
                           for t in docs.board["tasks"] if t.get("status") in ("todo", "in_progress", "blocked")]},
        "proof": proofs,
        "unproven": unproven_tasks(docs.board["tasks"]),
        "person_only": _person_only(window),
    }


# -- issue 19: the person-only actions of the window, and how each person was proven ---------------------------
def _person_only(window: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from workbench.review.story import person_only

    return [{k: a[k] for k in ("seq", "what", "who", "proof")} for a in person_only(window)]


def encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def render_markdown(p: dict[str, Any]) -> bytes:
    """handoff.md: the same packet for people (handoff.json wins when they differ)."""
    nxt = p["next_action"]
    out = ["# Handoff", "", "<!-- written by `wb handoff` from the workbench; handoff.json wins when they differ -->",
           "", f"**Next action:** {nxt['text']}" + (f" — `{nxt['command']}`" if nxt["command"] else ""), "",
           f"**Summary:** {p['summary']}", ""]
    where = p["describes"]
    out += [f"Branch `{where['branch'] or 'detached HEAD'}` at `{str(where['code_head'] or '-')[:12]}`, worktree "
            f"`{where['worktree']}`, up to event {where['last_event']}.", ""]
    out += ["## Open risks", ""] + ([f"- **{r['kind']}**: {r['detail']}" for r in p["risks"]] or ["- none"]) + [""]
    files = p["changed_files"]
    since = f"`{files['since'][:12]}`" if files["since"] else "the start (no recorded base commit)"
    out += ["## Changed files", "", f"Since {since}:", ""]
    out += [f"- {f}" for f in files["committed"]] + [f"- {f} (uncommitted)" for f in files["uncommitted"]]
    if not files["committed"] and not files["uncommitted"]:
        out.append("- none")
    out.append("")
    if p["commits"]:
        out += ["## Commits", ""] + [f"- `{c['sha'][:12]}` {c['subject']}" for c in p["commits"]] + [""]
    cmds = p["commands"]
    out += [f"## Commands run (last {len(cmds['last'])} of {cmds['total']})", ""]
    out += [f"- #{c['seq']} {c['source']}: `{c['command']}` — {c['status']}" for c in cmds["last"]] or ["- none"]
    out.append("")
    fails = p["failures"]
    out += [f"## Failed attempts ({fails['total']})", ""]
    out += [f"- #{f['seq']} {f['kind']} {f['what']}: {f['error']}" for f in fails["items"]] or ["- none"]
    out.append("")
    out += ["## Open tasks", ""] + ([f"- {t['id']} [{t['status']}] {t['title']}" for t in p["tasks"]["open"]]
                                    or ["- none"]) + [""]
    out += ["## Proof", ""] + ([f"- {x['task']}: task.done event #{x['seq']} at `{str(x['head'] or '-')[:12]}`"
                                + (" — **FORCED**" if x["forced"] else "") for x in p["proof"]] or ["- none"])
    if p.get("unproven"):  # issue 30: never shown as proven
        out += ["", "**Done without proof:** " + ", ".join(f"{u['id']} ({u['why']})" for u in p["unproven"])]
    people = p.get("person_only") or []  # issue 19: who did what only a person may, and how they were proven
    out += ["", "## Person-only actions", ""] + ([f"- #{a['seq']} {a['what']} — by {a['who']}" for a in people]
                                                 or ["- none"])
    from workbench.model.display import escape  # each entry is one line: a value's ESC, \r, \n or bidi is shown

    return ("\n".join(escape(line) for line in out) + "\n").encode("utf-8")


def recent(log: EventLog, pending: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The events a packet describes, oldest first, read from the end of the log: back to the latest session
    start, or WINDOW events (wb's own `handoff.write` not counted), then `pending` (events of the transaction
    that are not in the log yet)."""
    newest_first: list[dict[str, Any]] = []
    described = 0
    for _line, event in log.iter_backwards():
        newest_first.append(event)
        if event["type"] in OWN_EVENTS:
            continue
        described += 1
        if event["type"] in SESSION_STARTS or described >= WINDOW:
            break
    events = newest_first[::-1]
    return events + [e for e in pending or [] if not events or e["seq"] > events[-1]["seq"]]


# -- writing it ----------------------------------------------------------------------------------------------
def build(wb: Workbench, docs: Docs, events: list[dict[str, Any]], waiting: dict[str, Any] | None = None
          ) -> tuple[dict[str, Any], bytes, bytes]:
    """(the packet, handoff.json's bytes, handoff.md's bytes): redacted, and checked against its schema.
    `waiting` (ops/status.py `waiting_writes`): acknowledged writes on no branch yet, an open risk naming the
    command that lands them (issue 29)."""
    from workbench.model import schemas
    from workbench.model.redaction import redact, secret_values
    from workbench.store.attempts import Attempts

    attempts = Attempts(wb.git.git_dir).read()
    made = packet(wb.root, wb.config, docs, events, attempts)
    if waiting:
        made["risks"].insert(0, {"kind": "not_committed", "detail": f"{waiting['text']}"})
    raw = encode(redact(made, secret_values(wb.config)))
    data = json.loads(raw)
    schemas.check("handoff", data, "handoff.json")
    return data, raw, render_markdown(data)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def unchanged(wb: Workbench, raw: bytes, md: bytes) -> bool:
    return _read(wb.paths.wb / "handoff.json") == raw and _read(wb.paths.wb / "handoff.md") == md


def write_packet(wb: Workbench) -> dict[str, Any]:
    """Write the packet at the end of a `wb run` session, into the commit that ends it: under the lock, the
    two files through the store's write function (`write_workbench_file`), no event of its own. Returns it."""
    from workbench.store.atomic import write_workbench_file

    with wb.lock():
        loaded = wb.load(detect_human=False)
        from workbench.ops.status import waiting_writes

        data, raw, md = build(wb, loaded.docs, recent(wb.log), waiting_writes(wb, loaded) if loaded.pending else None)
        if not unchanged(wb, raw, md):
            write_workbench_file(wb.paths.wb, "handoff.json", raw)
            write_workbench_file(wb.paths.wb, "handoff.md", md)
    return data
