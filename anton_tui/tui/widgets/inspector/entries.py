"""A tab listing memory entries (rules, lessons or profile facts) of both scopes, with edit and delete.

Rules and lessons of the managed tier (an administrator's read-only folder) come first, marked ``managed`` and
read-only: edit and delete refuse them.

Changes go through `Runtime.update_entry` / `delete_entry` (off the event loop). When the engine refuses (a file
with bytes that are not UTF-8, an entry that changed meanwhile) the user sees its message and nothing is lost.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.binding import Binding
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable, Static

from anton_tui.memory.engram import Engram
from anton_tui.memory.hippocampus import Hippocampus, MemoryFileError
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.edit_entry import EditEntryScreen
from anton_tui.tui.widgets.inspector.base import (
    ColumnSpec,
    FileTab,
    ProblemBanner,
    cursor_key,
    describe_problem,
    pick,
    restore_cursor,
    set_columns,
    table_width,
)


@dataclass(frozen=True)
class EntryRow:
    key: str  # unique in the table: scope, entry id, and a counter for repeated texts
    engram: Engram

    @property
    def scope(self) -> str:
        return self.engram.scope


@dataclass(frozen=True)
class EntrySnapshot:
    rows: list[EntryRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def date_of(engram: Engram) -> str:
    return f"{engram.updated_at:%Y-%m-%d}" if engram.updated_at else ""


class EntryTab(FileTab):
    """Table of one kind of memory entry from the global and the project scope."""

    TABLE_CLASSES = "entries"

    KIND_FILE: ClassVar[str] = ""  # the `kind_file` the Hippocampus edits: rules, lessons or profile
    NOUN: ClassVar[str] = "entry"
    COLUMNS: ClassVar[tuple[ColumnSpec, ...]] = ()
    EMPTY: ClassVar[str] = "Nothing saved yet."

    BINDINGS = [
        Binding("e", "edit", "Edit", id="inspector.edit"),
        Binding("d,delete", "delete", "Delete", id="inspector.delete"),
        Binding("r", "reload", "Reload", id="inspector.reload"),
    ]

    class Written(Message):
        def __init__(self, action: str, row: EntryRow, done: bool, error: str | None) -> None:
            super().__init__()
            self.action = action
            self.row = row
            self.done = done
            self.error = error

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._snapshot = EntrySnapshot()
        self._rows: dict[str, EntryRow] = {}
        self._fitted_width = 0

    # ---- what each kind defines ------------------------------------------------------------------------------

    def read_entries(self, hc: Hippocampus) -> list[Engram]:
        raise NotImplementedError

    def file_path(self, hc: Hippocampus) -> Path:
        raise NotImplementedError

    def cells(self, engram: Engram) -> tuple[object, ...]:
        raise NotImplementedError

    def matches(self, row: EntryRow) -> bool:
        return True

    def empty_message(self) -> str:
        return self.EMPTY

    # ---- layout ----------------------------------------------------------------------------------------------

    # ---- loading ---------------------------------------------------------------------------------------------

    def read_snapshot(self) -> EntrySnapshot:
        rows: list[EntryRow] = []
        problems: list[str] = []
        managed = getattr(self.stores, "managed", None)
        tiers = [("managed", managed)] if managed is not None and self.KIND_FILE != "profile" else []
        for scope, hc in tiers + self.stores.scoped():
            seen: Counter[str] = Counter()
            for engram in self.read_entries(hc):
                key = f"{scope}:{engram.id}"
                seen[key] += 1
                rows.append(EntryRow(key if seen[key] == 1 else f"{key}#{seen[key]}", engram))
            path = self.file_path(hc)
            problems += [describe_problem(scope, p) for p in hc.problems() if p.path == path]
        return EntrySnapshot(rows, problems)

    def apply_snapshot(self, snapshot: EntrySnapshot) -> None:
        self._snapshot = snapshot
        self._rows = {row.key: row for row in snapshot.rows}
        self.query_one(ProblemBanner).show_problems(snapshot.problems)
        self.fill_table()
        self.post_message(self.Summary(self, len(snapshot.rows), len(snapshot.problems)))

    def fill_table(self) -> None:
        """Show the loaded rows that pass `matches`, keeping the cursor on the same entry where it still exists."""
        table = self.table
        keep, old_index = cursor_key(table), table.cursor_row
        shown = set_columns(table, self.COLUMNS)
        visible = [row for row in self._snapshot.rows if self.matches(row)]
        table.show_keyed_rows([row.key for row in visible], lambda n: pick(self.cells(visible[n].engram), shown))
        self._fitted_width = table_width(table)
        restore_cursor(table, [row.key for row in visible], keep, old_index)
        self._show_detail(visible[table.cursor_row] if visible else None)

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self.loaded and self.is_mounted and table_width(self.table) != self._fitted_width:
            self.fill_table()

    # ---- the highlighted entry -------------------------------------------------------------------------------

    def selected_row(self) -> EntryRow | None:
        key = cursor_key(self.table)
        return self._rows.get(key) if key is not None else None

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(self._rows.get(event.row_key.value))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_edit()

    def _show_detail(self, row: EntryRow | None) -> None:
        detail = self.query_one(".detail", Static)
        if row is None:
            detail.update(Content(self.empty_message() if self.loaded else self.waiting_text()))
            return
        engram = row.engram
        facts = [f"{row.scope} {self.NOUN}"]
        facts += ["read-only (set by an administrator)"] if row.scope == "managed" else []
        facts += [f"{name} {value}" for name, value in (("topic", engram.topic), ("confidence", engram.confidence),
                                                         ("source", engram.source)) if value]  # fmt: skip
        if engram.updated_at:
            facts.append(f"saved {date_of(engram)}")
        detail.update(Content.assemble((" · ".join(facts), "dim"), "\n", engram.text))

    # ---- edit and delete ---------------------------------------------------------------------------------------

    def action_reload(self) -> None:
        self.refresh_data()

    def _read_only(self, row: EntryRow) -> bool:
        if row.scope != "managed":
            return False
        self.notify(f"Managed memory is read-only: this {self.NOUN} is set by an administrator.", severity="warning")
        return True

    def action_edit(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify(f"No {self.NOUN} selected.", severity="warning")
            return
        if self._read_only(row):
            return
        screen = EditEntryScreen(row.engram.text, title=f"Edit {row.scope} {self.NOUN}")
        self.app.push_screen(screen, partial(self._edited, row))

    def _edited(self, row: EntryRow, text: str | None) -> None:
        if text is not None and text.strip() != row.engram.text:
            self._write("update", row, text)

    def action_delete(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify(f"No {self.NOUN} selected.", severity="warning")
            return
        if self._read_only(row):
            return
        question = f"Delete this {row.scope} {self.NOUN}?"
        self.app.push_screen(ConfirmScreen(question, row.engram.text, confirm="Delete", danger=True),
                             partial(self._confirmed_delete, row))  # fmt: skip

    def _confirmed_delete(self, row: EntryRow, confirmed: bool | None) -> None:
        if confirmed:
            self._write("delete", row)

    @work(exit_on_error=False, group="inspector-write")
    async def _write(self, action: str, row: EntryRow, text: str = "") -> None:
        try:
            if action == "update":
                done = await self.runtime.update_entry(row.scope, self.KIND_FILE, row.engram.id, text)
            else:
                done = await self.runtime.delete_entry(row.scope, self.KIND_FILE, row.engram.id)
        except (MemoryFileError, ValueError, OSError) as exc:
            self.post_message(self.Written(action, row, False, str(exc)))
        else:
            self.post_message(self.Written(action, row, done, None))

    @on(Written)
    def _written(self, message: Written) -> None:
        message.stop()
        verb = "updated" if message.action == "update" else "deleted"
        if message.error:
            self.notify(message.error, title=f"The {self.NOUN} was not {verb}", severity="error", timeout=10)
        elif not message.done:
            self.notify(f"That {self.NOUN} changed on disk meanwhile; the list has been reloaded.", severity="warning")
        else:
            self.notify(f"{message.row.scope.capitalize()} {self.NOUN} {verb}.")
        self.refresh_data()
