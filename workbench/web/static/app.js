// wb serve: the page. Every value from the workbench goes into the DOM as text (textContent, text nodes,
// SVG text nodes): never innerHTML, never a style attribute (the CSP allows neither inline script nor style).
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const HEADINGS = { todo: "TODO", in_progress: "IN PROGRESS", blocked: "BLOCKED", done: "DONE", cancelled: "CANCELLED" };
const view = { tab: "board", session: null, task: null, events: { type: "", session: "", pages: [] }, diff: { a: "", b: "" },
               board: { q: "", status: "", label: "", priority: "", assignee: "", epic: "" }, windows: {},
               boardData: null, filtered: 0, opener: null, renders: 0, act: null, said: null,
               sort: { key: "", dir: 1 }, rows: 0, stamp: null };

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
  // only an answer that read the workbench carries its files' stamp, and only such an answer says whether the
  // workbench can be read (/api/act, about this browser's session, read the board no more than it hides a tear)
  if (typeof answer.stamp === "string") {
    banner(answer.ok ? null : answer.error);
    // the stamp of the files as the page's first read found them: the live stream starts from it
    if (view.stamp === null) view.stamp = answer.stamp;
  }
  return answer.data;
}

function put(...given) {
  // A tab's form (filters, refs) stays the node it was while the tab is shown: a live refresh replaces only
  // what is below it, so what a person is typing there, and the focus, survive it. Absent parts (null) are
  // left out: Element.after(null) would insert the text "null".
  const nodes = given.filter((n) => n !== null && n !== undefined);
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

// -- values a person reads: never a `0:` tree, never `undefined` -------------------------------------------------
function inline(value) {
  // one value on one line: a list joined by commas, an object as `key value` pairs
  if (value === null || value === undefined || value === "") return "—";
  if (Array.isArray(value)) return value.length ? value.map(inline).join(", ") : "none";
  if (typeof value === "object") return Object.entries(value).map(([k, v]) => k + " " + inline(v)).join("; ") || "—";
  return String(value);
}

function fields(obj, skip) {
  // a definition list of an object's fields; nested objects as nested lists, lists of scalars inline
  const dl = el("dl", { class: "fields" });
  for (const [k, v] of Object.entries(obj || {})) {
    if ((skip || []).includes(k) || v === null || v === undefined || v === "") continue;
    let shown;
    if (Array.isArray(v) && v.some((x) => x !== null && typeof x === "object")) shown = el("ul", {}, v.map((x) => el("li", {}, typeof x === "object" ? fields(x) : inline(x))));
    else if (v !== null && typeof v === "object" && !Array.isArray(v)) shown = fields(v);
    else shown = inline(v);
    dl.append(el("dt", {}, k.replace(/_/g, " ")), el("dd", {}, shown));
  }
  return dl;
}

function taskLink(id, text) {
  return el("a", { href: "#task=" + encodeURIComponent(id), class: "task-link", "data-task": id,
                   onclick: (e) => { e.preventDefault(); openTask(id, e.currentTarget); } }, text || id);
}

function linkIds(text) {
  // task ids in a text become links to their detail; the rest stays text
  const out = [];
  let last = 0;
  for (const m of String(text).matchAll(/\bT-\d{3,}\b/g)) {
    out.push(text.slice(last, m.index), taskLink(m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

function markdown(text) {
  // the little Markdown a decision holds: paragraphs, `- ` lists, headings, **bold**, _emphasis_, `code`,
  // task ids as links. Built as DOM nodes from text: nothing in it is ever parsed as HTML.
  const span = (line) => {
    const out = [];
    const re = /(`[^`]+`|\*\*[^*]+\*\*|_[^_]+_)/g;
    let last = 0;
    for (const m of line.matchAll(re)) {
      out.push(linkIds(line.slice(last, m.index)));
      const t = m[0];
      if (t.startsWith("`")) out.push(el("code", {}, t.slice(1, -1)));
      else if (t.startsWith("**")) out.push(el("strong", {}, linkIds(t.slice(2, -2))));
      else out.push(el("em", {}, linkIds(t.slice(1, -1))));
      last = m.index + t.length;
    }
    out.push(linkIds(line.slice(last)));
    return out;
  };
  const box = el("div", { class: "md" });
  for (const block of String(text).replace(/\r/g, "").split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((l) => l.trim() !== "");
    if (!lines.length) continue;
    if (lines.every((l) => /^\s*[-*] /.test(l))) box.append(el("ul", {}, lines.map((l) => el("li", {}, span(l.replace(/^\s*[-*] /, ""))))));
    else if (/^#{1,6} /.test(lines[0]) && lines.length === 1) box.append(el("h4", {}, span(lines[0].replace(/^#+ /, ""))));
    else box.append(el("p", {}, lines.map((l, i) => [i ? el("br") : null, span(l)])));
  }
  return box;
}

// -- acting from the page: only when a person started `wb serve --act` and opened its one-time link ---------------
// /api/act says whether this browser holds that session, and gives its CSRF token; every write is a POST with it.
async function loadAct() {
  const data = await api("/api/act");
  view.act = data && data.on ? data : null;
  document.body.dataset.acting = view.act ? "on" : "off";
  return view.act;
}

async function act(action, body, from) {
  const where = from && from.closest(".drawer") ? "task-act-status" : "act-status";
  view.said = null;
  if (from) from.disabled = true;
  let answer;
  try {
    const response = await fetch("/api/act/" + action, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": view.act ? view.act.csrf : "" },
      body: JSON.stringify(body) });
    answer = await response.json().catch(() => ({ ok: false, error: "wb serve answered " + response.status }));
  } catch (err) {
    answer = { ok: false, error: "wb serve is not answering (" + err + ")" };
  }
  if (from) from.disabled = false;
  if (answer.ok) {  // what was typed is sent: the forms are drawn afresh from the workbench
    for (const f of document.querySelectorAll("form[data-dirty]")) delete f.dataset.dirty;
    await refresh();
    if (view.task) await openTask(view.task, null, true);
  }
  // what the write answered stays under its form, however often a live refresh redraws it (statusNode)
  view.said = { where, task: view.task, ok: answer.ok, text: answer.ok ? "done: " + inline(answer.data) : "refused: " + answer.error };
  const status = document.getElementById(where);
  if (status) status.replaceWith(statusNode(where));
  return answer;
}

function statusNode(id) {
  const said = view.said && view.said.where === id && (id === "act-status" || view.said.task === view.task) ? view.said : null;
  return el("p", { id, class: "act-status" + (said ? (said.ok ? " ok" : " refused") : ""), role: "status" },
    said ? said.text : "");
}

function actForm(name, onsend, ...parts) {
  // a form that never navigates (the CSP's form-action 'none' would refuse it): its values go to `onsend`, and
  // while a person types in it a live refresh leaves it as it is (data-dirty)
  return el("form", { class: "act-form", "data-act": name,
                      oninput: (e) => { e.currentTarget.dataset.dirty = "1"; },
                      onsubmit: (e) => { e.preventDefault(); onsend(new FormData(e.currentTarget), e.submitter); } },
    parts);
}

function lines(text) {
  return String(text || "").split("\n").map((l) => l.trim()).filter(Boolean);
}

function addTaskForm() {
  return actForm("task-add", (d, b) => act("task-add", { title: d.get("title"), description: d.get("description") || null,
                                                          acceptance: lines(d.get("acceptance")) }, b),
    el("h3", {}, "Add a task"),
    el("label", { class: "field" }, el("span", {}, "Title"), el("input", { name: "title", required: "required", id: "add-title" })),
    el("label", { class: "field" }, el("span", {}, "Description"), el("textarea", { name: "description", rows: 2 })),
    el("label", { class: "field" }, el("span", {}, "Acceptance (one command a line)"), el("textarea", { name: "acceptance", rows: 2 })),
    el("button", { type: "submit", id: "add-task" }, "add task"));
}

function actingNode(items) {
  // what the person can do from here: the yield's approval, the commands waiting for trust, a new task
  const a = view.act;
  const out = [el("p", { class: "acting" }, "Acting as the person who started wb serve --act: each change is recorded via web.")];
  if (a.approval && items.some((it) => it.kind === "approval")) {
    out.push(el("div", { class: "act-approval", "data-yield": a.approval.yield_id },
      "Session \u201c" + (a.approval.goal || "") + "\u201d asks to run ", el("code", {}, a.approval.tool || "?"),
      " (" + (a.approval.mode || "mutating") + "). ",
      el("button", { type: "button", id: "act-approve", onclick: (e) => act("approve", { yield_id: a.approval.yield_id }, e.currentTarget) }, "approve"),
      " ",
      el("button", { type: "button", id: "act-deny", onclick: (e) => act("deny", { yield_id: a.approval.yield_id }, e.currentTarget) }, "deny")));
  }
  if ((a.trust || []).length) {
    out.push(el("div", { class: "act-trust" },
      el("p", {}, a.trust.length + " command(s) not trusted on this clone; each runs as you, exactly as shown:"),
      el("ul", { class: "commands" }, a.trust.map((c) => el("li", {}, el("strong", {}, c.label), " (" + c.source + ") ", el("code", {}, c.how)))),
      el("button", { type: "button", id: "act-trust", onclick: (e) => act("trust", { digests: a.trust.map((c) => c.digest) }, e.currentTarget) },
        "trust these " + a.trust.length)));
  }
  out.push(addTaskForm(), statusNode("act-status"));
  return el("div", { id: "acting" }, out);
}

// -- the person's inbox: what waits for a person, each with the exact command ------------------------------------
async function inboxNode() {
  const data = await api("/api/inbox");
  const items = data ? data.items : [];
  await loadAct();
  const acting = view.act ? actingNode(items) : null;
  if (!items.length) return el("section", { id: "inbox", class: "inbox empty", "aria-label": "waiting for a person" },
    el("p", { class: "muted" }, "Nothing waits for a person."), acting);
  return el("section", { id: "inbox", class: "inbox", "aria-labelledby": "inbox-h" },
    el("h2", { id: "inbox-h" }, "Waiting for you (" + items.length + ")"),
    el("ul", {}, items.map((it) => el("li", { "data-kind": it.kind },
      el("span", { class: "kind" }, it.kind.replace(/_/g, " ")), " ", el("span", {}, linkIds(it.what)),
      it.command ? el("code", { class: "cmd" }, it.command) : null))), acting);
}

// -- the board ------------------------------------------------------------------------------------------------
const WINDOW = 50;  // cards a column shows before "show more": a 5,000-task board paints and filters quickly
const PRIORITY = ["P0 critical", "P1 high", "P2 normal", "P3 low", "P4 lowest"];

function cardNode(card) {
  const prio = typeof card.priority === "number" ? card.priority : null;
  return el("article", { class: "card" + (card.ready ? " ready" : "") + (card.children ? " epic" : "") + (view.task === card.id ? " open" : ""),
                         "data-id": card.id, "data-status": card.status, tabindex: 0, role: "button",
                         onclick: (e) => openTask(card.id, e.currentTarget),
                         onkeydown: (e) => cardKey(e, card) },
    el("div", { class: "card-top" },
      el("span", { class: "id" }, card.id),
      prio !== null ? el("span", { class: "badge p" + prio, title: PRIORITY[prio] || "" }, "P" + prio) : null,
      card.ready ? el("span", { class: "tag ready" }, "ready") : null,
      card.children ? el("span", { class: "tag epic" }, "epic " + card.children.done + "/" + card.children.total) : null),
    el("div", { class: "title" }, card.title),
    card.children ? el("div", { class: "progress", role: "img",
      "aria-label": card.children.done + " of " + card.children.total + " children done" },
      el("div", { class: "bar", "data-pct": String(Math.round(10 * card.children.done / Math.max(1, card.children.total)) * 10) })) : null,
    (card.labels || []).length ? el("div", { class: "chips" }, card.labels.map((l) => el("span", { class: "chip" }, l))) : null,
    card.assignee || card.parent ? el("div", { class: "meta" },
      card.assignee ? el("span", { class: "assignee" }, "@" + card.assignee) : null,
      card.parent ? el("span", { class: "parent" }, "in " + card.parent) : null) : null,
    card.depends_on && card.depends_on.length ? el("div", { class: "marks" }, "depends on " + card.depends_on.join(", ")) : null,
    card.waiting_on && card.waiting_on.length ? el("div", { class: "marks waits" }, "waits " + card.waiting_on.join(", ")) : null,
    card.marks.length ? el("div", { class: "marks" }, card.marks.join("; ")) : null);
}

function cardKey(e, card) {
  // Enter or Space opens a card; the arrows move between the cards of a column and across the columns
  const here = e.currentTarget;
  if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openTask(card.id, here); return; }
  const column = here.closest(".column");
  const cards = (col) => col ? [...col.querySelectorAll(".card")] : [];
  let to = null;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    const list = cards(column), at = list.indexOf(here);
    to = list[at + (e.key === "ArrowDown" ? 1 : -1)];
  } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
    const columns = [...document.querySelectorAll("#board .column")].filter((c) => c.querySelector(".card"));
    const at = cards(column).indexOf(here), next = columns[columns.indexOf(column) + (e.key === "ArrowRight" ? 1 : -1)];
    const list = cards(next);
    to = list[Math.min(at, list.length - 1)];
  }
  if (to) { e.preventDefault(); to.focus(); }
}

function facets(cards) {
  const labels = new Set(), assignees = new Set(), epics = [];
  for (const c of cards) {
    for (const l of c.labels || []) labels.add(l);
    if (c.assignee) assignees.add(c.assignee);
    if (c.children) epics.push(c);
  }
  return { labels: [...labels].sort(), assignees: [...assignees].sort(), epics };
}

function keep(card, f) {
  if (f.status && card.status !== f.status) return false;
  if (f.label && !(card.labels || []).includes(f.label)) return false;
  if (f.priority !== "" && f.priority !== undefined && String(card.priority ?? 2) !== f.priority) return false;
  if (f.assignee && card.assignee !== f.assignee && card.owner !== f.assignee) return false;
  if (f.epic && card.parent !== f.epic && card.id !== f.epic) return false;
  if (f.q) {
    const hay = (card.id + " " + card.title + " " + (card.labels || []).join(" ") + " " + (card.assignee || "")).toLowerCase();
    if (!f.q.toLowerCase().split(/\s+/).every((w) => hay.includes(w))) return false;
  }
  return true;
}

function select(name, label, options, current) {
  return el("label", { class: "field" }, el("span", {}, label),
    el("select", { name }, el("option", { value: "" }, "any"),
      options.map(([value, text]) => el("option", { value, selected: current === value ? "selected" : null }, text))));
}

function boardForm(f) {
  const read = (form) => {
    const d = new FormData(form);
    view.board = { q: d.get("q") || "", status: d.get("status") || "", label: d.get("label") || "", priority: d.get("priority") || "",
                   assignee: d.get("assignee") || "", epic: d.get("epic") || "" };
    view.windows = {};
    view.rows = 0;
    redraw();
  };
  let timer = null;
  return el("form", { class: "filters", "data-form": "board", role: "search",
                      onsubmit: (e) => { e.preventDefault(); read(e.target); },
                      onchange: (e) => read(e.currentTarget),
                      oninput: (e) => { const form = e.currentTarget; clearTimeout(timer); timer = setTimeout(() => read(form), 80); } },
    el("label", { class: "field search" }, el("span", {}, "Search"),
      el("input", { type: "search", name: "q", placeholder: "id, title, label, assignee", value: view.board.q, id: "search" })),
    select("status", "Status", Object.keys(HEADINGS).map((s) => [s, HEADINGS[s]]), view.board.status),
    select("label", "Label", f.labels.map((l) => [l, l]), view.board.label),
    select("priority", "Priority", PRIORITY.map((p, i) => [String(i), p]), view.board.priority),
    select("assignee", "Assignee", f.assignees.map((a) => [a, a]), view.board.assignee),
    select("epic", "Epic", f.epics.map((e) => [e.id, e.id + " " + e.title.slice(0, 40)]), view.board.epic));
}

function drawColumns() {
  // the columns from the cards already loaded: a filter or a search needs no round trip
  const data = view.boardData;
  const box = document.getElementById("board");
  if (!data || !box) return;
  const f = view.board;
  let total = 0;
  const cols = [];
  for (const col of data.columns) {
    if (f.status && col.status !== f.status) continue;
    const cards = col.tasks.filter((c) => keep(c, f));
    total += cards.length;
    const shown = view.windows[col.status] || WINDOW;
    const frag = document.createDocumentFragment();
    for (const card of cards.slice(0, shown)) frag.append(cardNode(card));
    const more = cards.length - shown;
    cols.push(el("section", { class: "column", "data-status": col.status, "aria-labelledby": "h-" + col.status },
      el("h2", { id: "h-" + col.status }, HEADINGS[col.status] + " (" + cards.length + ")"), frag,
      more > 0 ? el("button", { type: "button", class: "more", "data-more": col.status,
                                onclick: () => { view.windows[col.status] = shown + 4 * WINDOW; drawColumns(); } },
        "show " + Math.min(more, 4 * WINDOW) + " more of " + more) : null));
  }
  box.replaceChildren(...cols);
  const count = document.getElementById("total");
  if (count) count.textContent = total + " of " + data.total + " task(s)" + (data.total ? " · click a card, or Enter on it, for its detail" : "");
  document.body.dataset.filtered = String(++view.filtered);
}

// -- the table of all tasks: the board's cards (and its search and filters) as rows, sorted by a column ------------
const ROWS = 100;  // rows the table shows before "show more": sorting 5,000 rows is quick, drawing them is not
const TABLE = [["id", "id"], ["title", "title"], ["status", "status"], ["priority", "priority"], ["assignee", "assignee"],
               ["labels", "labels"], ["parent", "parent"], ["updated_at", "updated"]];
const STATUS_ORDER = Object.keys(HEADINGS);
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

function idNumber(id) {
  const m = /^T-(\d+)$/i.exec(String(id));
  return m ? Number(m[1]) : null;
}

function byId(a, b) {
  const x = idNumber(a), y = idNumber(b);
  return x !== null && y !== null ? x - y : collator.compare(String(a), String(b));
}

const SORTS = {
  // each column's order of two present values; a value absent (no assignee, no labels...) sorts last both ways
  id: [(c) => c.id, byId],
  title: [(c) => c.title, collator.compare],
  status: [(c) => c.status, (a, b) => STATUS_ORDER.indexOf(a) - STATUS_ORDER.indexOf(b)],
  priority: [(c) => (typeof c.priority === "number" ? c.priority : 2), (a, b) => a - b],  // wb's default: 2
  assignee: [(c) => c.assignee || null, collator.compare],
  labels: [(c) => ((c.labels || []).length ? c.labels.join(" ") : null), collator.compare],
  parent: [(c) => c.parent || null, byId],
  updated_at: [(c) => c.updated_at || null, (a, b) => (a < b ? -1 : a > b ? 1 : 0)],
};

function sorted(rows, key, dir) {
  // a stable sort: rows equal in the column keep the board's order, whichever way it goes
  const [value, compare] = SORTS[key];
  const keyed = rows.map((c) => [value(c), c]);
  keyed.sort(([a], [b]) => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : dir * compare(a, b)));
  return keyed.map(([, c]) => c);
}

