"""A tab listing memory entries (rules, lessons or profile facts) of both scopes, with edit and delete.

Rules and lessons of the managed tier (an administrator's read-only folder) come first, marked ``managed`` and
read-only: edit and delete refuse them.

Changes go through `Runtime.update_entry` / `delete_entry` (off the event loop). When the engine refuses (a file
with bytes that are not UTF-8, an entry that changed meanwhile) the user sees its message and nothing is lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal, overload

from textual import on, work
from textual.binding import Binding
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable, Static

from anton_tui.memory.engrams.engram import Engram, MemoryFileError
from anton_tui.runtime import FirstRows
from anton_tui.tui.memory_words import source_words
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.edit_entry import EditEntryScreen
from anton_tui.tui.widgets.inspector.base import (
    MIN_FLEX_WIDTH,
    ColumnSpec,
    FileTab,
    ProblemBanner,
    describe_problem,
    pick,
    set_columns,
    table_width,
)


@dataclass(frozen=True, slots=True)
class EntryRow:
    key: str  # unique in the tab: tier, entry id, and a counter for repeated texts
    engram: Engram

    @property
    def scope(self) -> str:
        return self.engram.scope


class EntryRows(Sequence[EntryRow]):
    """The rows of one reading, made only when asked for.

    It holds the engrams the memory files' parse already holds (one reference each) and where each tier begins, so
    a list of 50,000 lessons costs the list, not a row object and a key string per lesson.
    """

    __slots__ = ("_tiers", "engrams")

    def __init__(self, tiers: Iterable[tuple[str, Sequence[Engram]]] = ()) -> None:
        self.engrams: list[Engram] = []
        self._tiers: list[tuple[int, str]] = []  # (first index, tier name), in order
        for tier, engrams in tiers:
            self._tiers.append((len(self.engrams), tier))
            self.engrams.extend(engrams)

    def __len__(self) -> int:
        return len(self.engrams)

    @overload
    def __getitem__(self, index: int) -> EntryRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[EntryRow]: ...
    def __getitem__(self, index: int | slice) -> EntryRow | list[EntryRow]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return EntryRow(self.key(index), self.engrams[index])

    def _tier_of(self, index: int) -> tuple[int, str]:
        start, name = self._tiers[0]
        for first, tier in self._tiers:
            if first > index:
                break
            start, name = first, tier
        return start, name

    def key(self, index: int) -> str:
        """``tier:id``, with ``#n`` for the n-th entry of the same text in that tier (n > 1)."""
        tier, _text, repeat = self.locate(index)
        name = f"{tier}:{self.engrams[index].id}"
        return name if repeat == 1 else f"{name}#{repeat}"

    def locate(self, index: int) -> tuple[str, str, int]:
        """(tier, text, n): the row at `index` is the n-th entry with this text in its tier."""
        start, tier = self._tier_of(index)
        text = self.engrams[index].text
        return tier, text, 1 + sum(1 for n in range(start, index) if self.engrams[n].text == text)

    def find(self, tier: str, text: str, repeat: int = 1) -> int | None:
        """The index of the `repeat`-th entry with this text in `tier`, or None."""
        for number, (start, name) in enumerate(self._tiers):
            if name != tier:
                continue
            stop = self._tiers[number + 1][0] if number + 1 < len(self._tiers) else len(self.engrams)
            for index in range(start, stop):
                if self.engrams[index].text == text:
                    repeat -= 1
                    if repeat == 0:
                        return index
        return None


class _PositionKeys(Sequence[str]):
    """Table row keys ``"0"``, ``"1"``…: a row's key is its place in the list shown, made only for rows made."""

    __slots__ = ("_length",)

    def __init__(self, length: int) -> None:
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [str(n) for n in range(*index.indices(self._length))]
        if not 0 <= index < self._length:
            raise IndexError(index)
        return str(index)


@dataclass(frozen=True)
class EntrySnapshot:
    rows: EntryRows = field(default_factory=EntryRows)
    problems: list[str] = field(default_factory=list)
    unwritable: dict[str, str] = field(default_factory=dict)
    """By tier, why its file will not be written (an edit or a delete would be refused)."""


def date_of(engram: Engram) -> str:
    return f"{engram.updated_at:%Y-%m-%d}" if engram.updated_at else ""


