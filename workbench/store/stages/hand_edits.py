"""Stage `detect edits`: the hand edits the load found become events — `human.edit` (a person's), or during an
agent's turn `agent.edit` held to the agent's rules, with an `agent.edit_refused` for what only wb's verbs may
change (store/humanedit.py) — and a hand edit of config.yaml a `config.edit` (store/configedit.py)."""

from __future__ import annotations

from workbench.store import configedit, humanedit, spool

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    loaded = tx.loaded
    config_edit, tx.config_seen = configedit.find(tx.wb)
    turn = None
    if not tx.create and (loaded.human_edits or config_edit):  # during an agent's turn: its edit
        turn = humanedit.agent_acting(tx.wb, spool.agent_turn(tx))
    tx.refused = []
    for edit in loaded.human_edits:
        before = edit.pop(humanedit.BEFORE, None)
        committed = edit.pop(humanedit.COMMITTED, False)
        if tx.adopted and edit["file"] == "board.json":
            # the edit is in the snapshot the adopted events were folded after, but it is recorded after
            # them: its order keeps the board as the load has it (a task it adds is not moved past theirs)
            edit["order"] = [t["id"] for t in tx.docs.board["tasks"]]
        if turn is not None:
            if edit["file"] == "board.json" and isinstance(before, dict):
                kept, refused = humanedit.guard_agent_board_edit(tx.docs, edit, before)
                if refused:
                    refuse(tx, refused, turn)
                if kept is None:
                    continue
                edit = kept
            spool.emit_agent_edit(tx, edit, turn)
            continue
        if not tx.dry and not committed:  # one git committed (a cherry-pick's merge) is no one mid-edit
            humanedit.note_edit(tx.wb.paths, edit["file"])
        tx.emit("human.edit", edit, actor="human", via="edit")
    tx.config_edit = None
    if config_edit is not None:
        if turn is not None:
            config_edit.update(agent=str(turn.get("agent") or ""), agent_session=str(turn.get("agent_session") or ""))
        tx.config_edit = tx.emit("config.edit", config_edit, actor="agent" if turn is not None else "human",
                                 via="edit")


def refuse(tx: StageContext, refused: list[dict[str, Any]], turn: dict[str, Any]) -> None:
    """An agent's edit of board.json that changed what only wb's verbs (and a person) may change: board.json
    goes back to what the log folds to (the documents already have it), and the refusal is an event."""
    tx.refused.extend(refused)
    tx.emit("agent.edit_refused", {"file": "board.json", "refused": refused,
                                   "agent": str(turn.get("agent") or ""),
                                   "agent_session": str(turn.get("agent_session") or "")}, actor="agent", via="edit")
    tx.board_changed = True
