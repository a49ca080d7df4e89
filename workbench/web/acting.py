"""Acting from the page (issue 32): what `wb serve --act` lets the person who started it do, and how the server
knows the page is theirs.

- Who may turn it on: a person, proven at the terminal that runs `wb serve --act` by the same gate as every
  person-only action (ops/person.require_person: a code on /dev/tty; never in an agent's environment or under
  an agent's process, never in CI, never off a terminal). cli/serve.py asks before the server starts.
- How the page proves it is that person's: a one-time token, written only to that terminal (/dev/tty), as
  Jupyter does. `GET /act?token=…` exchanges it for a session cookie (HttpOnly, SameSite=Strict, this port's
  name) and spends it: the same link opens nothing a second time.
- Every write: a POST to `/api/act/<action>` with the session cookie, the session's CSRF token in
  `X-CSRF-Token` (held by the server; the page reads it from `/api/act`, which only its own origin can read),
  `Content-Type: application/json`, the server's own Host (as every request) and an `Origin` that is the same
  address. Anything else is refused before the workbench is read.
- What a write is: the same Bench call the CLI makes (api.Bench), with the process's actor a person
  `via: web`, `proof: web-token` for that call alone (model/provenance.py), so each event says where it came
  from and how the person was proven. Trusting commands writes the clone's trust store as `wb trust` does.

Without `--act` the server has none of this: every POST is 405 with the one line READ_ONLY.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie
from typing import Any

from workbench.errors import Refused, UsageError
from workbench.model.provenance import Who

PROOF = "web-token"
WEB_PERSON = Who("human", "web", False, PROOF)
READ_ONLY = ("wb serve is read-only: a person runs `wb serve --act` at their own terminal to act from the page")
MAX_BODY = 64 * 1024
TEXT_MAX = 10_000  # a title, a comment: the store caps free text again, the same on every path in


class Acting:
    """The one-time token and the sessions it opened, for one running server."""

    def __init__(self, port: int) -> None:
        self.token = secrets.token_urlsafe(32)
        self.spent = False
        self.cookie = f"wb_act_{port}"  # cookies ignore ports: another wb serve on this host keeps its own
        self._sessions: dict[str, str] = {}  # session id -> its CSRF token
        self._lock = threading.Lock()

    def exchange(self, token: str | None) -> tuple[str, str] | None:
        """(session id, CSRF token) for the right token, once; None for a wrong one or a spent one."""
        with self._lock:
            if self.spent or not token or not hmac.compare_digest(token.encode(), self.token.encode()):
                return None
            self.spent = True
            session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
            self._sessions[session] = csrf
            return session, csrf

    def session_of(self, cookie_header: str | None) -> str | None:
        """The session id the request's cookie holds, when it is one this server opened."""
        if not cookie_header:
            return None
        try:
            jar: SimpleCookie = SimpleCookie(cookie_header)
        except CookieError:
            return None
        morsel = jar.get(self.cookie)
        if morsel is None:
            return None
        with self._lock:
            for session in self._sessions:
                if hmac.compare_digest(morsel.value.encode(), session.encode()):
                    return session
        return None

    def csrf_of(self, session: str) -> str:
        with self._lock:
            return self._sessions[session]

    def set_cookie(self, session: str) -> str:
        return f"{self.cookie}={session}; Path=/; HttpOnly; SameSite=Strict"

    def refusal(self, headers: Any, origins: set[str]) -> str | None:
        """Why a write request is refused (its Host was checked already), or None: the session cookie, the
        session's CSRF token, a JSON body, and an Origin of this server's own address."""
        session = self.session_of(headers.get("Cookie"))
        if session is None:
            return ("no acting session: open the one-time link `wb serve --act` showed on the terminal of the "
                    "person who started it")
        if (headers.get("Origin") or "").lower() not in origins:
            return "a write comes from the page's own address (Origin header)"
        csrf = headers.get("X-CSRF-Token") or ""
        if not hmac.compare_digest(csrf.encode(), self.csrf_of(session).encode()):
            return "the page's CSRF token is missing or wrong: reload the page"
        if (headers.get("Content-Type") or "").split(";")[0].strip().lower() != "application/json":
            return "a write is sent as application/json"
        return None