class EntryTab(FileTab):
    """Table of one kind of memory entry from the global and the project scope."""

    TABLE_CLASSES = "entries"

    KIND_FILE: ClassVar[str] = ""  # the kind of entry the tab lists and edits: rules, lessons or profile
    # Files of this kind this big (all scopes together) are read when the tab is first shown, not in the background.
    READ_WHEN_SHOWN_FROM: ClassVar[int | None] = None
    NOUN: ClassVar[str] = "entry"
    COLUMNS: ClassVar[tuple[ColumnSpec, ...]] = ()
    EMPTY: ClassVar[str] = "Nothing saved yet."
    TEXT_MIN_WIDTH: ClassVar[int] = MIN_FLEX_WIDTH  # cells the entry's text keeps before the droppable columns show

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._snapshot = EntrySnapshot()
        self._visible: Sequence[int] = range(0)  # indexes into the snapshot's rows of the rows shown, in order
        self._fitted_width = 0
        self.first_rows_shown = False

    # ---- what each kind defines ------------------------------------------------------------------------------

    def cells(self, engram: Engram) -> tuple[object, ...]:
        raise NotImplementedError

    def matches(self, engram: Engram) -> bool:
        return True

    def detail_facts(self, engram: Engram) -> list[str]:
        """More facts about the highlighted entry, for the line above its text."""
        return []

    def learner_of(self, engram: Engram) -> str:
        """The learner that wrote the entry, when the tab knows it ("" otherwise)."""
        return ""

    def empty_message(self) -> str:
        return self.EMPTY

    # ---- loading ---------------------------------------------------------------------------------------------

    async def read_snapshot(self) -> EntrySnapshot:
        listing = await self.runtime.memory.entries(self.KIND_FILE, managed=True)
        tiers = [(tier.scope, tier.entries) for tier in listing.tiers]
        problems = [describe_problem(tier.scope, problem) for tier in listing.tiers for problem in tier.problems]
        unwritable = {tier.scope: tier.unwritable for tier in listing.tiers if tier.unwritable}
        return EntrySnapshot(EntryRows(tiers), problems, unwritable)

    def show_first_rows(self, first: FirstRows) -> None:
        """Show the start of the list, read before the runtime was built; the first full read replaces it (and then
        the tab's title gets its count, unless these rows are all there is)."""
        self.first_rows_shown = True
        self._snapshot = EntrySnapshot(EntryRows((tier.scope, tier.entries) for tier in first.listing.tiers))
        self.fill_table(None)
        if first.complete:
            self.post_message(self.Summary(self, len(self._snapshot.rows)))

    def apply_snapshot(self, snapshot: EntrySnapshot) -> None:
        kept = self._cursor_entry()
        self._snapshot = snapshot
        self.query_one(ProblemBanner).show_problems(snapshot.problems)
        self.fill_table(kept)
        self.post_message(self.Summary(self, len(snapshot.rows), len(snapshot.problems)))

    def _cursor_entry(self) -> tuple[str, str, int] | None:
        """Which entry the cursor is on, as `EntryRows.locate` names it (None for an empty list)."""
        index = self._cursor_index()
        return None if index is None else self._snapshot.rows.locate(index)

    def _cursor_index(self) -> int | None:
        table = self.table
        if table.row_count == 0 or not 0 <= table.cursor_row < len(self._visible):
            return None
        return self._visible[table.cursor_row]

    def fill_table(self, kept: tuple[str, str, int] | Literal[False] | None = False) -> None:
        """Show the loaded rows that pass `matches`, keeping the cursor on the same entry where it still exists.

        `kept` names the entry to keep the cursor on when the rows were just replaced (False: the one under it)."""
        if kept is False:
            kept = self._cursor_entry()
        table = self.table
        old_index = table.cursor_row
        shown = set_columns(table, self.COLUMNS, min_flex=self.TEXT_MIN_WIDTH)
        rows = self._snapshot.rows
        engrams = rows.engrams
        if self.filtering():
            self._visible = [n for n, engram in enumerate(engrams) if self.matches(engram)]
        else:
            self._visible = range(len(engrams))
        visible = self._visible
        table.show_keyed_rows(_PositionKeys(len(visible)), lambda n: pick(self.cells(engrams[visible[n]]), shown))
        self._fitted_width = table_width(table)
        if visible:
            found = rows.find(*kept) if kept else None
            if found is not None and (not self.filtering() or self.matches(engrams[found])):
                position = found if isinstance(visible, range) else visible.index(found)
            else:
                position = min(max(old_index, 0), len(visible) - 1)
            table.ensure_rows(position)  # (rows far down a long list are made when needed)
            table.move_cursor(row=position, animate=False)
        self._show_detail(engrams[visible[table.cursor_row]] if visible else None)

    def filtering(self) -> bool:
        """Whether `matches` leaves some rows out (a filter is typed)."""
        return False

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self.loaded and self.is_mounted and table_width(self.table) != self._fitted_width:
            self.fill_table()

    # ---- the highlighted entry -------------------------------------------------------------------------------

    def selected_row(self) -> EntryRow | None:
        index = self._cursor_index()
        return None if index is None else self._snapshot.rows[index]

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = event.cursor_row
        self._show_detail(self._snapshot.rows.engrams[self._visible[row]] if 0 <= row < len(self._visible) else None)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_edit()

    def _show_detail(self, engram: Engram | None) -> None:
        detail = self.query_one(".detail", Static)
        if engram is None:
            detail.update(Content(self.empty_message() if self.loaded else self.waiting_text()))
            return
        facts = [f"{engram.scope} {self.NOUN}"]
        facts += ["read-only (set by an administrator)"] if engram.scope == "managed" else []
        if engram.scope != "managed" and engram.scope in self._snapshot.unwritable:
            facts.append(f"read-only: {self._snapshot.unwritable[engram.scope]}")
        facts += [f"{name} {value}" for name, value in (("topic", engram.topic), ("confidence", engram.confidence))
                  if value]  # fmt: skip
        facts += [source_words(engram.source, self.learner_of(engram))] if engram.source else []
        if engram.updated_at:
            facts.append(f"saved {date_of(engram)}")
        facts += self.detail_facts(engram)
        detail.update(Content.assemble((" · ".join(facts), "dim"), "\n", engram.text))

    # ---- edit and delete ---------------------------------------------------------------------------------------

    def action_reload(self) -> None:
        self.refresh_data()

    def _read_only(self, row: EntryRow) -> bool:
        """Whether the row's file will not be written; if so the user is told why, before anything is asked."""
        if row.scope == "managed":
            self.notify(f"Managed memory is read-only: this {self.NOUN} is set by an administrator.",
                        severity="warning")  # fmt: skip
            return True
        reason = self._snapshot.unwritable.get(row.scope)
        if reason is None:
            return False
        self.notify(f"The {row.scope} {self.KIND_FILE}.md is read-only: {reason}. Fix or move the file to change "
                    f"this {self.NOUN}.", title=f"The {self.NOUN} cannot be changed", severity="warning", timeout=10)  # fmt: skip
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
