"""Review and merge: `wb diff` by meaning (`diff`, its two sides in `sides`, their parsers in `parse`, the
harness story in `story`), the merge rules for board, events and state (`merge`), the merge driver git runs
(`merge_driver`) and the readable view git's textconv shows (`textconv`)."""
