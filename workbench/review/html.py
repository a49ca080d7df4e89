"""`wb diff --format html`: the diff by meaning as one self-contained HTML page, read as a reviewer reads a pull
request — tasks added, changed, removed and archived field by field, state fields, the decision log, events by
type with each harness session's steps, tool calls and approvals, tool calls, configuration, proof of done.

One file: the style inline, no script, nothing fetched (a Content-Security-Policy of `default-src 'none'`
says so to the browser as well). Every value is shown, never obeyed: it passes model/display.escape first (a
control character, an ANSI escape or a bidi control is written as its escape, `\\e[31m`, `\\u202e`, as the
terminal shows it), then HTML escaping (`<script>` is text). A plain function of the diff's data
(review/diff.py), for the command line and any other view that serves the page.
"""

from __future__ import annotations

import html
from typing import Any

from workbench.model.display import escape
from workbench.model.proof import mark
from workbench.review.diffview import (
    ACCEPTANCE_CHANGED,
    acceptance_change,
    commands,
    counts_text,
    entry_text,
    events_headline,
    harness_text,
    person_text,
    proof_text,
    session_text,
    side_name,
    value,
)

ROWS = 2000  # a table longer than this ends with "… and N more" (`wb diff --format json` has them all)

STYLE = """
body{font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;padding:0 1em;color:#1f2328;background:#fff}
h1{font-size:1.5em;border-bottom:1px solid #d0d7de;padding-bottom:.3em}
h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
h3{font-size:1em;margin:1em 0 .3em}
code,.v{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;
white-space:pre-wrap;word-break:break-word}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
tr.added td{background:#e6ffec}tr.removed td{background:#ffebe9}tr.archived td{background:#f6f8fa}
tr.changed td.change{background:#fff8c5}
li.added{color:#116329}li.removed{color:#82071e;text-decoration:line-through}
.warn{color:#82071e;font-weight:600}.muted{color:#59636e}
ul{padding-left:1.4em;margin:.3em 0}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"


def h(v: object) -> str:
    """A value shown as text: its controls written as escapes (model/display), then HTML-escaped."""
    return html.escape(escape(v), quote=True)


def code(v: object) -> str:
    return f'<code>{h(v)}</code>'


def _val(change: dict[str, Any], key: str, whole: bool = False) -> str:
    if key not in change:
        return '<span class="muted">absent</span>'
    return f'<span class="v">{h(value(change[key], None if whole else 200))}</span>'


def _table(headers: list[str], rows: list[str], cls: str = "") -> list[str]:
    shown = rows[:ROWS]
    out = [f'<table class="{cls}">' if cls else "<table>",
           "<thead><tr>" + "".join(f"<th>{h(x)}</th>" for x in headers) + "</tr></thead>", "<tbody>", *shown,
           "</tbody></table>"]
    if len(rows) > ROWS:
        out.append(f'<p class="muted">… and {len(rows) - ROWS} more rows (<code>wb diff --format json</code> '
                   "has them all)</p>")
    return out


def _state(d: dict[str, Any]) -> list[str]:
    st = d["state"]
    log = st["decision_log"]
    out: list[str] = []
    if st["fields"] or st["session"]:
        rows = [f'<tr><td>{code(c["field"])}</td><td>{_val(c, "old")}</td><td>{_val(c, "new")}</td></tr>'
                for c in st["fields"]]
        if st["session"]:
            rows.append(f'<tr><td>session</td><td>{h(session_text(st["session"]["old"]))}</td>'
                        f'<td>{h(session_text(st["session"]["new"]))}</td></tr>')
        out += ['<section id="state"><h2>State</h2>', *_table(["field", "before", "after"], rows), "</section>"]
    if log["added"] or log["removed"]:
        head = f"Decision log: {len(log['added'])} added" + (f", {len(log['removed'])} removed"
                                                            if log["removed"] else "")
        items = [f'<li class="added">{h(entry_text(e, 10_000))}</li>' for e in log["added"]]
        items += [f'<li class="removed">{h(entry_text(e, 10_000))}</li>' for e in log["removed"]]
        out += [f'<section id="decisions"><h2>{h(head)}</h2><ul>', *items, "</ul></section>"]
    return out


def _tasks(d: dict[str, Any]) -> list[str]:
    b = d["board"]
    if not (b["fields"] or b["added"] or b["removed"] or b["changed"] or b.get("archived")):
        return []
    archived = b.get("archived") or []
    head = (f"Tasks: {len(b['added'])} added, {len(b['changed'])} changed, {len(b['removed'])} removed"
            + (f", {len(archived)} archived" if archived else ""))
    rows = [f'<tr class="changed"><td>board</td><td></td><td class="change">{code(c["field"])}</td>'
            f'<td>{_val(c, "old")}</td><td>{_val(c, "new")}</td></tr>' for c in b["fields"]]

    def row(cls: str, t: dict[str, Any], change: str, before: str, after: str) -> str:
        return (f'<tr class="{cls}" data-task="{h(t.get("id"))}"><td>{h(t.get("id"))}</td>'
                f'<td>{h(t.get("title") or "")}</td><td class="change">{change}</td><td>{before}</td>'
                f"<td>{after}</td></tr>")

    for t in b["added"]:
        forced = mark(t)
        rows.append(row("added", t, "added", "", code(str(t.get("status")) + forced)))
    for t in b["changed"]:
        rows += [row("changed", t, code(c["field"]), _val(c, "old", c["field"] == "acceptance"),
                     _val(c, "new", c["field"] == "acceptance")
                     + (f' <span class="warn">({h(t["unproven"])})</span>'
                        if c["field"] == "status" and t.get("unproven") else "")) for c in t["changes"]]
    rows += [row("removed", t, "removed", code(t.get("status")), "") for t in b["removed"]]
    rows += [row("archived", t, "archived", code(t.get("status")), code(t["archived"])) for t in archived]
    out = ['<section id="tasks">', f"<h2>{h(head)}</h2>",
           *_table(["task", "title", "change", "before", "after"], rows, "tasks")]
    runs: list[str] = []  # what `wb task done` will run, every command in full
    for t in b["added"]:
        cmds = commands(t.get("acceptance"))
        if cmds:
            runs.append(f"<li>{h(t.get('id'))} (added)<ul>"
                        + "".join(f"<li>{code(c)}</li>" for c in cmds) + "</ul></li>")
    for t in b["changed"]:
        if t.get("acceptance_changed"):
            items = "".join(f'<li>{"removed" if sign == "-" else "added" if sign == "+" else "reordered"}: '
                            f"{code(cmd)}</li>" for c in t["changes"] if c["field"] == "acceptance"
                            for _style, sign, cmd in acceptance_change(c))
            runs.append(f'<li>{h(t["id"])} <span class="warn">{h(ACCEPTANCE_CHANGED)}</span><ul>{items}</ul></li>')
    if runs:
        out += ['<h3>What <code>wb task done</code> will run</h3><ul class="acceptance">', *runs, "</ul>"]
    return out + ["</section>"]


def _events(d: dict[str, Any]) -> list[str]:
    ev = d["events"]
    if not (ev["appended"] or ev["removed"]):
        return []
    out = ['<section id="events">', f"<h2>Events: {h(events_headline(ev))}</h2>"]
    if ev["by_type"]:
        out += _table(["type", "count"], [f"<tr><td>{code(t)}</td><td>{n}</td></tr>"
                                          for t, n in ev["by_type"].items()], "by-type")
    lines = [text for _style, text in harness_text(ev)]
    if lines:  # a session line, then its steps, tool calls and approvals one level in
        out.append('<ul class="sessions">')
        open_session = False
        for text in lines:
            if not text.startswith("    "):
                if open_session:
                    out.append("</ul></li>")
                out.append(f'<li class="session">{h(text.strip())}<ul>')
                open_session = True
            else:
                out.append(f"<li>{h(text.strip())}</li>")
        out.append("</ul></li></ul>" if open_session else "</ul>")
    person = [text for _style, text in person_text(ev)]
    if person:
        out += ['<ul class="person-only">', *(f"<li>{h(t.strip())}</li>" for t in person), "</ul>"]
    return out + ["</section>"]


def _rest(d: dict[str, Any]) -> list[str]:
    out: list[str] = []
    c = d["calls"]
    if c["added"] or c["removed"]:
        head = f"Tool calls: {c['added']} added" + (f", {c['removed']} removed" if c["removed"] else "")
        out += ['<section id="calls">', f"<h2>{h(head)}</h2>"]
        if c["added"]:
            out += [f"<ul><li>by status: {h(counts_text(c['by_status']))}</li>",
                    f"<li>by tool: {h(counts_text(c['by_tool']))}</li></ul>"]
        out.append("</section>")
    if d["config"]["fields"]:
        rows = [f'<tr><td>{code(x["field"])}</td><td>{_val(x, "old", True)}</td><td>{_val(x, "new", True)}</td>'
                "</tr>" for x in d["config"]["fields"]]
        out += ['<section id="config"><h2>Configuration</h2>', *_table(["setting", "before", "after"], rows),
                "</section>"]
    proof = proof_text(d.get("done") or [])
    if proof:
        out += ['<section id="proof"><h2>Proof of done</h2><ul>',
                *(f'<li class="{"warn" if "FORCED" in t else ""}">{h(t.strip())}</li>' for t in proof[1:]),
                "</ul></section>"]
    return out


def diff_html_body(d: dict[str, Any]) -> str:
    """The diff's sections alone (a `<main>` element, escaped as the page is), for a page of another view's
    own; it expects STYLE's classes."""
    out = ["<main>"]
    if not d["changed"]:
        out.append('<p id="unchanged">No changes to the workbench.</p>')
    else:
        out += _state(d) + _tasks(d) + _events(d) + _rest(d)
    warnings = d.get("warnings") or []
    if warnings:
        out += ['<section id="warnings"><h2>Warnings</h2><ul>', *(f"<li>{h(w)}</li>" for w in warnings),
                "</ul></section>"]
    return "\n".join([*out, "</main>"])


def render_diff_html(d: dict[str, Any]) -> str:
    """The page for `d` (review/diff.py's data, as `wb diff --format json` prints it)."""
    title = f"wb diff {side_name(d['old'])} → {side_name(d['new'])}"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
           '<meta name="viewport" content="width=device-width,initial-scale=1">',
           f"<title>{h(title)}</title>", f"<style>{STYLE}</style></head><body>",
           f"<header><h1>{h(title)}</h1></header>", diff_html_body(d), "</body></html>", ""]
    return "\n".join(out)
