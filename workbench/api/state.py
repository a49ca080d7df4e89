"""The state verbs: notes, `wb set` of the state, verify."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from workbench.api.core import BenchCore
from workbench.api.rules import KEPT_STATE_KEYS, SETTABLE_STATE_KEYS, shortened
from workbench.errors import NotFound, Refused, UsageError
from workbench.model import reducer

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class StateVerbs(BenchCore):
    """The state verbs: notes, `wb set` of the state, verify."""

    # -- state and notes ------------------------------------------------------------------------
    def note(self, text: str, actor: str = "agent", *, about: Sequence[str] | None = None) -> None:
        """Append a note to the decision log; `about` (issue 22): the work-tree paths it is about, remembered with
        HEAD's commit, so status, prime and the handoff say once a later commit changes one of them."""
        if not text.strip():
            raise UsageError("a note needs text")
        with self._tx(actor) as tx:
            payload: dict[str, Any] = {"text": text.strip()}
            if about:
                payload["about"] = self._about(about)
            noted = tx.emit("note.add", payload)["payload"]["text"]
            tx.summary = f"wb: note {shortened(noted)}"  # redacted before it is cut short
        self._done(tx)

    def _about(self, paths: Sequence[str], items: list[str] | None = None) -> dict[str, Any]:
        from workbench.git import changes

        if not all(isinstance(p, str) and p.strip() for p in paths):
            raise UsageError("--about needs paths in the work tree, e.g. --about src/parser.py")
        from workbench.ops.memory import paths_about

        about: dict[str, Any] = {"paths": paths_about(self.wb.root, self.wb.root, list(paths)),
                                 "commit": changes.code_head(self.wb.root)}
        if items is not None:
            about["items"] = items
        return about

    def set_state(self, changes: dict[str, Any], actor: str = "agent", *,
                  add: Mapping[str, Sequence[str]] | None = None,
                  about: Sequence[str] | None = None) -> dict[str, Any]:
        """Set state fields such as next_action; unknown keys are refused by the schema, and the fields wb keeps
        itself (counters, the live session, last_event…) are refused here. `add` appends items to list fields
        (`wb set assumptions+=TEXT`; an item already there is not repeated); `about` (issue 22): the paths the
        assumptions this call adds are about (see `note`)."""
        kept = [k for k in [*changes, *(add or {})] if k in KEPT_STATE_KEYS]
        if kept:
            raise UsageError(f"{', '.join(kept)} is kept by wb and cannot be set; settable: "
                             f"{', '.join(SETTABLE_STATE_KEYS)}")
        with self._tx(actor) as tx:
            changes = dict(changes)
            for key, items in (add or {}).items():
                current = changes.get(key, tx.docs.state.get(key))
                if not isinstance(current, list):
                    raise UsageError(f"{key}+=…: {key} is not a list (list fields: touched_files, assumptions, "
                                     "blockers)")
                changes[key] = [*current, *(i for i in items if i not in current)]
            active = changes.get("active_task_id")  # a malformed id is the schema's to refuse
            if isinstance(active, str) and re.fullmatch(r"T-\d{3,}", active) and \
                    reducer.find_task(tx.docs.board, active) is None:
                raise Refused(f"state.md: active_task_id: no task {active} on the board (see `wb task list`)")
            real = {k: v for k, v in changes.items() if tx.docs.state.get(k, object()) != v}
            payload: dict[str, Any] = {"changes": real}
            if about:
                before = tx.docs.state.get("assumptions") or []
                added = [a for a in real.get("assumptions") or [] if a not in before]
                if not added:
                    raise UsageError("--about names the paths an assumption this write adds is about: "
                                     "wb set assumptions+='TEXT' --about PATH")
                payload["about"] = self._about(about, added)
            if not real:
                return dict(tx.docs.state)
            tx.summary = f"wb: set {', '.join(sorted(real))}"
            tx.emit("state.set", payload)
        self._done(tx)
        return dict(tx.docs.state)

    def verify(self, item_ids: Sequence[str], actor: str = "agent") -> list[dict[str, Any]]:
        """`wb verify M-…` (issue 22): each memory item holds again as of HEAD; the event records who said so.
        Returns the items as confirmed."""
        from workbench.git import changes

        if not item_ids:
            raise UsageError("name the memory items to confirm, e.g. wb verify M-12 (wb status lists the stale ones)")
        with self._tx(actor) as tx:
            known = {m["id"]: m for m in tx.docs.state.get("memory") or []}
            missing = [i for i in item_ids if i not in known]
            if missing:
                listed = ", ".join(list(known)[:10]) or "none yet (wb note --about PATH records one)"
                raise NotFound(f"no memory item {', '.join(missing)} (items: {listed})")
            head = changes.code_head(self.wb.root)
            for item_id in dict.fromkeys(item_ids):
                tx.emit("memory.verify", {"id": item_id, "commit": head})
            tx.summary = f"wb: verify {', '.join(dict.fromkeys(item_ids))}"
        self._done(tx)
        return [m for m in tx.docs.state.get("memory") or [] if m["id"] in item_ids]