function sortBy(key) {
  view.sort = view.sort.key === key ? { key, dir: -view.sort.dir } : { key, dir: 1 };
  drawTable();
}

function rowNode(c) {
  const prio = typeof c.priority === "number" ? c.priority : null;
  const none = () => el("span", { class: "muted" }, "—");
  return el("tr", { "data-id": c.id, class: view.task === c.id ? "open" : null,
                    onclick: (e) => { if (!e.target.closest("a, button")) openTask(c.id, e.currentTarget.querySelector("a.task-link")); } },
    el("td", { class: "id" }, taskLink(c.id)),
    el("td", { class: "title" }, c.title),
    el("td", { class: "status" }, (HEADINGS[c.status] || c.status).toLowerCase()),
    el("td", {}, prio !== null ? el("span", { class: "badge p" + prio, title: PRIORITY[prio] || "" }, "P" + prio)
                               : el("span", { class: "muted", title: "not set: wb takes 2" }, "P2")),
    el("td", {}, c.assignee ? "@" + c.assignee : none()),
    el("td", {}, (c.labels || []).length ? c.labels.map((l) => el("span", { class: "chip" }, l)) : none()),
    el("td", {}, c.parent ? taskLink(c.parent) : none()),
    el("td", { class: "num" }, c.updated_at ? el("time", { datetime: c.updated_at }, String(c.updated_at).replace("T", " ").replace(/(:\d\d)(\.\d+)?Z$/, "$1Z")) : none()));
}

