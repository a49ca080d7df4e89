"""The durable workbench: the event log (`eventlog`), atomic file writes (`atomic`), the lock (`lock`), the
caches (`caches`), config.yaml (`config`), hand edits (`humanedit`), the loaded workbench (`workbench`) and the
one write path (`transaction`) through which every change to `.workbench/` is validated, appended, written and
committed. Imports the model and git."""
