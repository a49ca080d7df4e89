"""`wb diff` rendered for a person: the plain-text lines (with the style each is shown in on a terminal) and
the Markdown of a pull request, from review/diff.py's data. Pure: the command line prints them, and
review/html.py and a web view build on the same wording. Every value passes model/display.escape."""

from __future__ import annotations

import json
import re
from typing import Any

from workbench.model.display import escape
from workbench.model.proof import mark
from workbench.review.eventview import cut

MD_ROWS = 200  # a pull-request comment has a size limit: longer tables end with "… and N more"

# -- values ------------------------------------------------------------------------------------------------
_WORD = re.compile(r"^[\w.:/@+-]+$")


def value(v: Any, width: int | None = 70) -> str:
    """A value as a reader expects it: simple words bare, other strings quoted, everything else as JSON; cut
    at `width` (None: whole)."""
    text = v if isinstance(v, str) and _WORD.match(v) else json.dumps(v, ensure_ascii=False)
    return text if width is None else cut(text, width)


def change_text(change: dict[str, Any], whole: bool = False) -> str:
    """`field: old → new`; `whole` for a setting that can name a command (every config.yaml setting: tool argv,
    hooks, the planner), never cut, so the end of a command (`… | sh`) is always in view."""
    width = None if whole else 70
    old = value(change["old"], width) if "old" in change else "(absent)"
    new = value(change["new"], width) if "new" in change else "(absent)"
    return f"{change['field']}: {old} → {new}"


def side_name(side: dict[str, Any]) -> str:
    commit = side["commit"]
    if commit is None:
        return side["label"] if side["workbench"] or side["label"] == "working tree" else f"{side['label']} (empty)"
    if commit.startswith(side["label"]):  # a commit id, given in full or abbreviated
        return commit[:10]
    return f"{side['label']} ({commit[:10]})"


def session_text(s: dict[str, Any] | None) -> str:
    if s is None:
        return "none"
    where = f"{s['harness_state']}, step {min((s['step_index'] or 0) + 1, s['steps'])} of {s['steps']}"
    pending = f", waiting: {s['pending']['reason']}" if s["pending"] else ""
    return f"{str(s['id'])[:10]}… {value(s['goal'], 40)} {where}{pending}"


def task_line(task: dict[str, Any]) -> str:
    forced = mark(task)  # issue 16: a forced done says so; issue 30: and a done with no proof
    return (f"{task.get('id')} [{task.get('status')}{forced}] {task.get('kind')}/{task.get('owner')}  "
            f"{task.get('title', '')}")


def entry_text(entry: dict[str, Any], width: int = 100) -> str:
    head = f"{entry['ts']} · {entry['actor']}" if entry.get("ts") else str(entry.get("heading", ""))
    body = " ".join(entry["text"].split())
    line = f"{head}: {body}" if body else head
    return cut(line, width)


def outcome_text(s: dict[str, Any]) -> str:
    return s["outcome"] + (f" ({s['reason']})" if s["reason"] else "")


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in counts.items())


def events_headline(ev: dict[str, Any]) -> str:
    if ev["rewritten"]:
        return (f"the log was rewritten: {ev['removed']} old event(s) are not in the new log; "
                f"{ev['appended']} event(s) after the shared part")
    if ev["removed"] and not ev["appended"]:
        return (f"{ev['removed']} event(s) fewer (the new side is older: "
                f"#{ev['new_last_seq'] + 1}–#{ev['old_last_seq']})")
    span = f" (#{ev['first_seq']}–#{ev['last_seq']})" if ev["first_seq"] is not None else ""
    return f"{ev['appended']} appended{span}"


# -- text ----------------------------------------------------------------------------------------------------
Line = tuple[str, str]  # (rich style, text)


def archived_count(b: dict[str, Any]) -> str:
    """", N archived" when tasks left the board for the archive (issue 20: sealed segments, not removals)."""
    return f", {len(b['archived'])} archived" if b.get("archived") else ""


