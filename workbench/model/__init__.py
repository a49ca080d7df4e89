"""The model: what the workbench files are, independent of any disk or git.

Layout constants (`layout`), the JSON Schemas and their compiled validators (`schemas`), the formats of
state.md (`frontmatter`, `statefile`, `yamlio`), board.json (`boardfile`), config.yaml (`configfile`) and the
JSON Lines logs (`jsonl`), the event types (`eventtypes`), timestamps and ids, task ids included (`ids`), the
one redaction (`redaction`) and the reducer that folds one event into the documents, or a log from empty
(`reducer`, with the harness session fold in `session`; the documents themselves in `docs`). One reader per
format: every layer above reads these files' bytes through them. Pure functions over bytes and dicts; imports
nothing above it."""
