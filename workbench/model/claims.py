"""Claims on tasks (a task.claim folded into the board's optional `claim`), and lease arithmetic on event
times. Pure: the reducer calls these with an event's own timestamp, never the clock, so a replay of the log
decides every claim the same way on every clone."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

DEFAULT_LEASE_S = 3600
_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$")


def parse_duration(text: str) -> int:
    """Seconds of `90`, `90s`, `30m`, `1h`, `2h30m`, `1d`; ValueError for anything else (or zero)."""
    m = _DURATION.match(text.strip())
    if not text.strip() or m is None:
        raise ValueError(f"not a duration: {text!r} (use e.g. 30m, 1h, 2h30m, 90s)")
    d, h, mi, s = (int(g) if g else 0 for g in m.groups())
    seconds = d * 86400 + h * 3600 + mi * 60 + s
    if seconds <= 0:
        raise ValueError(f"not a duration: {text!r} (it must be longer than 0s)")
    return seconds


def plus(ts: str, seconds: int) -> str:
    """An event timestamp (RFC 3339 UTC, milliseconds) `seconds` later, in the same format."""
    t = datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    ms = ts[20:23] if len(ts) > 20 and ts[19] == "." else "000"
    return (t + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.") + ms.ljust(3, "0")[:3] + "Z"


def holder(task: dict[str, Any], at: str) -> dict[str, Any] | None:
    """The claim that holds `task` at time `at` (an open task, a lease not yet expired), else None."""
    claim = task.get("claim")
    if not isinstance(claim, dict) or task.get("status") in ("done", "cancelled"):
        return None
    return claim if str(claim.get("until", "")) > at else None


def fold_claim(task: dict[str, Any], ev: dict[str, Any]) -> bool:
    """Fold a task.claim into its task; False when the claim is void (another agent holds it unexpired)."""
    p = ev["payload"]
    agent = str(p.get("agent", ""))
    lease = int(p.get("lease_s") or DEFAULT_LEASE_S)
    if task.get("status") in ("done", "cancelled"):
        return False  # a claim published after the task was finished: void (the CLI refuses one too)
    held = holder(task, ev["ts"])
    if held is not None and held.get("agent") != agent:
        return False  # lost: the holder's claim was published first
    old = task.get("claim") if isinstance(task.get("claim"), dict) else None
    claim: dict[str, Any] = {"agent": agent, "since": ev["ts"], "until": plus(ev["ts"], lease), "lease_s": lease}
    if old is not None and old.get("agent") == agent and held is not None:
        claim["since"] = old.get("since", ev["ts"])  # a renewal by the holder
        if "took_over_from" in old:
            claim["took_over_from"] = old["took_over_from"]
    elif old is not None and old.get("agent") != agent and old.get("until", "") <= ev["ts"]:
        claim["took_over_from"] = str(old.get("agent"))  # the lease had expired: a takeover, recorded
    task["claim"] = claim
    return True


def renew(task: dict[str, Any], ev: dict[str, Any]) -> None:
    """A write on a claimed task renews its lease from the write's time (the log does not name the agent of
    other writes; a write on a task is taken as its holder's)."""
    claim = task.get("claim")
    if isinstance(claim, dict) and holder(task, ev["ts"]) is not None:
        until = plus(ev["ts"], int(claim.get("lease_s") or DEFAULT_LEASE_S))
        if until > str(claim.get("until", "")):
            claim["until"] = until
