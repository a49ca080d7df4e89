// Parse a ```mermaid block from stdin with Mermaid's own parser (the `mermaid` npm package, under jsdom) and
// print the states and relations it read, as JSON: tests/review/test_session_mermaid.py runs it when
// WB_MERMAID_MODULES names a node_modules holding mermaid and jsdom (`npm install --prefix DIR mermaid jsdom`).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.WB_MERMAID_MODULES;
const require = createRequire(path.join(modules, "noop.js"));
const { JSDOM } = require("jsdom");
const dom = new JSDOM("<!DOCTYPE html><body></body>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import(pathToFileURL(require.resolve("mermaid")).href);
mermaid.initialize({ startOnLoad: false });
const text = fs.readFileSync(0, "utf8").replace(/^```mermaid\n/, "").replace(/```\s*$/, "");
try {
  const d = await mermaid.mermaidAPI.getDiagramFromText(text);
  console.log(JSON.stringify({ ok: true, type: d.type, states: [...d.db.getStates().keys()],
                               relations: d.db.getRelations().map(r => [r.id1, r.id2]) }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message || e).slice(0, 500) }));
}
