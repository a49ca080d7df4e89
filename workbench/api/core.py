"""The opened workbench every family of verbs stands on: the write helper and the last write."""

from __future__ import annotations

from pathlib import Path

from workbench.model import provenance
from workbench.store import opening
from workbench.store.transaction import LastWrite, Transaction
from workbench.store.workbench import Workbench

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Self


class BenchCore:
    """One workbench, opened: what every family of verbs stands on."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.last = LastWrite()
        self.joined: str | None = None  # `wb init` in a fresh clone: the state branch it took up, or None

    @classmethod
    def open(cls, path: str | Path | None = None) -> Self:
        """The workbench of the git work tree containing `path` (default: the current directory); NotFound
        when there is no git repository or no `.workbench/` (run `init` first)."""
        return cls(opening.discover(Path(path) if path is not None else None))

    @property
    def root(self) -> Path:
        return self.wb.root

    def close(self) -> None:
        """End the helper git process a Bench keeps between commits (it also ends when this process does), and
        fill git's textconv cache when opening this Bench registered wb's drivers (a fresh clone's first use):
        what the command line does at its end (review/textconv_notes.py)."""
        self.wb.git.close()
        import sys

        notes = sys.modules.get("workbench.git.notes")  # imported only by a registration
        if notes is not None and notes.wanted():
            from workbench.review.textconv_notes import fill_wanted

            fill_wanted()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the write helper -----------------------------------------------------------------------
    def _tx(self, actor: str = "agent") -> Transaction:
        return self.wb.transaction(actor=self._actor(actor))

    @staticmethod
    def _actor(actor: str) -> str:
        """`actor`, once it may be claimed: `human` only for a person at a terminal (model/provenance.py) — a
        program's claim to be one must be confirmed on /dev/tty (ops/person.require_person), or is refused."""
        if actor == "human" and provenance.current().actor != "human":
            from workbench.ops.person import command_line, require_person

            require_person("a write as human", command_line(drop=("--actor", "human")))
        return actor

    def _done(self, tx: Transaction) -> None:
        out = tx.outcome
        warnings = list(out.warnings) if out else []
        if out and out.skipped:
            warnings.insert(0, out.skipped)
        summary = (tx.summary or "").removeprefix("wb: ")
        # the hand edits a write records are its events, committed on their own before it or not (issue 31)
        seqs = [e["seq"] for e in (*tx.recorded_first, *tx.events)]
        self.last = LastWrite(seqs, summary, out.sha if out else None, warnings)