function drawTable() {
  // the rows from the cards already loaded, filtered as the board is, sorted, a window of them drawn
  const data = view.boardData;
  const box = document.getElementById("table-box");
  if (!data || !box) return;
  const f = view.board, s = view.sort;
  let rows = data.columns.filter((col) => !f.status || col.status === f.status).flatMap((col) => col.tasks.filter((c) => keep(c, f)));
  if (s.key && SORTS[s.key]) rows = sorted(rows, s.key, s.dir);
  const shown = rows.slice(0, view.rows || ROWS);
  const order = s.dir > 0 ? "ascending" : "descending";
  const head = el("tr", {}, TABLE.map(([key, label]) => el("th", { scope: "col", "data-key": key, "aria-sort": s.key === key ? order : null },
    el("button", { type: "button", class: "sort", "data-sort": key, onclick: () => sortBy(key) },
      label, el("span", { class: "arrow", "aria-hidden": "true" }, s.key === key ? (s.dir > 0 ? " ▲" : " ▼") : " ↕")))));
  const body = el("tbody", {});
  const frag = document.createDocumentFragment();
  for (const c of shown) frag.append(rowNode(c));
  body.append(frag);
  const caption = s.key ? "sorted by " + TABLE.find(([k]) => k === s.key)[1] + ", " + order : "in the board's order";
  const more = rows.length - shown.length;
  const focused = box.contains(document.activeElement) ? document.activeElement : null;
  box.replaceChildren(...[  // replaceChildren(null) would insert the text "null"
    el("div", { class: "scroll table-scroll", tabindex: 0, role: "region", "aria-label": "all tasks (scrolls)" },
      el("table", { id: "tasks-table", class: "tasks" },
        el("caption", {}, "All tasks, " + caption),
        el("thead", {}, head), body)),
    more > 0 ? el("button", { type: "button", class: "more", "data-more": "table",
                              onclick: () => { view.rows = shown.length + 4 * ROWS; drawTable(); } },
      "show " + Math.min(more, 4 * ROWS) + " more of " + more) : null].filter(Boolean));
  const back = refind(focused);
  if (back) back.focus();
  const count = document.getElementById("total");
  if (count) count.textContent = rows.length + " of " + data.total + " task(s)" + (data.total ? " · a heading sorts by its column (again: the other way); a row, or Enter on its id, opens its detail" : "");
  document.body.dataset.filtered = String(++view.filtered);
}