# -- the actions: each the Bench call its CLI command makes --------------------------------------------------------
def _text(body: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise UsageError(f"{name}: text is needed")
    if len(value) > TEXT_MAX:
        raise UsageError(f"{name}: at most {TEXT_MAX} characters")
    return value


def _lines(body: dict[str, Any], name: str) -> list[str] | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{name}: a list of lines")
    return [v.strip() for v in value if v.strip()]


def _answer(bench: Any, body: dict[str, Any], approve: bool) -> dict[str, Any]:
    """`wb resume --approve` / `--deny` for the yield the page showed (its id: a yield answered meanwhile is
    refused, not approved in its place)."""
    yield_id = _text(body, "yield_id")
    session = bench.wb.load(detect_human=False).docs.state.get("session") or {}
    pending = session.get("pending") or {}
    if pending.get("yield_id") != yield_id:
        raise Refused(f"yield {yield_id} is not the one waiting: reload the page")
    if pending.get("kind") != "approval":
        raise Refused(f"yield {yield_id} waits for {pending.get('reason', 'an answer')}, not an approval: "
                      f"{pending.get('command') or 'wb resume'}")
    out = bench.resume(approve=approve, deny=not approve, yield_id=yield_id, approved_by="human")
    return {"done": "approved" if approve else "denied", "session": getattr(out, "kind", None) or "ended"}


def _trust(bench: Any, body: dict[str, Any]) -> dict[str, Any]:
    """`wb trust` for the pending commands the page showed, by digest: one that changed since is not among
    them, so it is not trusted unseen."""
    from workbench.ops import trust

    digests = _lines(body, "digests") or []
    if not digests:
        raise UsageError("digests: name the commands to trust")
    waiting = [c for c in trust.pending(bench.wb) if c.digest in digests]
    missing = set(digests) - {c.digest for c in waiting}
    if missing:
        raise Refused(f"{len(missing)} of these commands no longer wait for trust as shown: reload the page")
    return {"done": "trusted", "count": trust.trust(bench.wb, waiting)}


def _add(bench: Any, body: dict[str, Any]) -> dict[str, Any]:
    task = bench.add_task(_text(body, "title"), description=_text(body, "description", required=False) or None,
                          acceptance=_lines(body, "acceptance"), actor="human")
    return {"done": "added", "task": task["id"]}


SETTABLE = ("title", "description", "acceptance", "owner", "priority")


def _set(bench: Any, body: dict[str, Any]) -> dict[str, Any]:
    task_id = _text(body, "id") or ""
    changes = body.get("changes")
    if not isinstance(changes, dict) or not changes or set(changes) - set(SETTABLE):
        raise UsageError(f"changes: some of {', '.join(SETTABLE)}")
    clean: dict[str, Any] = {}
    for key, value in changes.items():
        if key == "acceptance":
            clean[key] = _lines(changes, key) or []
        elif key == "priority":
            if not isinstance(value, int) or isinstance(value, bool):
                raise UsageError("priority: 0 (highest) to 4")
            clean[key] = value
        else:
            clean[key] = _text(changes, key, required=key in ("title", "owner"))
    bench.set_task(task_id, clean, actor="human")
    return {"done": "set", "task": task_id}


def _comment(bench: Any, body: dict[str, Any]) -> dict[str, Any]:
    task_id = _text(body, "id") or ""
    bench.comment_task(task_id, _text(body, "text") or "", actor="human")
    return {"done": "commented", "task": task_id}


ACTIONS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "approve": lambda bench, body: _answer(bench, body, True),
    "deny": lambda bench, body: _answer(bench, body, False),
    "trust": _trust,
    "task-add": _add,
    "task-set": _set,
    "task-comment": _comment,
}


def perform(bench: Any, action: str, body: dict[str, Any]) -> dict[str, Any]:
    """Run `action` as the person on the page (the caller holds the bench's lock). WorkbenchError as the CLI
    raises it; the process's actor is restored after."""
    from workbench.model import provenance

    before = provenance.establish(WEB_PERSON)
    try:
        return ACTIONS[action](bench, body)
    finally:
        provenance.establish(before)


def view(bench: Any, csrf: str) -> dict[str, Any]:
    """`GET /api/act`: what the page needs to act — its CSRF token, the yield waiting for approval (its id, tool
    and mode) and the commands waiting for trust, each exactly as it would run."""
    from workbench.ops import trust

    session = bench.wb.load(detect_human=False).docs.state.get("session") or {}
    pending = session.get("pending") or {}
    approval = None
    if pending.get("kind") == "approval":
        request = pending.get("payload") or {}
        approval = {"yield_id": pending.get("yield_id"), "tool": request.get("tool"),
                    "mode": request.get("mode"), "reason": pending.get("reason"), "goal": session.get("goal")}
    commands = [{"digest": c.digest, "label": c.label, "how": c.how, "source": c.source}
                for c in trust.pending(bench.wb)]
    return {"csrf": csrf, "approval": approval, "trust": commands, "settable": list(SETTABLE)}