def render_text(d: dict[str, Any]) -> list[Line]:
    out: list[Line] = [("bold", f"wb diff {side_name(d['old'])} → {side_name(d['new'])}")]
    if not d["changed"]:
        out.append(("", "no changes to the workbench"))
        return out
    st = d["state"]
    log = st["decision_log"]
    if st["fields"] or st["session"] or log["added"] or log["removed"]:
        out.append(("bold", "\nstate.md"))
        out += [("yellow", f"  {change_text(c)}") for c in st["fields"]]
        if st["session"]:
            out.append(("yellow", f"  session: {session_text(st['session']['old'])} → "
                                  f"{session_text(st['session']['new'])}"))
        if log["added"] or log["removed"]:
            out.append(("", f"  decision log: {len(log['added'])} added, {len(log['removed'])} removed"))
            out += [("green", f"    + {entry_text(e)}") for e in log["added"]]
            out += [("red", f"    - {entry_text(e)}") for e in log["removed"]]
    b = d["board"]
    if b["fields"] or b["added"] or b["removed"] or b["changed"] or b.get("archived"):
        out.append(("bold", f"\nboard.json: {len(b['added'])} added, {len(b['changed'])} changed, "
                            f"{len(b['removed'])} removed" + archived_count(b)))
        out += [("yellow", f"  {change_text(c)}") for c in b["fields"]]
        for t in b["added"]:
            out.append(("green", f"  + {task_line(t)}"))
            out += [("green", f"      accept: $ {cmd}") for cmd in commands(t.get("acceptance"))]
        out += [("red", f"  - {task_line(t)}") for t in b["removed"]]
        out += [("", f"  » {task_line(t)}  → {t['archived']}") for t in b.get("archived", [])]
        for t in b["changed"]:
            mark = f"  [{ACCEPTANCE_CHANGED}]" if t.get("acceptance_changed") else ""
            mark += f"  [done: {t['unproven']}]" if t.get("unproven") else ""
            out.append(("yellow", f"  ~ {t['id']} {t['title'] or ''}{mark}"))
            for c in t["changes"]:
                if c["field"] == "acceptance":  # every command in full: a cut one could hide its end
                    out += [(style, f"      acceptance {sign} $ {cmd}") for style, sign, cmd in acceptance_change(c)]
                else:
                    out.append(("", f"      {change_text(c)}"))
    ev = d["events"]
    if ev["appended"] or ev["removed"]:
        out.append(("bold", f"\nevents.jsonl: {events_headline(ev)}"))
        if ev["by_type"]:
            out.append(("", f"  {counts_text(ev['by_type'])}"))
        out += harness_text(ev)
        out += person_text(ev)
    c = d["calls"]
    if c["added"] or c["removed"]:
        extra = f", {c['removed']} removed" + (" (rewritten)" if c["rewritten"] else "") if c["removed"] else ""
        out.append(("bold", f"\ncalls.jsonl: {c['added']} added{extra}"))
        if c["added"]:
            out.append(("", f"  by status: {counts_text(c['by_status'])} · by tool: {counts_text(c['by_tool'])}"))
    if d["config"]["fields"]:
        out.append(("bold", "\nconfig.yaml"))
        out += [("yellow", f"  {change_text(c, whole=True)}") for c in d["config"]["fields"]]
    out += [("red" if "FORCED" in text else "", text) for text in proof_text(d.get("done") or [])]
    return out


def proof_text(done: list[dict[str, Any]]) -> list[str]:
    """Proof of done (issue 16): each task finished in the range, its checks and scope findings."""
    out = ["\nproof of done"] if done else []
    for p in done:
        out.append(f"  {p['task']} (event {p['seq']}, by {p.get('actor')}) at HEAD {str(p.get('head') or '-')[:12]}"
                   + (" — FORCED" if p["forced"] else ""))
        out += [f"    exit {c['exit']}  {c.get('seconds') or 0:.2f}s  {str(c.get('sha256') or '')[:12]}  $ {c['cmd']}"
                for c in p["checks"]]
        out += [f"    scope {f.get('severity', 'forbidden')}: {f['path']}"
                + (f" ({f['glob']})" if f.get("glob") else "") for f in p["scope_findings"]]
        if p.get("override"):
            out.append(f"    override: {p['override']}")
    return out


