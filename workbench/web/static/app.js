// wb serve: the page. Every value from the workbench goes into the DOM as text (textContent, text nodes,
// SVG text nodes): never innerHTML, never a style attribute (the CSP allows neither inline script nor style).
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const HEADINGS = { todo: "TODO", in_progress: "IN PROGRESS", blocked: "BLOCKED", done: "DONE", cancelled: "CANCELLED" };
const view = { tab: "board", session: null, task: null, events: { type: "", session: "", pages: [] }, diff: { a: "", b: "" },
               board: { label: "", owner: "", status: "" }, renders: 0 };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function banner(error) {
  const b = document.getElementById("banner");
  if (error) {
    b.textContent = "The workbench cannot be read right now; showing the last good data. " + error;
    b.hidden = false;
  } else {
    b.hidden = true;
    b.textContent = "";
  }
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== null && v !== undefined) query.set(k, v);
  const url = path + (query.toString() ? "?" + query.toString() : "");
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const answer = await response.json();
  banner(answer.ok ? null : answer.error);
  return answer.data;
}

function put(...nodes) {
  // A tab's form (filters, refs) stays the node it was while the tab is shown: a live refresh replaces only
  // what is below it, so what a person is typing there, and the focus, survive it.
  const main = document.getElementById("main");
  const first = nodes[0], kept = main.firstElementChild;
  if (first instanceof HTMLFormElement && kept instanceof HTMLFormElement && kept.dataset.form === first.dataset.form
      && first.dataset.form) {
    while (kept.nextSibling) kept.nextSibling.remove();
    kept.after(...nodes.slice(1));
  } else {
    main.replaceChildren(...nodes);
  }
  view.renders += 1;
  document.body.dataset.tab = view.tab;
  // when the frame holding this render was painted, in ms since the page was asked for (bench/web.py reads it)
  const renders = String(view.renders);
  requestAnimationFrame(() => setTimeout(() => {
    document.body.dataset.paintedMs = String(Math.round(performance.now()));
    document.body.dataset.renders = renders;
  }, 0));
}

// -- the board ------------------------------------------------------------------------------------------------
function cardNode(card) {
  return el("div", { class: "card" + (card.ready ? " ready" : "") + (view.task === card.id ? " open" : ""),
                     "data-id": card.id, "data-status": card.status, tabindex: 0,
                     onclick: () => { view.task = view.task === card.id ? null : card.id; refresh(); } },
    el("span", { class: "id" }, card.id),
    card.ready ? el("span", { class: "tag ready" }, "ready") : null,
    el("span", { class: "title" }, card.title),
    card.depends_on && card.depends_on.length ? el("div", { class: "marks" }, "depends on " + card.depends_on.join(", ")) : null,
    card.marks.length ? el("div", { class: "marks" }, card.marks.join("; ")) : null);
}

async function showBoard() {
  const data = await api("/api/board", view.board);
  const filters = el("form", { class: "filters", "data-form": "board", onsubmit: (e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      view.board = { label: f.get("label"), owner: f.get("owner"), status: f.get("status") };
      refresh();
    } },
    el("input", { name: "label", placeholder: "label", value: view.board.label }),
    el("input", { name: "owner", placeholder: "owner", value: view.board.owner }),
    el("select", { name: "status" }, el("option", { value: "" }, "any status"),
      Object.keys(HEADINGS).map((s) => el("option", { value: s, selected: view.board.status === s ? "selected" : null }, HEADINGS[s]))),
    el("button", { type: "submit" }, "filter"));
  if (!data) return put(filters, el("p", { class: "muted" }, "no board yet"));
  const columns = el("div", { class: "columns", id: "board" });
  for (const col of data.columns) {
    const frag = document.createDocumentFragment();
    for (const card of col.tasks) frag.append(cardNode(card));
    columns.append(el("section", { class: "column", "data-status": col.status },
      el("h2", {}, HEADINGS[col.status] + " (" + col.tasks.length + ")"), frag));
  }
  const detail = view.task ? await taskDetail(view.task) : null;
  put(filters, el("p", { class: "muted", id: "total" }, data.total + " task(s)" + (data.total ? " · click a card for its detail and history" : "")),
      detail, columns);
}

