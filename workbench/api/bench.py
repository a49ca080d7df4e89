"""`Bench`: every family of verbs behind one class (as sqlite-utils keeps one `Table` over many modules)."""

from __future__ import annotations

from workbench.api.events import EventVerbs
from workbench.api.loop import LoopVerbs
from workbench.api.reading import ReadingVerbs
from workbench.api.sharing import SharingVerbs
from workbench.api.state import StateVerbs
from workbench.api.tasks import TaskVerbs
from workbench.api.upkeep import UpkeepVerbs


class Bench(TaskVerbs, StateVerbs, ReadingVerbs, LoopVerbs, UpkeepVerbs, EventVerbs, SharingVerbs):
    """One workbench, opened: its verbs are the command line's (see `workbench.api`), one family per module
    of this package behind the one class."""