function redraw() {
  if (view.tab === "table") drawTable(); else drawColumns();
}

async function showBoard() {
  // the board (or the table of all tasks: the same cards, filters and inbox) paints first; the inbox (a
  // `wb status` read) fills in above it right after
  const data = await api("/api/board");
  const kept = document.getElementById("inbox");
  const inbox = kept && view.tab === document.body.dataset.tab ? kept : el("section", { id: "inbox", class: "inbox empty", "aria-label": "waiting for a person" });
  if (!data) put(inbox, el("p", { class: "muted" }, "no board yet"));
  else {
    view.boardData = data;
    const all = data.columns.flatMap((c) => c.tasks);
    put(boardForm(facets(all)), inbox, el("p", { class: "muted", id: "total" }),
        view.tab === "table" ? el("div", { id: "table-box" }) : el("div", { class: "columns", id: "board" }));
    redraw();
    if (view.task) openTask(view.task, null, true);
  }
  const fresh = await inboxNode();
  const now = document.getElementById("inbox");
  if (now && (view.tab === "board" || view.tab === "table")) {
    // a task the person is typing survives a live refresh (what the last write answered is view.said)
    const typing = now.querySelector("form[data-dirty]"), there = fresh.querySelector('form[data-act="task-add"]');
    if (typing && there) there.replaceWith(typing);
    now.replaceWith(fresh);
  }
}

// -- a task's detail: a drawer beside the board, where the person is; Escape or the close button shuts it ----------
async function openTask(id, from, quiet) {
  if (from) view.opener = from;
  const drawer = document.getElementById("drawer");
  // a live refresh leaves the drawer alone while the person types in one of its forms
  if (quiet && view.task === id && !drawer.hidden && drawer.querySelector("form[data-dirty]")) return;
  view.task = id;
  const data = await api("/api/task", { id });
  const body = el("div", { class: "drawer-body" });
  if (!data || !data.task) body.append(el("h2", { id: "drawer-title" }, "no task " + id));
  else body.append(...taskDetail(data));
  const close = el("button", { type: "button", class: "close", id: "drawer-close", "aria-label": "close the task's detail",
                               onclick: closeTask }, "×");
  drawer.replaceChildren(close, body);
  drawer.hidden = false;
  document.body.classList.add("drawer-open");
  markOpen(id);
  if (!quiet) close.focus();
}