async function taskDetail(id) {
  const data = await api("/api/task", { id });
  if (!data) return el("div", { class: "entry", id: "task-detail" }, "no task " + id);
  return el("div", { class: "entry", id: "task-detail" },
    el("h2", {}, data.task.id + " " + data.task.title),
    el("div", { class: "tree" }, tree(data.task)),
    el("h3", {}, "history: " + data.history.length + " event(s)"),
    el("table", { id: "task-history" }, el("tbody", {}, data.history.map((e) => el("tr", {},
      el("td", { class: "num" }, "#" + e.seq), el("td", { class: "num" }, e.ts), el("td", {}, e.who),
      el("td", {}, e.type), el("td", {}, e.summary))))));
}

// -- the dependency graph: layers left to right, edges from a dependency to the task waiting on it ---------------
async function showGraph() {
  const data = await api("/api/graph");
  if (!data || !data.nodes.length) return put(el("p", { class: "muted" }, "no tasks"));
  const W = 230, H = 34, GX = 60, GY = 14, CHARS = 30;
  const pos = {};
  let maxLayer = 0, maxRow = 0;
  for (const n of data.nodes) {
    pos[n.id] = { x: 10 + n.layer * (W + GX), y: 10 + n.row * (H + GY) };
    maxLayer = Math.max(maxLayer, n.layer); maxRow = Math.max(maxRow, n.row);
  }
  const root = svg("svg", { class: "graph", id: "graph", width: 20 + (maxLayer + 1) * (W + GX), height: 20 + (maxRow + 1) * (H + GY) });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#888" }));
  defs.append(marker); root.append(defs);
  for (const e of data.edges) {
    const a = pos[e.from], b = pos[e.to];
    if (!b) continue;
    const from = a ? { x: a.x + W, y: a.y + H / 2 } : { x: b.x - GX / 2, y: b.y + H / 2 };
    const to = { x: b.x, y: b.y + H / 2 };
    const mid = (from.x + to.x) / 2;
    const path = svg("path", { class: "edge" + (e.missing ? " missing" : ""), "marker-end": "url(#arrow)",
      d: `M${from.x},${from.y} C${mid},${from.y} ${mid},${to.y} ${to.x},${to.y}` });
    path.append(svg("title", {}, e.from + " → " + e.to));
    root.append(path);
  }
  for (const n of data.nodes) {
    const p = pos[n.id];
    const g = svg("g", { class: "node " + n.status + (n.ready ? " ready" : ""), "data-id": n.id, transform: `translate(${p.x},${p.y})` });
    g.append(svg("rect", { width: W, height: H, rx: 5 }));
    const label = n.id + " " + n.title;
    g.append(svg("text", { x: 8, y: 21 }, label.length > CHARS ? label.slice(0, CHARS - 1) + "…" : label));
    g.append(svg("title", {}, label + " [" + n.status + (n.ready ? ", ready" : "") + "]"));
    root.append(g);
  }
  put(el("p", { class: "muted" }, data.nodes.length + " task(s), " + data.edges.length + " dependenc(ies)"), root);
}

// -- harness sessions as timelines -----------------------------------------------------------------------------
function budgetText(budget) {
  const used = budget.used || {}, limits = budget.limits || {};
  return ["turns", "tool_calls", "seconds"].map((k) =>
    k + " " + (used[k] ?? 0) + (limits[k] !== undefined && limits[k] !== null ? " / " + limits[k] : "")).join(" · ");
}

