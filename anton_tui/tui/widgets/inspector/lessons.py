"""The Lessons tab: facts Anton learned, from both scopes, with a filter that narrows the list as you type."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from anton_tui.memory.engrams.engram import Engram
from anton_tui.tui.widgets.inspector.base import ColumnSpec
from anton_tui.tui.widgets.inspector.entries import EntryTab, date_of


class LessonsTab(EntryTab):
    """Lessons from ~/.anton/memory/lessons.md and the project's .anton/memory/lessons.md."""

    TITLE = "Lessons"
    KIND_FILE = "lessons"
    NOUN = "lesson"
    EMPTY = "No lessons yet. Anton saves what it learns while working (API quirks, data gotchas, fixes)."
    COLUMNS = (
        ColumnSpec("scope", "Scope", 7),
        ColumnSpec("topic", "Topic", 14, drop=1),
        ColumnSpec("text", "Lesson", None),
        ColumnSpec("date", "Date", 10, drop=2),
    )
    BINDINGS = [Binding("slash,ctrl+f", "filter", "Filter", id="inspector.filter")]
    # From 1 MB of lessons (some 6,000) they are read when the tab is first shown: 50,000 lessons hold some 15 MB,
    # which an app whose Lessons tab stays closed does without. Their first rows show meanwhile.
    READ_WHEN_SHOWN_FROM = 1 << 20
    HELP = """\
## Lessons

Facts Anton learned while working, from the global memory and this project's.

- `/` or `Ctrl+F`: filter (by text or topic, any case); `Escape` or `Down` returns to the list
- `e` or `Enter`: edit the highlighted lesson
- `d` or `Delete`: delete it (asks first)
- `r`: reload from disk (changes made elsewhere show up by themselves)
"""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.filter_text = ""

    def compose_controls(self) -> ComposeResult:
        yield Input(placeholder="Filter lessons by text or topic…", classes="filter")

    def cells(self, engram: Engram) -> tuple[object, ...]:
        return (engram.scope, engram.topic, engram.text, date_of(engram))

    def filtering(self) -> bool:
        return bool(self.filter_text)

    def matches(self, engram: Engram) -> bool:
        if not self.filter_text:
            return True
        needle = self.filter_text.casefold()
        return needle in engram.text.casefold() or needle in (engram.topic or "").casefold()

    def empty_message(self) -> str:
        if self.filter_text and self._snapshot.rows:
            return f"No lesson matches “{self.filter_text}”."
        return self.EMPTY

    def action_filter(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Changed, ".filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self.fill_table()

    @on(Input.Submitted, ".filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.table.focus()

    def on_key(self, event) -> None:
        if event.key in ("escape", "down") and self.query_one(Input).has_focus:
            event.stop()
            self.table.focus()
