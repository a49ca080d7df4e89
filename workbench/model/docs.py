"""The three documents the reducer folds events into (model/reducer.py) — state.md's frontmatter, its decision
log, board.json — and the versions it writes them at. Apart from the reducer: a reader (`wb task list`, `wb
status`) holds the documents and folds nothing, and imports none of it (issue 33)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

STATE_VERSION = 2  # 2 (issue 22): `memory` and `next_action_set` may be present
BOARD_VERSION = 2


class Docs:
    """The three folded documents: state frontmatter, decision-log body, board.

    The body is kept as parts joined on read, so folding many notes stays linear; `touched` names the tasks
    changed since the documents were loaded (only those need validating again); `sealed` holds the archive
    segments the events folded since then ({file under .workbench/: bytes}, model/archive.py), for the write
    to put on disk before the board that references them."""

    __slots__ = ("state", "_parts", "board", "touched", "sealed", "board_raw")

    def __init__(self, state: dict[str, Any], body: str, board: dict[str, Any]) -> None:
        self.state = state
        self._parts = [body]
        self.board = board
        self.touched: set[str] = set()
        self.sealed: dict[str, bytes] = {}
        self.board_raw: bytes | None = None  # board.json's bytes as wb wrote them, when `board` was read from them

    def encode_board(self) -> bytes:
        """board.json's bytes for `board`: the lines of the tasks untouched since the load are reused as read
        (a board of many tasks costs the encoding of the few a write changed)."""
        from workbench.model.boardfile import encode_board, splice_board, task_lines

        if self.board_raw is None or None in self.touched:
            return encode_board(self.board)
        touched = self.touched
        spliced = splice_board(self.board, self.board_raw, touched)
        if spliced is not None:
            return spliced

        class Unchanged:
            def __contains__(self, tid: object) -> bool:
                return tid not in touched

        return encode_board(self.board, task_lines(self.board_raw, Unchanged()))

    def tasks_json(self, tasks: list[dict[str, Any]]) -> bytes | None:
        """`tasks` as one JSON list, a task a line, copied whole from board.json's bytes (boardfile.
        task_list_as_read) when they are the board's tasks, in its order, and the load changed none of them;
        None otherwise (`task_json` then has each one's line)."""
        from operator import is_

        from workbench.model.boardfile import task_list_as_read

        board_tasks = self.board.get("tasks")
        if self.board_raw is None or self.touched or not tasks or not isinstance(board_tasks, list) \
                or len(tasks) != len(board_tasks) or not all(map(is_, tasks, board_tasks)):
            return None
        return task_list_as_read(self.board_raw, len(tasks))

    def task_json(self, tasks: list[dict[str, Any]]) -> list[str | None]:
        """Each of `tasks`' JSON as `json.dumps(task, ensure_ascii=False)` writes it, copied from board.json's
        bytes for a task of the board untouched since the load (its line there is that text, as `encode_board`
        relies on); None for any other (a task the events folded on load changed, an archived one): the
        caller encodes those."""
        from workbench.model.boardfile import task_texts

        texts = task_texts(self.board_raw) if self.board_raw is not None and None not in self.touched else None
        if not texts:
            return [None] * len(tasks)
        on_board = set(map(id, self.board.get("tasks") or []))  # a board's task has a string id (has_task_list)
        touched = self.touched
        return [texts.get(t["id"]) if id(t) in on_board and t["id"] not in touched else None for t in tasks]

    @property
    def body(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0]

    @body.setter
    def body(self, value: str) -> None:
        self._parts = [value]

    def append_body(self, text: str) -> None:
        last = next((p for p in reversed(self._parts) if p), "")
        if last and not last.endswith("\n"):
            self._parts.append("\n")
        self._parts.append(text)
