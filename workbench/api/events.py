"""Recording events from outside the loop (the hooks' and MCP's way in)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.api.core import BenchCore
from workbench.api.rules import EVENT_TYPE, shortened, small_json
from workbench.errors import Refused, UsageError, WorkbenchError
from workbench.model import reducer
from workbench.model.redaction import redact, secret_values
from workbench.store.transaction import LastWrite

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class EventVerbs(BenchCore):
    """Recording events from outside the loop (the hooks' and MCP's way in)."""

    # -- other agents' events: `wb hook` ------------------------------------------------------------------
    def record_event(self, type: str, payload: dict[str, Any], actor: str = "agent", *, commit: bool = True,
                     summary: str | None = None) -> dict[str, Any]:
        """Record one event of a type wb does not fold (e.g. `agent.tool_call`, as `wb hook claude-code` does)
        as one transaction: redact, clip the payload to size (`model/clip.py`), validate, append, and commit
        (`commit=False` leaves the commit to the next write). Returns the logged event; `Refused` for a type wb
        folds into state.md or the harness session, `UsageError` for a malformed type or payload. Many events
        at once: `record_events`, one transaction for all of them."""
        clipped = self._recordable(type, payload, actor)
        with self.wb.transaction(actor=self._actor(actor), commit=commit) as tx:
            tx.summary = summary or f"wb: {type}"
            event = tx.emit(type, clipped)
        self._done(tx)
        return event

    def record_events(self, events: Sequence[Mapping[str, Any]], actor: str = "agent", *, commit: bool = True,
                      summary: str | None = None) -> list[dict[str, Any]]:
        """Record many events (`[{"type": "agent.tool_call", "payload": {...}}, ...]`) in ONE transaction and
        one commit: each checked as `record_event` checks it (redacted, clipped, validated), all or nothing —
        one bad event refuses them all (its index named: `events[3]: …`) and nothing is written. The bulk path
        for API users: 50,000 events cost one commit, not 50,000. Returns the logged events (none given: none
        written, no commit)."""
        checked: list[tuple[str, dict[str, Any]]] = []
        for i, item in enumerate(events):
            if not isinstance(item, Mapping):
                raise UsageError(f"events[{i}]: an event is a mapping {{\"type\": …, \"payload\": {{…}}}}")
            extra = sorted(str(k) for k in set(item) - {"type", "payload"})
            if extra:
                raise UsageError(f"events[{i}]: unknown key {', '.join(extra)} (an event to record has "
                                 "`type` and `payload`; wb sets seq, id, ts, actor and prev)")
            try:
                payload = self._recordable(item.get("type"), item.get("payload"), actor)
                checked.append((str(item["type"]), payload))
            except WorkbenchError as err:
                raise type(err)(f"events[{i}]: {err.message}") from None
        if not checked:
            self.last = LastWrite()
            return []
        with self.wb.transaction(actor=self._actor(actor), commit=commit) as tx:
            logged = [tx.emit(kind, payload) for kind, payload in checked]
            kinds = sorted({kind for kind, _ in checked})
            tx.summary = summary or shortened(f"wb: record {len(logged)} events ({', '.join(kinds)})", 72)
        self._done(tx)
        return logged

    def _recordable(self, type: Any, payload: Any, actor: str) -> dict[str, Any]:
        """An event wb does not fold, checked (type, actor, payload) and its payload redacted and clipped."""
        from workbench.model.clip import clip_payload
        from workbench.model.eventtypes import HARNESS_EVENTS

        if not isinstance(type, str) or not EVENT_TYPE.match(type):
            raise UsageError(f"event type {type!r}: expected dotted lower-case words, e.g. agent.tool_call")
        if type in reducer.REDUCERS or type in HARNESS_EVENTS:
            raise Refused(f"event type {type}: wb folds it into state.md or the harness session; record it "
                          f"through its own command, or choose a type of your own (e.g. "
                          f"agent.{type.split('.')[-1]})")
        if actor not in ("agent", "human", "wb"):
            raise UsageError(f"actor {actor!r}: agent, human or wb")
        if not isinstance(payload, dict):
            raise UsageError("an event payload is a JSON object")
        small = small_json(payload)
        if small is not None:  # nothing to clip, before or after redaction: the transaction redacts it
            return small
        # redacted before clipping: a clip could cut a secret in two, and its sha256 would be of the secret
        return clip_payload(redact(payload, secret_values(self.wb.config)))