function closeTask() {
  const drawer = document.getElementById("drawer");
  drawer.hidden = true;
  drawer.replaceChildren();
  document.body.classList.remove("drawer-open");
  view.task = null;
  markOpen(null);
  const back = refind(view.opener);
  if (back) back.focus();
  view.opener = null;
}

function markOpen(id) {
  for (const c of document.querySelectorAll("#board .card.open, #tasks-table tr.open")) c.classList.remove("open");
  if (id === null) return;
  const is = '[data-id="' + CSS.escape(id) + '"]';
  for (const n of document.querySelectorAll("#board .card" + is + ", #tasks-table tr" + is)) n.classList.add("open");
}

function refind(node) {
  // the node that had the focus, or, when a live refresh has drawn it afresh since, its new self
  if (!node || node === document.body) return null;
  if (document.contains(node)) return node;
  const d = node.dataset || {};
  if (d.id) return document.querySelector('#board .card[data-id="' + CSS.escape(d.id) + '"]');
  if (d.task) {
    const is = '[data-task="' + CSS.escape(d.task) + '"]';
    return document.querySelector("#tasks-table td.id a" + is) || document.querySelector("#main a.task-link" + is);
  }
  if (d.sort) return document.querySelector('#tasks-table button[data-sort="' + CSS.escape(d.sort) + '"]');
  return node.id ? document.getElementById(node.id) : null;
}

function taskDetail(data) {
  const t = data.task;
  const statusOf = data.statuses || {};
  const out = [el("h2", { id: "drawer-title" }, t.id + " " + t.title)];
  const head = { status: t.status, kind: t.kind, owner: t.owner, priority: t.priority, assignee: t.assignee,
                 labels: t.labels, created: t.created_at, updated: t.updated_at, reviews: t.reviews,
                 blocked_reason: t.blocked_reason };
  out.push(fields(head));
  if (t.parent) out.push(el("p", {}, "Part of ", taskLink(t.parent, t.parent + (statusOf[t.parent] ? " (" + statusOf[t.parent] + ")" : ""))));
  if (t.description) out.push(el("h3", {}, "Description"), markdown(t.description));
  out.push(el("h3", {}, "Acceptance"), (t.acceptance || []).length
    ? el("ul", { class: "commands" }, t.acceptance.map((c) => el("li", {}, el("code", {}, c))))
    : el("p", { class: "muted" }, "no acceptance commands"));
  if (t.proof) out.push(el("h3", {}, "Proof"), fields(t.proof));
  if (t.scope) out.push(el("h3", {}, "Scope"), fields(t.scope));
  out.push(el("h3", {}, "Depends on"), (t.depends_on || []).length
    ? el("ul", { id: "task-deps" }, t.depends_on.map((d) => el("li", {}, taskLink(d), statusOf[d] ? " (" + statusOf[d] + ")" : "")))
    : el("p", { class: "muted" }, "no dependencies"));
  const children = data.children || [];
  if (children.length) out.push(el("h3", {}, "Children"), el("ul", {}, children.map((c) => el("li", {}, taskLink(c.id), " " + c.title + " (" + c.status + ")"))));
  if ((t.comments || []).length) out.push(el("h3", {}, "Comments"), el("ul", {}, t.comments.map((c) =>
    el("li", {}, typeof c === "object" ? [el("span", { class: "muted" }, inline(c.ts || c.at) + " " + inline(c.by || c.actor) + ": "), c.text || inline(c)] : String(c)))));
  const known = new Set(["id", "title", "status", "kind", "owner", "priority", "assignee", "labels", "created_at", "updated_at",
    "reviews", "blocked_reason", "parent", "description", "acceptance", "proof", "scope", "depends_on", "comments"]);
  const rest = Object.fromEntries(Object.entries(t).filter(([k]) => !known.has(k)));
  if (Object.keys(rest).length) out.push(el("h3", {}, "More"), fields(rest));
  if (view.act) out.push(...taskActs(t));
  out.push(el("h3", {}, "History: " + data.history.length + " event(s)"),
    el("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "history (scrolls)" }, el("table", { id: "task-history" }, el("tbody", {}, data.history.map((e) => el("tr", {},
      el("td", { class: "num" }, "#" + e.seq), el("td", { class: "num" }, e.ts), el("td", {}, e.who),
      el("td", {}, e.type), el("td", {}, e.summary)))))));
  return out;
}

function taskActs(t) {
  // the drawer's forms when acting: a comment, and an edit of the fields the page changes (wb task set)
  const edit = actForm("task-set", (d, b) => {
    const changes = {}, want = { title: d.get("title"), description: d.get("description"), owner: d.get("owner") };
    for (const [k, v] of Object.entries(want)) if (v !== (t[k] || "")) changes[k] = v;
    const acceptance = lines(d.get("acceptance"));
    if (acceptance.join("\n") !== (t.acceptance || []).join("\n")) changes.acceptance = acceptance;
    const prio = Number(d.get("priority"));
    if (prio !== (typeof t.priority === "number" ? t.priority : 2)) changes.priority = prio;
    if (!Object.keys(changes).length) {
      const status = document.getElementById("task-act-status");
      view.said = { where: "task-act-status", task: t.id, ok: false, text: "nothing changed" };
      if (status) status.replaceWith(statusNode("task-act-status"));
      return;
    }
    act("task-set", { id: t.id, changes }, b);
  },
    el("h3", {}, "Edit"),
    el("label", { class: "field" }, el("span", {}, "Title"), el("input", { name: "title", value: t.title, required: "required", id: "edit-title" })),
    el("label", { class: "field" }, el("span", {}, "Description"), el("textarea", { name: "description", rows: 3 }, t.description || "")),
    el("label", { class: "field" }, el("span", {}, "Acceptance (one command a line)"),
      el("textarea", { name: "acceptance", rows: 3 }, (t.acceptance || []).join("\n"))),
    el("label", { class: "field" }, el("span", {}, "Owner"), el("input", { name: "owner", value: t.owner || "", required: "required" })),
    el("label", { class: "field" }, el("span", {}, "Priority"), el("select", { name: "priority" },
      PRIORITY.map((p, i) => el("option", { value: String(i), selected: (t.priority ?? 2) === i ? "selected" : null }, p)))),
    el("button", { type: "submit", id: "edit-task" }, "save"));
  const comment = actForm("task-comment", (d, b) => act("task-comment", { id: t.id, text: d.get("text") }, b),
    el("h3", {}, "Comment"),
    el("label", { class: "field" }, el("span", {}, "Comment"), el("textarea", { name: "text", rows: 2, required: "required", id: "comment-text" })),
    el("button", { type: "submit", id: "comment-task" }, "comment"));
  return [el("div", { class: "task-acts" }, comment, edit, statusNode("task-act-status"))];
}

