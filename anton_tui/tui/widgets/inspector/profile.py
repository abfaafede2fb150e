"""The Profile tab: what Anton knows about the user (the identity facts in profile.md), editable in place."""

from __future__ import annotations

from anton_tui.memory.engrams.engram import Engram
from anton_tui.tui.widgets.inspector.base import ColumnSpec
from anton_tui.tui.widgets.inspector.entries import EntryTab


class ProfileTab(EntryTab):
    """Identity facts from ~/.anton/memory/profile.md (and a project profile.md, if one exists)."""

    TITLE = "Profile"
    KIND_FILE = "profile"
    NOUN = "fact"
    EMPTY = "No profile facts yet. Anton notes who you are and how you like to work as you talk."
    COLUMNS = (
        ColumnSpec("scope", "Scope", 7),
        ColumnSpec("text", "Fact", None),
    )
    HELP = """\
## Profile

Facts about you that Anton keeps in `~/.anton/memory/profile.md` (name, time zone, preferences).

- `e` or `Enter`: edit the highlighted fact
- `d` or `Delete`: delete it (asks first)
- `r`: reload from disk
"""

    def cells(self, engram: Engram) -> tuple[object, ...]:
        return (engram.scope, engram.text)
