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


def observed_until(claim: dict[str, Any], first_seen: str | None) -> str:
    """When a lease ends as an observer judges it: a lease is measured from when this clone first saw it
    (`first_seen`, on its own clock — durations on one clock hold whatever its skew), never past its length
    from then. The claimer's own stamp (`until`) decides only when it lies in that window: a claim stamped in
    the future (a clock years ahead) is capped at `first_seen + lease_s`, and one already expired by its stamp
    when first seen (a claimer's clock behind, or a claim seen late) runs its whole length from then — so no
    observer takes a task over before the holder's lease can have run out. Without `first_seen`: the stamp."""
    until = str(claim.get("until", ""))
    if not first_seen:
        return until
    cap = plus(first_seen, int(claim.get("lease_s") or DEFAULT_LEASE_S))
    return min(until, cap) if until >= first_seen else cap


def holder(task: dict[str, Any], at: str, first_seen: str | None = None) -> dict[str, Any] | None:
    """The claim that holds `task` at time `at` (an open task, a lease not yet expired), else None. With
    `first_seen` (an observer's: see `observed_until`) the lease is judged as this clone saw it, and the claim
    returned says until when by this clock (`stamped_until`: the claimer's own stamp, when that differs)."""
    claim = task.get("claim")
    if not isinstance(claim, dict) or task.get("status") in ("done", "cancelled"):
        return None
    until = observed_until(claim, first_seen)
    if until <= at:
        return None
    return claim if until == claim.get("until") else {**claim, "until": until, "stamped_until": claim.get("until")}


def lease_key(task_id: str, claim: dict[str, Any]) -> str:
    """One lease as an observer tracks it: a renewal (a new `until`) is a new lease to observe."""
    return f"{task_id} {claim.get('agent')} {claim.get('until')}"


def fold_claim(task: dict[str, Any], ev: dict[str, Any]) -> bool:
    """Fold a task.claim into its task; False when the claim is void (another agent holds it unexpired)."""
    p = ev["payload"]
    agent = str(p.get("agent", ""))
    lease = int(p.get("lease_s") or DEFAULT_LEASE_S)
    if task.get("status") in ("done", "cancelled"):
        return False  # a claim published after the task was finished: void (the CLI refuses one too)
    held = holder(task, ev["ts"])
    if held is not None and held.get("agent") != agent and not _observed_expired(held, p.get("after")):
        return False  # lost: the holder's claim was published first
    old = task.get("claim") if isinstance(task.get("claim"), dict) else None
    claim: dict[str, Any] = {"agent": agent, "since": ev["ts"], "until": plus(ev["ts"], lease), "lease_s": lease}
    if old is not None and old.get("agent") == agent and held is not None:
        claim["since"] = old.get("since", ev["ts"])  # a renewal by the holder
        if "took_over_from" in old:
            claim["took_over_from"] = old["took_over_from"]
    elif old is not None and old.get("agent") != agent and (old.get("until", "") <= ev["ts"] or held is not None):
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


def _observed_expired(held: dict[str, Any], after: Any) -> bool:
    """A takeover's evidence (`after` in its task.claim: {agent, until, seen_s}): the claimer watched exactly
    this lease for its whole length on its own clock, though the holder's stamp says it runs on (a holder's
    clock ahead). The fold takes it, so every clone agrees the task changed hands."""
    if not isinstance(after, dict):
        return False
    seen = after.get("seen_s")
    return (after.get("agent") == held.get("agent") and after.get("until") == held.get("until")
            and isinstance(seen, (int, float)) and not isinstance(seen, bool)
            and seen >= int(held.get("lease_s") or DEFAULT_LEASE_S))


def seconds_between(earlier: str, later: str) -> float:
    """Seconds from one event timestamp to a later one (negative when it is earlier)."""
    def parse(ts: str) -> datetime:
        return datetime.strptime(ts[:23].ljust(23, "0") if len(ts) >= 19 else ts, "%Y-%m-%dT%H:%M:%S.%f").replace(
            tzinfo=UTC)
    return (parse(later) - parse(earlier)).total_seconds()
