"""`wb serve`: a local, read-only web page of the workbench — the board, the dependency graph, each harness
session as a timeline, the decision log, the handoff, `wb diff` between two refs and the event log — served
by the standard library's ThreadingHTTPServer on 127.0.0.1 (`server`), from JSON the library's own read paths
build (`views`: ops/board, ops/eventlist, review/diff, model/session's fold), with its static page shipped in
the package (`static/`: HTML, JS and CSS, no build step). docs/views.md says what it shows and how it is kept
safe."""
