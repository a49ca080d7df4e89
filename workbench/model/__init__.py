"""The model: what the workbench files are, independent of any disk or git.

Layout constants (`layout`), the JSON Schemas and their compiled validators (`schemas`), the formats of
state.md (`frontmatter`, `statefile`, `yamlio`), board.json (`boardfile`) and the event types (`eventtypes`),
task ids (`ids`), redaction (`redaction`) and the reducer that folds one event into the documents (`reducer`,
with the harness session fold in `session`). Pure functions over bytes and dicts; imports nothing above it."""
