"""The Rules tab: every always/never/when rule of the global and the project memory, editable in place."""

from __future__ import annotations

from anton_tui.memory.engrams.engram import Engram
from anton_tui.tui.widgets.inspector.base import ColumnSpec
from anton_tui.tui.widgets.inspector.entries import EntryTab, date_of


class RulesTab(EntryTab):
    """Rules from ~/.anton/memory/rules.md and the project's .anton/memory/rules.md."""

    TITLE = "Rules"
    KIND_FILE = "rules"
    NOUN = "rule"
    EMPTY = "No rules yet. Rules are written when you ask Anton to remember how to work, or by the ACC."
    COLUMNS = (
        ColumnSpec("scope", "Scope", 7),
        ColumnSpec("kind", "Kind", 6),
        ColumnSpec("text", "Rule", None),
        ColumnSpec("confidence", "Conf.", 6, drop=2),
        ColumnSpec("source", "Source", 8, drop=3),
        ColumnSpec("date", "Date", 10, drop=1),
    )
    HELP = """\
## Rules

The standing instructions Anton follows: **always**, **never** and **when** rules, from the global memory
(`~/.anton/memory/rules.md`) and this project's (`.anton/memory/rules.md`).

- `e` or `Enter`: edit the highlighted rule
- `d` or `Delete`: delete it (asks first)
- `r`: reload from disk (changes made elsewhere show up by themselves)

Lines that cannot be read are listed in a warning at the top and left untouched in the file.
"""

    def cells(self, engram: Engram) -> tuple[object, ...]:
        return (engram.scope, engram.kind, engram.text, engram.confidence, engram.source, date_of(engram))
