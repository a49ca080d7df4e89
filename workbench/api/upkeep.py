"""Upkeep and review: doctor, diff, migrate, the handoff."""

from __future__ import annotations

import json
from collections.abc import Callable

from workbench.api.core import BenchCore
from workbench.api.revisions import diff
from workbench.api.rules import read_bytes_or_none, shortened
from workbench.model import digest

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:  # the harness, review, doctor and migrate load only when their verb is called
    from typing import Any

    from workbench.migrate.apply import Report as MigrateReport
    from workbench.ops.doctor import Report as DoctorReport


class UpkeepVerbs(BenchCore):
    """Upkeep and review: doctor, diff, migrate, the handoff."""

    # -- repair, review, upgrade: `wb doctor`, `wb diff`, `wb migrate` -------------------------------------
    def doctor(self, fix: bool = False, progress: Callable[[int, int], None] | None = None, *,
               full: bool = False) -> DoctorReport:
        """`wb doctor [--fix]`: a torn log tail, snapshots behind the log, a broken hash chain, schema problems,
        uncommitted workbench changes, leftover temp files, a lock held now. With `fix`, repair what can be
        (never the hash chain), after waiting for a running wb to finish. Returns the report: `.healthy`
        (`wb doctor` exits 0 when True, else 1) and `.findings` (`.code`, `.message`, `.fixable`, `.fixed`;
        `.as_dict()` is an entry of `wb doctor --json`)."""
        from workbench.ops.doctor import examine

        if fix:
            with self.wb.lock():
                pass  # wait for a running wb to finish first
        if getattr(getattr(self.wb, "storage", None), "kind", None) == "sqlite":
            from workbench.ops.doctor_sqlite import examine_sqlite  # one database: nothing of files or git

            return examine_sqlite(self.wb, fix, full=full)
        return examine(self.wb, fix=fix, progress=progress, full=full)

    def diff(self, rev_a: str | None = None, rev_b: str | None = None, *,
             all_fields: bool = False) -> dict[str, Any]:
        """`wb diff [REV [REV]]`: what changed in the workbench between two revisions, by meaning — the dict
        `wb diff --format json` prints (docs/diff.md). See `diff()`."""
        return diff(self.root, rev_a, rev_b, all_fields=all_fields)

    def migrate(self, dry_run: bool = False, *, progress: Callable[[int, int], None] | None = None,
                now: str | None = None) -> MigrateReport:
        """`wb migrate [--dry-run]`: upgrade the files an older wb wrote, record `migration.apply` and commit.
        Idempotent; finishes an interrupted migration; `dry_run` computes the same plan and writes nothing.
        Returns the report (`.changed`, `.files`, `.commit`, `.warnings`; `.to_json()` is what
        `wb migrate --json` prints). A file newer than this wb is refused (`SchemaRefused`, exit 5)."""
        from workbench.migrate.apply import migrate

        if getattr(getattr(self.wb, "storage", None), "kind", None) == "sqlite":
            from workbench.migrate.sqlite import migrate_sqlite  # the database, in one transaction

            return migrate_sqlite(self.wb, dry_run=dry_run, now=now)
        return migrate(self.root, dry_run=dry_run, now=now, progress=progress)

    # -- the handoff packet and what changed since a yield (issue 16) --------------------------------------
    def handoff(self, actor: str = "wb") -> dict[str, Any]:
        """`wb handoff`: write .workbench/handoff.json and handoff.md from what the workbench holds (see
        ops/handoff.py) as one transaction: a `handoff.write` event, both files, one commit. Idempotent: when
        the packet is the one already written, nothing is written or committed (`self.last.seqs` is empty).
        Returns the packet. Also what the agent hooks' Stop/SessionEnd and the end of `wb run` call."""
        from workbench.ops.handoff import build, recent, unchanged
        from workbench.ops.status import waiting_writes

        with self.wb.transaction(actor=actor) as tx:
            # what waits in the git directory while git is mid-operation (otherwise this write lands it)
            waiting = waiting_writes(self.wb, tx.loaded) if tx.deferred else None
            data, raw, md = build(self.wb, tx.docs, recent(self.wb.log, tx.events), waiting)
            if not unchanged(self.wb, raw, md):
                tx.put_file("handoff.json", raw)
                tx.put_file("handoff.md", md)
                tx.summary = f"wb: handoff: {shortened(data['next_action']['text'])}"
                tx.emit("handoff.write", {"sha256": digest.sha256(raw).hexdigest(),
                                          "next_action": data["next_action"], "risks": len(data["risks"]),
                                          "describes": data["describes"]["last_event"]})
        self._done(tx)
        return data

    def read_handoff(self) -> dict[str, Any] | None:
        """The latest packet written (handoff.json), or None."""
        raw = read_bytes_or_none(self.wb.paths.wb / "handoff.json")
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def since_yield(self) -> dict[str, Any] | None:
        """What changed since the live session yielded (new commits, files changed, another branch or
        worktree): the dict `wb resume` shows before it continues and records in the resume event; None when
        no session waits or its yield recorded no position."""
        from workbench.git.changes import since

        session = self.wb.load(detect_human=False, need_body=False).docs.state.get("session")
        pending = session.get("pending") if isinstance(session, dict) else None
        if not isinstance(pending, dict):
            return None
        return since(self.root, pending.get("where"))

