"""What faultrun checks after each step of a schedule: an acknowledged write is there, a killed one wholly there
or absent, the workbench sound, the log only grows, no tool runs twice unasked, `wb doctor` repairs what it
reports (tools/faultrun.py runs the schedules; this is their checks)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

from faultrun_world import (
    NON_IDEMPOTENT,
    Op,
    Outcome,
    View,
    _diff,
    git,
    next_task_id,
    observe,
    run,
    run_many,
    status_outside,
    status_workbench,
)


class ScheduleChecks:
    """The checks of a `faultrun.Schedule` (whose state they read: its view, log lines, tools seen)."""

    def _after_ack(self, op: Op, label: str, out: Outcome, before: View) -> bool:
        ok_codes = {0, 3, 4} if op.kind == "harness" else {0}
        if op.kind == "harness" and out.rc == 1 and out.stdout.startswith("DONE (incomplete)"):
            ok_codes.add(1)  # a session with a denied or skipped step ends, but not goal_met (exit 1)
        if out.rc not in ok_codes:
            self.violate(op, label, f"exit {out.rc}: {(out.stderr or out.stdout).strip()[:400]}")
            return False
        self.result.acknowledged += 1
        if out.stderr.strip():
            self.violate(op, label, f"an acknowledged command warned: {out.stderr.strip()[:300]}")
        if op.kind == "task_add" and not out.stdout.startswith(f"{op.payload['id']} added"):
            self.violate(op, label, f"expected {op.payload['id']} as the new id; wb said {out.stdout.strip()!r}")
            return False
        view, edits, session = observe(self.repo, self.notes)
        expected = op.landed(before)
        if view != expected:
            self.violate(op, label, f"acknowledged mutation not as expected: {_diff(expected, view)}")
            return False
        if edits:
            self.violate(op, label, f"wb sees an unrecorded hand edit after its own write: {edits}")
        if op.kind == "harness":
            self._check_harness_outcome(op, label, out, session)
        outside = status_outside(self.repo, self.env)
        if outside != self.user_status:
            self.violate(op, label, f"the user's files changed: {sorted(set(outside) ^ set(self.user_status))}")
        dirty = status_workbench(self.repo, self.env)
        if dirty:
            self.violate(op, label, f"acknowledged but .workbench/ not committed: {dirty.strip()[:200]}")
        self._check_log_grows(op, label)
        self._check_tools(op, label)
        self.view = view
        return True

    def _check_harness_outcome(self, op: Op, label: str, out: Outcome, session: dict[str, Any]) -> None:
        if out.rc == 0 and session:
            self.violate(op, label, f"exit 0 but the session is still live ({session.get('harness_state')})")
        if out.rc == 3 and (session.get("pending") or {}).get("kind") not in ("approval", "tool_result", "in_doubt"):
            self.violate(op, label, f"exit 3 but no yield is pending: {session.get('pending')}")
        if out.rc == 4 and not session:
            self.violate(op, label, "exit 4 (paused) but no session is live")

    def _after_kill(self, op: Op, label: str, before: View) -> bool:
        ok = True
        outside = status_outside(self.repo, self.env)
        if outside != self.user_status:
            self.violate(op, label, f"the user's files changed: {sorted(set(outside) ^ set(self.user_status))}")
        status, validate, verify = run_many(self.repo, self.env, [["status", "--json"], ["validate"],
                                                                   ["replay", "--verify"]])
        if status.rc != 0:
            self.violate(op, label, f"the workbench does not load: wb status exited {status.rc}: "
                                    f"{status.stderr.strip()[:300]}")
            return False
        try:
            data = json.loads(status.stdout)
        except ValueError:
            self.violate(op, label, f"wb status --json printed no JSON: {status.stdout[:200]!r}")
            return False
        if data.get("unrecorded_human_edits"):
            self.violate(op, label, f"a crash was taken for a hand edit: {data['unrecorded_human_edits']}")
        live = self._live_session()
        if live and data.get("session") is None:
            self.violate(op, label, "a live session is not shown by wb status")
        ok = self._check_sound(op, label, validate, verify) and ok
        if self.rng.random() < 0.2:
            ok = self._exercise_doctor(op, label) and ok
        view, edits, _session = observe(self.repo, self.notes)
        if edits:
            self.violate(op, label, f"a crash was taken for a hand edit: {edits}")
        landed = op.landed(before)
        if view != before and view != landed:
            self.violate(op, label, "the killed mutation is neither wholly there nor wholly absent, or an "
                                    f"acknowledged one is missing: vs before {_diff(before, view)}; "
                                    f"vs landed {_diff(landed, view)}")
            ok = False
        self._check_log_grows(op, label)
        self._check_tools(op, label)
        self.view = view
        return ok

    def _live_session(self) -> bool:
        _view, _edits, session = observe(self.repo, self.notes)
        return bool(session)

    def _exercise_doctor(self, op: Op, label: str) -> bool:
        """`wb doctor` reports; `--fix` repairs; then it is healthy, and what wb loads has not changed."""
        self.result.doctor_runs += 1
        before, _e, _s = observe(self.repo, self.notes)
        dirty = bool(status_workbench(self.repo, self.env))
        report = run(self.repo, self.env, ["doctor", "--json"])
        if report.rc not in (0, 1):
            self.violate(op, label, f"wb doctor exited {report.rc}: {report.stderr.strip()[:300]}")
            return False
        try:
            codes = [f.get("code") for f in json.loads(report.stdout)["findings"]]
        except (ValueError, KeyError, TypeError):
            self.violate(op, label, f"wb doctor --json printed no findings: {report.stdout[:200]!r}")
            return False
        if dirty and "uncommitted" not in codes:  # listed; exit 0 when the next write commits it (issue 29)
            self.violate(op, label, f"wb doctor does not report the uncommitted .workbench/ (exit {report.rc}, "
                                    f"findings {codes})")
        fix = run(self.repo, self.env, ["doctor", "--fix", "--json"])
        if fix.rc != 0:
            self.violate(op, label, f"wb doctor --fix did not repair (exit {fix.rc}): "
                                    f"{(fix.stdout + fix.stderr).strip()[:400]}")
            return False
        try:
            findings = json.loads(fix.stdout).get("findings", [])
        except (ValueError, AttributeError):
            findings = []
        fixed = [f.get("code") for f in findings if isinstance(f, dict) and f.get("fixed")]
        if fixed:
            self.result.repairs += 1
            for code in fixed:
                self.result.repairs_by[f"doctor:{code}"] += 1
        again = run(self.repo, self.env, ["doctor"])
        if again.rc != 0:
            self.violate(op, label, f"wb doctor is not healthy after --fix: {(again.stdout + again.stderr).strip()}")
            return False
        if status_workbench(self.repo, self.env):
            self.violate(op, label, "wb doctor --fix left .workbench/ uncommitted")
        after, _e, _s = observe(self.repo, self.notes)
        if after != before:
            self.violate(op, label, f"wb doctor --fix changed what wb loads: {_diff(before, after)}")
            return False
        return True

    def _check_sound(self, op: Op, label: str, validate: Outcome | None = None,
                     verify: Outcome | None = None) -> bool:
        """`wb validate` (after `wb doctor --fix` of a torn tail) and `wb replay --verify`."""
        if validate is None or verify is None:
            validate, verify = run_many(self.repo, self.env, [["validate"], ["replay", "--verify"]])
        if validate.rc == 5 and "torn" in validate.stderr:
            fix = run(self.repo, self.env, ["doctor", "--fix"])
            self.result.repairs += 1
            self.result.repairs_by["torn_tail"] += 1
            if fix.rc != 0:
                self.violate(op, label, f"wb doctor --fix did not repair a torn tail: {fix.stdout}{fix.stderr}")
                return False
            validate, verify = run_many(self.repo, self.env, [["validate"], ["replay", "--verify"]])
        if validate.rc != 0:
            self.violate(op, label, f"wb validate exited {validate.rc}: "
                                    f"{(validate.stderr or validate.stdout).strip()[:400]}")
            return False
        if verify.rc != 0:
            self.violate(op, label, f"wb replay --verify exited {verify.rc}: "
                                    f"{(verify.stderr or verify.stdout).strip()[:400]}")
            return False
        return True

    def _log(self) -> tuple[list[bytes], bytes, list[dict[str, Any]]]:
        raw = (self.repo / ".workbench" / "events.jsonl").read_bytes()
        cut = raw.rfind(b"\n") + 1
        lines = raw[:cut].splitlines()
        return lines, raw[cut:], [json.loads(line) for line in lines]

    def _check_log_grows(self, op: Op, label: str) -> None:
        lines, _torn, events = self._log()
        if lines[:len(self.log_lines)] != self.log_lines:
            first = next((i for i, (a, b) in enumerate(zip(lines, self.log_lines, strict=False)) if a != b),
                         min(len(lines), len(self.log_lines)))
            self.violate(op, label, f"an event once in the log was lost or changed (line {first + 1}; "
                                    f"{len(self.log_lines)} lines before, {len(lines)} now)")
        if events and events[-1].get("more"):
            self.violate(op, label, "the log ends inside a batch")
        if any(e["type"] == "human.edit" for e in events):
            self.violate(op, label, "a human.edit was recorded, but nobody edited anything by hand")
        self.log_lines = lines

    def _check_tools(self, op: Op, label: str) -> None:
        """Side effects in the counter file against the calls journaled and recorded in the log."""
        runs = Counter(self.counter.read_text().split()) if self.counter.exists() else Counter()
        _lines, _torn, events = self._log()
        dispatched: Counter[str] = Counter()
        tag_of_key: dict[str, str] = {}
        recorded: set[str] = set()
        for e in events:
            p = e.get("payload") or {}
            if e["type"] == "tool.call":
                tag = (p.get("args") or {}).get("tag")
                if tag:
                    tag_of_key[p.get("key")] = tag
                    if p.get("dispatch") == "wb":
                        dispatched[tag] += 1
            elif e["type"] in ("tool.result", "tool.error") and p.get("key") in tag_of_key:
                recorded.add(tag_of_key[p["key"]])
        for tag, n in runs.items():
            if n > dispatched[tag]:
                self.violate(op, label, f"tool step {tag} ran {n}x but only {dispatched[tag]} call(s) were "
                                        "journaled before dispatch")
            if tag in self.frozen and n != self.frozen[tag]:
                self.violate(op, label, f"tool step {tag} ran again after its result was recorded "
                                        f"({self.frozen[tag]} -> {n} runs)")
                self.frozen[tag] = n
            if self.tool_of.get(tag) in NON_IDEMPOTENT and n > 1 + self.human_reruns[tag]:
                self.violate(op, label, f"non-idempotent tool step {tag} ran {n}x with "
                                        f"{self.human_reruns[tag]} re-run(s) approved by a person")
        for tag in recorded:
            self.frozen.setdefault(tag, runs[tag])

    # -- the end of a schedule -------------------------------------------------------------------------------
    def _finish(self) -> None:
        self.step += 1
        op = Op("task_add", ["task", "add", "final"], "task add final", {"id": next_task_id(self.view),
                                                                       "title": "final"})
        out = self._exec(op, ("", {}))
        if out.hung or not self._after_ack(op, "(end of schedule)", out, copy.deepcopy(self.view)):
            return
        if not self._check_sound(op, "(end of schedule)"):
            return
        self._doctor_at_end(op)
        changed = git(self.repo, self.env, "log", "--format=", "--name-only", f"{self.head0}..HEAD").split()
        outside = sorted({p for p in changed if not p.startswith(".workbench/")})
        if outside:
            self.violate(op, "(end of schedule)", f"wb commits touched files outside .workbench/: {outside}")
        ids = [t[0] for t in self.view["tasks"]]
        if len(ids) != len(set(ids)):
            self.violate(op, "(end of schedule)", f"duplicate task ids: {ids}")


    def _doctor_at_end(self, op: Op) -> None:
        """`wb doctor`: healthy, or what it reports is all fixable and `--fix` makes it healthy (leftover temp
        files of writes a kill interrupted are the usual find)."""
        label = "(end of schedule)"
        doctor = run(self.repo, self.env, ["doctor", "--json"])
        if doctor.rc == 0:
            return
        try:
            findings = json.loads(doctor.stdout)["findings"]
        except (ValueError, KeyError, TypeError):
            self.violate(op, label, f"wb doctor exited {doctor.rc}: {(doctor.stdout + doctor.stderr).strip()[:300]}")
            return
        unfixable = [f for f in findings if not f.get("fixable")]
        if unfixable:
            self.violate(op, label, f"wb doctor finds what it cannot repair: {unfixable}")
            return
        fix = run(self.repo, self.env, ["doctor", "--fix"])
        again = run(self.repo, self.env, ["doctor"])
        if fix.rc != 0 or again.rc != 0:
            self.violate(op, label, f"wb doctor --fix did not repair {findings}: {(fix.stdout + again.stdout).strip()}")
            return
        self.result.repairs += 1
        for f in findings:
            self.result.repairs_by[f"doctor:{f.get('code')}"] += 1