def harness_text(ev: dict[str, Any]) -> list[Line]:
    out: list[Line] = []
    for s in ev["sessions"]:
        begun = "" if s["started"] else " (begun earlier)"
        out.append(("cyan", f"  session {s['id'][:10]}… {value(s['goal'], 60)}{begun}: {outcome_text(s)}"))
        for st in (x for x in ev["steps"] if x["session"] == s["id"]):
            what = ", ".join((["started"] if st["started"] else []) + [st["status"] or "not ended"])
            desc = f" {value(st['description'], 60)}" if st["description"] else ""
            out.append(("", f"    step {st['index'] + 1}{desc}: {what}"))
        for call in (x for x in ev["tool_calls"] if x["session"] == s["id"]):
            detail = call["error"] or call["result"] or ""
            out.append(("", f"    tool {call['tool']} (step {ordinal(call['index'])}): {call['status']}"
                            + (f" — {detail}" if detail else "")))
        for a in (x for x in ev["approvals"] if x["session"] == s["id"]):
            out.append(("", f"    approval {a['decision']}: {a['tool']} (step {ordinal(a['index'])})"
                            + (f" — {a['reason']}" if a["reason"] else "")))
    return out


# -- issue 19: the person-only actions, with who did them and how a person was proven ------------------------
def person_text(ev: dict[str, Any]) -> list[Line]:
    return [("yellow" if not a["proof"] else "",
             f"  person-only #{a['seq']}: {escape(a['what'])} — by {escape(a['who'])}")
            for a in ev.get("person_only") or []]


ACCEPTANCE_CHANGED = "acceptance changed: `wb task done` runs other commands"


def commands(value: Any) -> list[str]:
    return [str(cmd) for cmd in value] if isinstance(value, list) else [] if value is None else [str(value)]