async function showSessions() {
  const data = await api("/api/sessions");
  const sessions = data ? data.sessions : [];
  if (!sessions.length) return put(el("p", { class: "muted" }, "no harness sessions yet (wb run GOAL)"));
  if (!view.session || !sessions.some((s) => s.id === view.session)) view.session = sessions[0].id;
  const list = el("div", { class: "list", id: "sessions" }, sessions.map((s) =>
    el("button", { class: s.id === view.session ? "active" : "", "data-session": s.id,
                   onclick: () => { view.session = s.id; refresh(); } },
      el("div", {}, el("strong", {}, s.goal)),
      el("div", { class: "muted" }, s.id + " · " + (s.state || "") + (s.started_at ? " · " + s.started_at : "")))));
  const t = await api("/api/session", { id: view.session });
  const body = el("div", { id: "timeline-view" });
  if (t && t.found) {
    body.append(el("h2", {}, t.goal),
      el("div", { class: "muted" }, t.id + " · started " + t.started_at + " · " + (t.ended ? t.ended : "state " + t.state) + (t.reason ? " · " + t.reason : "")),
      el("div", { class: "budget" }, "budget used: " + budgetText(t.budget)),
      el("ol", {}, t.plan.map((s) => el("li", {}, "[" + s.status + "] " + s.description + (s.tool ? " (" + s.tool + ")" : "") + (s.error ? " — " + s.error : "")))),
      el("ol", { class: "timeline", id: "timeline" }, t.entries.map((e) =>
        el("li", { class: e.kind, "data-type": e.type },
          el("span", { class: "meta" }, "#" + e.seq + " " + e.ts + " " + e.who),
          el("span", {}, e.type + ": " + e.text),
          e.step ? el("span", { class: "meta" }, " — " + e.step) : null,
          e.kind === "yield" && e.yield ? el("span", { class: "meta" }, " yield " + (e.yield.kind || "") + " " + (e.yield.id || "")) : null,
          e.kind === "yield" ? (e.answered_by ? el("span", { class: "answered" }, "answered by " + e.answered_by)
                                             : el("span", { class: "unanswered" }, "waiting for an answer")) : null))));
  }
  put(el("div", { class: "split" }, list, body));
}

// -- the decision log, the handoff, a diff -----------------------------------------------------------------------
async function showDecisions() {
  const data = await api("/api/decisions");
  const entries = data ? data.entries : [];
  put(el("div", { id: "decisions" }, entries.length ? entries.map((e) =>
    el("div", { class: "entry" }, el("div", { class: "muted" }, (e.ts || e.heading || "") + " · " + (e.actor || "")), e.text))
    : el("p", { class: "muted" }, "the decision log is empty")));
}

function tree(value) {
  if (value === null || typeof value !== "object") return document.createTextNode(String(value));
  const ul = el("ul");
  const items = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  for (const [k, v] of items) {
    ul.append(el("li", {}, el("span", { class: "k" }, k + ": "), tree(v)));
  }
  if (!items.length) ul.append(el("li", { class: "muted" }, Array.isArray(value) ? "(none)" : "(empty)"));
  return ul;
}

async function showHandoff() {
  const data = await api("/api/handoff");
  const packet = data && data.handoff;
  put(packet ? el("div", { class: "tree", id: "handoff" }, tree(packet))
             : el("p", { class: "muted" }, "no handoff written yet (wb handoff)"));
}