document.addEventListener("keydown", (e) => {
  if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && (e.key === "k" || e.key === "K")) {
    e.preventDefault();
    openPalette();
    return;
  }
  if (document.getElementById("palette").open) return;  // the palette's own keys (paletteKey)
  const typing = /INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName) || document.activeElement.isContentEditable;
  if (e.key === "Escape" && !document.getElementById("drawer").hidden) { e.preventDefault(); closeTask(); }
  else if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
    // on the board and the table `/` goes to their search box (it filters what is shown); elsewhere, to the palette
    const s = document.getElementById("search");
    e.preventDefault();
    if (s && (view.tab === "board" || view.tab === "table")) s.focus(); else openPalette();
  }
});

// -- the quick-search palette: Ctrl+K or ⌘K anywhere (`/` off the board) finds a task by id, title or label ---------
// It searches the cards the page holds (every task on the board: /api/board is read whole, filters apply in the
// page), read afresh when the tab shown is not the board's. Enter opens the task's drawer; Escape gives the focus back.
const FOUND = 50;  // options listed, the best first
const palette = { cards: null, found: [], active: -1, returnTo: null, hay: new WeakMap() };

function hayOf(card) {
  let h = palette.hay.get(card);
  if (h === undefined) {
    h = (card.id + " " + card.title + " " + (card.labels || []).join(" ")).toLowerCase();
    palette.hay.set(card, h);
  }
  return h;
}

function findTasks(cards, text) {
  // 0: the id itself (`12`, `t-12` and `T-012` name T-012); 1: an id that starts so; 2: a title that starts so;
  // 3: a title with the words in this order; 4: so in the labels; 5: each word somewhere in the id, title and
  // labels. Ties keep the board's order.
  const q = text.trim().toLowerCase().replace(/\s+/g, " ");
  if (!q) return { found: cards.slice(0, FOUND), matched: cards.length };
  const words = q.split(" "), m = /^(?:t-?)?(\d+)$/.exec(q), num = m ? Number(m[1]) : null;
  const scored = [];
  cards.forEach((c, i) => {
    const id = String(c.id).toLowerCase(), h = hayOf(c);
    let rank = -1;
    if (id === q || (num !== null && idNumber(c.id) === num)) rank = 0;
    else if (words.every((w) => h.includes(w))) {
      const title = String(c.title).toLowerCase();
      rank = id.startsWith(q) ? 1 : title.startsWith(q) ? 2 : title.includes(q) ? 3 : h.includes(q) ? 4 : 5;
    }
    if (rank >= 0) scored.push([rank, i, c]);
  });
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return { found: scored.slice(0, FOUND).map(([, , c]) => c), matched: scored.length };
}

async function paletteCards() {
  let data = view.tab === "board" || view.tab === "table" ? view.boardData : null;
  if (!data) {  // read quietly: the banner speaks for the tab shown
    try {
      const answer = await (await fetch("/api/board", { headers: { Accept: "application/json" } })).json();
      data = answer.data;
    } catch (err) {
      data = view.boardData;
    }
  }
  return data ? data.columns.flatMap((c) => c.tasks) : [];
}

async function openPalette() {
  const dialog = document.getElementById("palette"), input = document.getElementById("palette-input");
  if (dialog.open) { input.select(); return; }
  palette.returnTo = document.activeElement;
  input.value = "";
  palette.cards = null;
  drawPalette();
  dialog.showModal();
  input.focus();
  palette.cards = await paletteCards();
  if (dialog.open) drawPalette();
}

function closePalette() {
  const dialog = document.getElementById("palette");
  if (dialog.open) dialog.close();
  document.getElementById("palette-list").replaceChildren();
  palette.found = [];
  const back = refind(palette.returnTo);
  palette.returnTo = null;
  if (back) back.focus();
  return back;
}

function drawPalette() {
  const input = document.getElementById("palette-input"), list = document.getElementById("palette-list");
  const count = document.getElementById("palette-count");
  if (!palette.cards) {
    list.replaceChildren();
    count.textContent = "reading the tasks…";
    palette.found = [];
    return setActive(-1);
  }
  const { found, matched } = findTasks(palette.cards, input.value);
  palette.found = found;
  list.replaceChildren(...found.map((c, i) => el("li", { role: "option", id: "palette-option-" + i, "aria-selected": "false",
                                                         "data-id": c.id, onclick: () => choosePalette(i) },
    el("span", { class: "id" }, c.id), el("span", { class: "title" }, c.title),
    el("span", { class: "muted" }, (HEADINGS[c.status] || c.status).toLowerCase()),
    (c.labels || []).length ? el("span", { class: "chips" }, c.labels.map((l) => el("span", { class: "chip" }, l))) : null)));
  count.textContent = !matched ? "no task matches" : matched > found.length ? "the first " + found.length + " of " + matched + " tasks"
    : matched + " task(s)";
  setActive(found.length ? 0 : -1);
}

function setActive(i) {
  const input = document.getElementById("palette-input");
  const options = document.getElementById("palette-list").children;
  palette.active = i;
  for (let k = 0; k < options.length; k++) options[k].setAttribute("aria-selected", k === i ? "true" : "false");
  input.setAttribute("aria-expanded", options.length ? "true" : "false");
  if (i >= 0 && options[i]) {
    input.setAttribute("aria-activedescendant", options[i].id);
    options[i].scrollIntoView({ block: "nearest" });
  } else input.removeAttribute("aria-activedescendant");
}

function choosePalette(i) {
  const card = palette.found[i];
  if (!card) return;
  const back = closePalette();
  view.opener = back;  // closing the drawer gives the focus back to where it was before the palette
  openTask(card.id, null);
}

