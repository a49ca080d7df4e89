"""Event types named in one place, without imports (the reducer needs them on every command's start-up path)."""

HARNESS_EVENTS = frozenset({
    "session.start", "session.pause", "session.resume", "session.complete", "session.abort",
    "harness.transition", "plan.draft", "plan.commit", "step.start", "step.end",
    "tool.call", "tool.result", "tool.error", "tool.progress", "approval.requested", "approval.granted",
    "approval.denied", "budget.warn", "hook.block", "hook.error", "planner.error",
})

# -- scope contract, proof of done, handoff packet (issue 16) -----------------------------------------------
# task.start gains `head`; task.done gains `head`, `scope` (the verdict) and per-command `sha256`/`artifact`;
# task.set gains `override` (a recorded override of a started task's acceptance or scope); the resume event
# (session.resume) gains `changed` (what changed since the yield). New: `handoff.write`.
HANDOFF_EVENTS = frozenset({"handoff.write"})

# -- sync and claims (issue 15: wb sync, wb task claim; folded in model/reducer.py, shapes in model/claims.py) --
# task.claim   {id, agent, lease_s}: the agent holds the task until ts + lease_s; a claim on a task another agent
#              holds unexpired is void (the log's order is publication order: see docs/sync.md)
# task.renumber {from, to, agent}: a sync renumbered an unpublished task whose id the remote had taken
SYNC_EVENTS = frozenset({"task.claim", "task.renumber"})

# -- who is acting (issue 19): hand edits no snapshot holds, and an agent's edit refused --------------------------
# config.edit        {keys|tools|hooks: {added, removed, changed, values}, sha}: config.yaml changed outside wb
#                    (by `human`, or by `agent` during its turn or open session: then also agent, agent_session)
# agent.edit_refused {file, refused: [{task, field, from, to}], agent, agent_session}: an agent's edit of
#                    board.json changed a task's acceptance, scope, status, owner or claim; board.json was restored
HAND_EDIT_EVENTS = frozenset({"config.edit", "agent.edit_refused"})

# -- the board's archive (issue 20: model/archive.py) -------------------------------------------------------------
# board.archive {file, ids, sha256}: the finished tasks `ids` leave board.json for the sealed segment `file`
#               (under .workbench/, whose bytes have that sha256); void when they are not on the board as sealed
ARCHIVE_EVENTS = frozenset({"board.archive"})

# -- memory that knows when it is stale (issue 22: ops/memory.py) -------------------------------------------------
# note.add and state.set gain `about` {paths, commit[, items]}: the note (or the assumptions `items` added) is about
#               these paths as of that code commit; folded into state.md `memory` (model/reducer.py)
# memory.verify {id, commit}: a person or an agent re-confirmed memory item `id` as of code commit `commit`
MEMORY_EVENTS = frozenset({"memory.verify"})