async function showDiff() {
  const form = el("form", { class: "filters", "data-form": "diff", onsubmit: (e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      view.diff = { a: f.get("a"), b: f.get("b") };
      refresh();
    } },
    el("input", { name: "a", placeholder: "from ref (HEAD)", value: view.diff.a }),
    el("input", { name: "b", placeholder: "to ref (work tree)", value: view.diff.b }),
    el("button", { type: "submit" }, "diff"));
  const data = await api("/api/diff", view.diff);
  if (!data) return put(form, el("p", { class: "muted" }, "no diff"));
  const side = (x) => x.label + (x.commit ? " (" + x.commit.slice(0, 8) + ")" : "");
  const change = (c) => c.field + ": " + JSON.stringify(c.old) + " → " + JSON.stringify(c.new);
  const board = data.board || {}, state = data.state || {}, events = data.events || {};
  const heading = el("h2", {}, side(data.old) + " → " + side(data.new) + (data.changed ? "" : ": no change"));
  const lines = [
    (board.added || []).map((t) => el("li", { class: "added" }, "added " + t.id + " " + t.title + " [" + t.status + "]")),
    (board.removed || []).map((t) => el("li", { class: "removed" }, "removed " + t.id + " " + t.title)),
    (board.archived || []).map((t) => el("li", {}, "archived " + t.id + " " + t.title)),
    (board.changed || []).map((t) => el("li", {}, "changed " + t.id + " " + (t.title || "") + ": " +
      t.changes.map(change).join("; ") + (t.acceptance_changed ? " (acceptance changed)" : ""))),
    (state.fields || []).map((c) => el("li", {}, "state " + change(c))),
    ((state.decision_log || {}).added || []).map((e) => el("li", {}, "decision " + (e.ts || "") + " " + (e.actor || "") + ": " + e.text)),
    events.appended ? el("li", {}, events.appended + " event(s) appended: " +
      Object.entries(events.by_type || {}).map(([k, v]) => k + " ×" + v).join(", ")) : null,
    (data.warnings || []).map((w) => el("li", { class: "removed" }, "warning: " + w)),
  ];
  put(form, el("div", { id: "diff" }, heading, el("ul", { id: "diff-summary" }, lines),
    el("details", {}, el("summary", {}, "the whole diff (wb diff --format json)"), el("div", { class: "tree" }, tree(data)))));
}

// -- the event log: filters and pages (newest first; "older" pages back) -------------------------------------------
async function showEvents() {
  const ev = view.events;
  const before = ev.pages.length ? ev.pages[ev.pages.length - 1] : "";
  const data = await api("/api/events", { type: ev.type, session: ev.session, before });
  const form = el("form", { class: "filters", "data-form": "events", onsubmit: (e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      view.events = { type: f.get("type"), session: f.get("session"), pages: [] };
      refresh();
    } },
    el("input", { name: "type", placeholder: "type or family (task)", value: ev.type }),
    el("input", { name: "session", placeholder: "session", value: ev.session }),
    el("button", { type: "submit" }, "filter"));
  const rows = data ? data.events : [];
  const table = el("table", { id: "events" },
    el("thead", {}, el("tr", {}, ["seq", "time", "who", "type", "what"].map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((e) => el("tr", { "data-seq": e.seq },
      el("td", { class: "num" }, e.seq), el("td", { class: "num" }, e.ts), el("td", {}, e.who),
      el("td", {}, e.type), el("td", {}, e.summary)))));
  const nav = el("div", { class: "filters" },
    ev.pages.length ? el("button", { id: "newer", onclick: () => { ev.pages.pop(); refresh(); } }, "newer") : null,
    data && data.older ? el("button", { id: "older", onclick: () => { ev.pages.push(rows[rows.length - 1].seq); refresh(); } },
      "older (" + data.older + ")") : null);
  put(form, table, nav);
}

const TABS = { board: showBoard, graph: showGraph, sessions: showSessions, decisions: showDecisions,
               handoff: showHandoff, diff: showDiff, events: showEvents };

let busy = false, again = false;
async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const tab = (location.hash || "#board").slice(1);
    view.tab = TABS[tab] ? tab : "board";
    for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.tab === view.tab);
    await TABS[view.tab]();
  } catch (err) {
    banner("wb serve is not answering (" + err + ")");
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}

function live() {
  const status = document.getElementById("live");
  const source = new EventSource("/api/live");
  source.addEventListener("hello", () => { status.textContent = "live"; });
  source.addEventListener("change", () => { status.textContent = "live · updated " + new Date().toLocaleTimeString(); refresh(); });
  source.onerror = () => { status.textContent = "reconnecting…"; };
}

window.addEventListener("hashchange", refresh);
document.addEventListener("DOMContentLoaded", () => { refresh(); live(); });