def acceptance_change(change: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(style, sign, command): the commands no longer run (-) and the new ones (+); a reordering lists the
    new order (=)."""
    old, new = commands(change.get("old")), commands(change.get("new"))
    lines = [("red", "-", cmd) for cmd in old if cmd not in new]
    lines += [("green", "+", cmd) for cmd in new if cmd not in old]
    return lines or [("", "=", cmd) for cmd in new]


def visible(text: str) -> str:
    """A rendered line with every character of the values in it shown, never obeyed (model/display.escape);
    the blank line a heading opens with is wb's own."""
    body = text.lstrip("\n")
    return "\n" * (len(text) - len(body)) + escape(body)


def ordinal(index: Any) -> str:
    return str(index + 1) if isinstance(index, int) else "?"


# -- markdown ------------------------------------------------------------------------------------------------
def cell(v: Any, code: bool = True, whole: bool = False) -> str:
    """A table cell: one line, pipes escaped, a value in a code span; text outside one cannot open HTML (a
    `<!--` would hide the rest of the cell). Cut at 120 characters unless `whole` (a command: shown in full,
    in a code span no backtick in it can close; the table wraps it)."""
    text = " ".join((v if isinstance(v, str) else value(v, None if whole else 200)).split()).replace("|", "\\|")
    if not text:
        return ""
    if whole:
        return code_span(text) if code else text.replace("<", "&lt;")
    text = cut(text, 120)
    return f"`{text}`" if code and "`" not in text else text.replace("<", "&lt;")


def code_span(text: str) -> str:
    """`text` whole, in a code span that no backtick inside it can close (CommonMark: a longer fence)."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_acceptance(b: dict[str, Any]) -> list[str]:
    """What `wb task done` will run for each added task and each task whose acceptance changed, in full."""
    out: list[str] = []
    for t in b["added"]:
        cmds = commands(t.get("acceptance"))
        if cmds:
            out.append(f"- {t.get('id')} (added)")
            out += [f"  - {code_span(cmd)}" for cmd in cmds]
    for t in b["changed"]:
        if t.get("acceptance_changed"):
            out.append(f"- {t['id']} **{ACCEPTANCE_CHANGED}**")
            for c in (c for c in t["changes"] if c["field"] == "acceptance"):
                out += [f"  - {'removed' if sign == '-' else 'added' if sign == '+' else 'reordered'}: "
                        f"{code_span(cmd)}" for _style, sign, cmd in acceptance_change(c)]
    if out:
        out = ["#### What `wb task done` will run", "", *out, ""]
    return out


def _md_value(change: dict[str, Any], key: str, whole: bool = False) -> str:
    if key not in change:
        return "*absent*"
    return cell(value(change[key], None), whole=True) if whole else cell(value(change[key], 120))


def render_markdown(d: dict[str, Any]) -> str:
    out = [f"## wb diff: {side_name(d['old'])} → {side_name(d['new'])}", ""]
    if not d["changed"]:
        out += ["No changes to the workbench.", ""]
        return "\n".join(out)
    st = d["state"]
    log = st["decision_log"]
    if st["fields"] or st["session"]:
        out += ["### State", "", "| field | before | after |", "|---|---|---|"]
        out += [f"| `{c['field']}` | {_md_value(c, 'old')} | {_md_value(c, 'new')} |" for c in st["fields"]]
        if st["session"]:
            out.append(f"| session | {cell(session_text(st['session']['old']), False)} | "
                       f"{cell(session_text(st['session']['new']), False)} |")
        out.append("")
    if log["added"] or log["removed"]:
        out += [f"### Decision log: {len(log['added'])} added" + (f", {len(log['removed'])} removed"
                                                                  if log["removed"] else ""), ""]
        for e in log["added"]:
            head = f"{e['ts']} · {e['actor']}" if e.get("ts") else e.get("heading", "")
            out.append(f"- **{head}**: {' '.join(e['text'].split())}".replace("<", "&lt;"))
        for e in log["removed"]:
            out.append(f"- ~~{' '.join(entry_text(e, 300).split())}~~ (removed)".replace("<", "&lt;"))
        out.append("")
    b = d["board"]
    if b["fields"] or b["added"] or b["removed"] or b["changed"] or b.get("archived"):
        out += [f"### Tasks: {len(b['added'])} added, {len(b['changed'])} changed, {len(b['removed'])} removed"
                + archived_count(b),
                "", "| task | title | change | before | after |", "|---|---|---|---|---|"]
        rows = [f"| board | | `{c['field']}` | {_md_value(c, 'old')} | {_md_value(c, 'new')} |" for c in b["fields"]]
        rows += [f"| {t.get('id')} | {cell(t.get('title', ''), False)} | added | | "
                 f"{cell(str(t.get('status')) + mark(t))} |" for t in b["added"]]
        for t in b["changed"]:
            rows += [f"| {t['id']} | {cell(t['title'] or '', False)} | `{c['field']}` | {_md_value(c, 'old')} | "
                     f"{_md_value(c, 'new')}"
                     + (f" **({t['unproven']})**" if c["field"] == "status" and t.get("unproven") else "") + " |"
                     for c in t["changes"]]
        rows += [f"| {t.get('id')} | {cell(t.get('title', ''), False)} | removed | {cell(t.get('status'))} | |"
                 for t in b["removed"]]
        rows += [f"| {t.get('id')} | {cell(t.get('title', ''), False)} | archived | {cell(t.get('status'))} | "
                 f"{cell(t['archived'])} |" for t in b.get("archived", [])]
        out += rows[:MD_ROWS]
        if len(rows) > MD_ROWS:
            out.append(f"\n… and {len(rows) - MD_ROWS} more rows (`wb diff --format json` has them all)")
        out.append("")
        out += _md_acceptance(b)
    ev = d["events"]
    if ev["appended"] or ev["removed"]:
        out += [f"### Events: {events_headline(ev)}", ""]
        if ev["by_type"]:
            out += ["| type | count |", "|---|---:|"]
            out += [f"| `{t}` | {n} |" for t, n in ev["by_type"].items()]
            out.append("")
        out += [_md_line(text) for _style, text in harness_text(ev) + person_text(ev)]
        if ev["sessions"]:
            out.append("")
    c = d["calls"]
    if c["added"] or c["removed"]:
        out += [f"### Tool calls: {c['added']} added" + (f", {c['removed']} removed" if c["removed"] else ""), ""]
        if c["added"]:
            out += [f"- by status: {counts_text(c['by_status'])}", f"- by tool: {counts_text(c['by_tool'])}"]
        out.append("")
    if d["config"]["fields"]:
        out += ["### Configuration", "", "| setting | before | after |", "|---|---|---|"]
        out += [f"| `{c['field']}` | {_md_value(c, 'old', True)} | {_md_value(c, 'new', True)} |"
                for c in d["config"]["fields"]]
        out.append("")
    proof = proof_text(d.get("done") or [])  # issue 16
    if proof:
        out += ["### Proof of done", ""] + [_md_line(text) for text in proof[1:]] + [""]
    return "\n".join(visible(line) for line in out)


def _md_line(text: str) -> str:
    """An indented text line of the harness summary as a nested Markdown bullet."""
    depth = (len(text) - len(text.lstrip(" "))) // 2 - 1
    return "  " * max(depth, 0) + "- " + text.strip().replace("|", "\\|")
