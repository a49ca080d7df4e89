"""The write path's stages, one module each (store/pipeline.py declares their order, docs/architecture.md
draws it): each is a function `run(tx)` of the transaction (store/transaction.py, the context every stage
shares, typed as store/stagecontext.StageContext) and imports nothing from another stage. A stage that ends
the write early returns STOP."""

from __future__ import annotations

STOP = "stop"  # returned by a stage after which the rest of its span does not run