function paletteKey(e) {
  const n = palette.found.length;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    if (n) setActive((palette.active + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
  } else if (e.key === "PageDown" || e.key === "PageUp") {
    e.preventDefault();
    if (n) setActive(e.key === "PageDown" ? Math.min(n - 1, palette.active + 10) : Math.max(0, palette.active - 10));
  } else if (e.key === "Enter") {
    e.preventDefault();
    choosePalette(palette.active);
  } else if (e.key === "Escape") {
    e.preventDefault();
    e.stopPropagation();  // the drawer behind stays open: Escape closes one thing
    closePalette();
  }
}

function paletteSetup() {
  const dialog = document.getElementById("palette"), input = document.getElementById("palette-input");
  input.addEventListener("input", drawPalette);
  dialog.addEventListener("keydown", paletteKey);  // from the box, or after a click left the focus on the dialog
  dialog.addEventListener("cancel", (e) => { e.preventDefault(); closePalette(); });  // Escape off the input
  dialog.addEventListener("click", (e) => { if (e.target === dialog) closePalette(); });  // a click on the shade
  document.getElementById("find").addEventListener("click", openPalette);
  if (/Mac|iPhone|iPad/.test(navigator.platform || "")) document.getElementById("find-keys").textContent = "⌘K";
}

// -- the dependency graph: layers left to right, edges from a dependency to the task waiting on it ---------------
async function showGraph() {
  const data = await api("/api/graph");
  if (!data || !data.nodes.length) return put(el("p", { class: "muted" }, "no tasks"));
  const W = 230, H = 34, GX = 60, GY = 14, CHARS = 30, LEFT = 40;  // LEFT: room for an archived dependency's stub
  const pos = {};
  let maxLayer = 0, maxRow = 0;
  for (const n of data.nodes) {
    pos[n.id] = { x: LEFT + n.layer * (W + GX), y: 10 + n.row * (H + GY) };
    maxLayer = Math.max(maxLayer, n.layer); maxRow = Math.max(maxRow, n.row);
  }
  const root = svg("svg", { class: "graph", id: "graph", role: "img", "aria-label": "dependency graph of " + data.nodes.length + " tasks",
                            width: LEFT + 10 + (maxLayer + 1) * (W + GX), height: 20 + (maxRow + 1) * (H + GY) });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
  defs.append(marker); root.append(defs);
  for (const e of data.edges) {
    const a = pos[e.from], b = pos[e.to];
    if (!b) continue;
    const from = a ? { x: a.x + W, y: a.y + H / 2 } : { x: b.x - GX / 2, y: b.y + H / 2 };
    const to = { x: b.x, y: b.y + H / 2 };
    const mid = (from.x + to.x) / 2;
    const path = svg("path", { class: "edge" + (e.missing ? " missing" : "") + (e.archived ? " archived" : ""), "marker-end": "url(#arrow)",
      d: `M${from.x},${from.y} C${mid},${from.y} ${mid},${to.y} ${to.x},${to.y}` });
    path.append(svg("title", {}, e.from + (e.archived ? " (done, archived)" : e.missing ? " (missing)" : "") + " → " + e.to));
    root.append(path);
  }
  for (const n of data.nodes) {
    const p = pos[n.id];
    const g = svg("g", { class: "node " + n.status + (n.ready ? " ready" : ""), "data-id": n.id, transform: `translate(${p.x},${p.y})` });
    g.addEventListener("click", () => openTask(n.id, null));
    g.append(svg("rect", { width: W, height: H, rx: 5 }));
    const label = n.id + " " + n.title;
    g.append(svg("text", { x: 8, y: 21 }, label.length > CHARS ? label.slice(0, CHARS - 1) + "…" : label));
    g.append(svg("title", {}, label + " [" + n.status + (n.ready ? ", ready" : "") + "]"));
    root.append(g);
  }
  const archived = data.edges.filter((e) => e.archived).length, missing = data.edges.filter((e) => e.missing).length;
  put(el("p", { class: "muted" }, data.nodes.length + " task(s), " + data.edges.length + " dependenc(ies)"
        + (archived ? ", " + archived + " on archived done tasks" : "") + (missing ? ", " + missing + " missing" : "")),
      el("div", { class: "scroll graph-box", tabindex: 0, role: "region", "aria-label": "dependency graph (scrolls)" }, root));
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
    el("article", { class: "entry" }, el("div", { class: "muted" }, [e.ts || e.heading, e.actor].filter(Boolean).join(" · ")), markdown(e.text)))
    : el("p", { class: "muted" }, "the decision log is empty")));
}

function table(rows, columns, id) {
  return el("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "table (scrolls)" }, el("table", { id },
    el("thead", {}, el("tr", {}, columns.map(([, h]) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, columns.map(([k]) => el("td", {}, k === "id" ? taskLink(r[k]) : inline(r[k]))))))));
}

async function showHandoff() {
  const data = await api("/api/handoff");
  const h = data && data.handoff;
  if (!h) return put(el("p", { class: "muted" }, "no handoff written yet (wb handoff)"));
  const out = [el("h2", {}, "Handoff"), el("p", { class: "summary" }, h.summary || "")];
  const d = h.describes || {};
  out.push(el("p", { class: "muted" }, "as of event " + inline(d.last_event) + (d.branch ? " on " + d.branch : "") + (d.worktree ? " (" + d.worktree + ")" : "")));
  if (h.next_action) out.push(el("h3", {}, "Next action"), el("p", { id: "handoff-next" }, linkIds(h.next_action.text || inline(h.next_action)),
    h.next_action.command ? el("code", { class: "cmd" }, h.next_action.command) : null));
  out.push(el("h3", {}, "Risks"), (h.risks || []).length
    ? el("ul", { id: "handoff-risks" }, h.risks.map((r) => el("li", {}, el("strong", {}, (r.kind || "").replace(/_/g, " ")), ": ", linkIds(r.detail || ""))))
    : el("p", { class: "muted" }, "none"));
  const tasks = h.tasks || {};
  out.push(el("h3", {}, "Open tasks"), el("p", { class: "muted" }, inline(tasks.by_status)),
    (tasks.open || []).length ? table(tasks.open, [["id", "task"], ["status", "status"], ["title", "title"]], "handoff-tasks") : el("p", { class: "muted" }, "none open"));
  const files = h.changed_files || {};
  out.push(el("h3", {}, "Changed files"), el("p", {}, "committed: " + inline(files.committed) + " · uncommitted: " + inline(files.uncommitted)));
  if ((h.commits || []).length) out.push(el("h3", {}, "Commits"), el("ul", {}, h.commits.map((c) => el("li", {}, typeof c === "object" ? inline(c) : c))));
  const cmds = h.commands || {};
  if ((cmds.last || []).length) out.push(el("h3", {}, "Commands (" + inline(cmds.total) + ")"), table(cmds.last, [["seq", "#"], ["source", "from"], ["command", "command"], ["status", "status"]]));
  const fails = h.failures || {};
  out.push(el("h3", {}, "Failures (" + inline(fails.total ?? 0) + ")"), (fails.items || []).length ? el("ul", {}, fails.items.map((f) => el("li", {}, inline(f)))) : el("p", { class: "muted" }, "none"));
  if ((h.proof || []).length) out.push(el("h3", {}, "Proof"), el("ul", {}, h.proof.map((p) => el("li", {}, inline(p)))));
  if ((h.person_only || []).length) out.push(el("h3", {}, "What a person did"), table(h.person_only, [["seq", "#"], ["what", "what"], ["who", "who"], ["proof", "proof"]]));
  if (h.session) out.push(el("h3", {}, "Session"), fields(h.session));
  put(el("div", { id: "handoff", class: "report" }, out));
}

