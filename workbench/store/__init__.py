"""The durable workbench: the event log (`eventlog`), atomic file writes (`atomic`), the lock (`lock`), the
caches (`caches`), config.yaml (`config`), hand edits (`humanedit`), the loaded workbench (`workbench`), the
one write path (`transaction`) through which every change to `.workbench/` is validated, appended, written and
committed, and the one commit policy with its validation gate (`commit`). Imports the model and git."""