async function showDiff() {
  const form = el("form", { class: "filters", "data-form": "diff", onsubmit: (e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      view.diff = { a: f.get("a"), b: f.get("b") };
      refresh();
    } },
    el("label", { class: "field" }, el("span", {}, "From"), el("input", { name: "a", placeholder: "HEAD", value: view.diff.a })),
    el("label", { class: "field" }, el("span", {}, "To"), el("input", { name: "b", placeholder: "work tree", value: view.diff.b })),
    el("button", { type: "submit" }, "diff"));
  const data = await api("/api/diff", view.diff);
  if (!data) return put(form, el("p", { class: "muted" }, "no diff"));
  const side = (x) => x.label + (x.commit ? " (" + x.commit.slice(0, 8) + ")" : "");
  const change = (c) => {
    const has = (k) => Object.prototype.hasOwnProperty.call(c, k);
    if (!has("old")) return el("span", { class: "added" }, c.field + " added: " + inline(c.new));
    if (!has("new")) return el("span", { class: "removed" }, c.field + " removed (was " + inline(c.old) + ")");
    return el("span", { class: "changed" }, c.field + ": ", el("del", {}, inline(c.old)), " → ", el("ins", {}, inline(c.new)));
  };
  const board = data.board || {}, state = data.state || {}, events = data.events || {};
  const heading = el("h2", {}, side(data.old) + " → " + side(data.new) + (data.changed ? "" : ": no change"));
  const lines = [
    (board.added || []).map((t) => el("li", { class: "added" }, "added " + t.id + " " + t.title + " [" + t.status + "]")),
    (board.removed || []).map((t) => el("li", { class: "removed" }, "removed " + t.id + " " + t.title)),
    (board.archived || []).map((t) => el("li", { class: "archived" }, "archived " + t.id + " " + t.title)),
    (board.changed || []).map((t) => el("li", { class: "changed" }, "changed " + t.id + " " + (t.title || "") + ": ",
      t.changes.map((c, i) => [i ? "; " : null, change(c)]), t.acceptance_changed ? " (acceptance changed)" : null)),
    (board.fields || []).map((c) => el("li", { class: "changed" }, "board ", change(c))),
    (state.fields || []).map((c) => el("li", { class: "changed" }, "state ", change(c))),
    ((state.decision_log || {}).added || []).map((e) => el("li", { class: "added" }, "decision " + (e.ts || "") + " " + (e.actor || "") + ": ", markdown(e.text))),
    ((state.decision_log || {}).removed || []).map((e) => el("li", { class: "removed" }, "decision removed " + (e.ts || "") + ": " + e.text)),
    events.appended ? el("li", {}, events.appended + " event(s) appended: " +
      Object.entries(events.by_type || {}).map(([k, v]) => k + " ×" + v).join(", ")) : null,
    (data.warnings || []).map((w) => el("li", { class: "removed" }, "warning: " + w)),
  ];
  put(form, el("div", { id: "diff" }, heading, el("ul", { id: "diff-summary" }, lines),
    el("details", {}, el("summary", {}, "the whole diff (wb diff --format json)"), el("pre", { class: "json" }, JSON.stringify(data, null, 2)))));
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
    el("label", { class: "field" }, el("span", {}, "Type"), el("input", { name: "type", placeholder: "type or family (task)", value: ev.type })),
    el("label", { class: "field" }, el("span", {}, "Session"), el("input", { name: "session", placeholder: "session id", value: ev.session })),
    el("button", { type: "submit" }, "filter"));
  const rows = data ? data.events : [];
  const rowsTable = el("table", { id: "events" },
    el("thead", {}, el("tr", {}, ["seq", "time", "who", "type", "what"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((e) => el("tr", { "data-seq": e.seq },
      el("td", { class: "num" }, e.seq), el("td", { class: "num" }, e.ts), el("td", {}, e.who),
      el("td", {}, e.type), el("td", {}, e.summary)))));
  const nav = el("div", { class: "filters" },
    ev.pages.length ? el("button", { id: "newer", onclick: () => { ev.pages.pop(); refresh(); } }, "newer") : null,
    data && data.older ? el("button", { id: "older", onclick: () => { ev.pages.push(rows[rows.length - 1].seq); refresh(); } },
      "older (" + data.older + ")") : null);
  put(form, el("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "events (scrolls)" }, rowsTable), nav);
}

const TABS = { board: showBoard, table: showBoard, graph: showGraph, sessions: showSessions, decisions: showDecisions,
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
  // opened after the first read, from that read's stamp: a write between the two is still a `change`
  const source = new EventSource("/api/live" + (view.stamp ? "?since=" + encodeURIComponent(view.stamp) : ""));
  source.addEventListener("hello", () => { status.textContent = "live"; });
  source.addEventListener("change", () => { status.textContent = "live · updated " + new Date().toLocaleTimeString(); refresh(); });
  source.onerror = () => { status.textContent = "reconnecting…"; };
}

window.addEventListener("hashchange", refresh);
document.addEventListener("DOMContentLoaded", () => { paletteSetup(); refresh().then(live); });
