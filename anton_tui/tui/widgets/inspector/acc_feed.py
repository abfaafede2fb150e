"""The ACC tab: a live feed of what the error monitor saw during this session and the lessons it fired.

The app calls `add()` with each `AccEventObserved` or `AccNudge` the session emits; the newest line is at the
bottom and the list follows it while the cursor is on the last line. Nothing here is read from disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.coordinate import Coordinate
from textual.events import Resize
from textual.widgets import DataTable, Static

from anton_tui.agent.events import AccEventObserved, AccNudge, OutsideAccess
from anton_tui.memory.learners.acc import Event, Lesson
from anton_tui.tui.widgets.inspector.base import (
    ColumnSpec,
    FixedColumnsTable,
    InspectorTab,
    pick,
    set_columns,
    table_width,
)

MAX_FEED_ROWS = 500
COLUMNS = (
    ColumnSpec("time", "Time", 8),
    ColumnSpec("type", "Type", 6, drop=2),
    ColumnSpec("name", "Detector / event", None),
    ColumnSpec("kind", "Kind", 6, drop=1),
    ColumnSpec("severity", "Sev", 3, drop=3),
    ColumnSpec("detail", "Detail", None),
)
_DETAIL_KEYS = ("name", "tool", "error", "reason", "description")


@dataclass(frozen=True)
class FeedItem:
    at: datetime
    type: str  # event | nudge | lesson
    name: str  # event kind, or the detector that fired
    kind: str  # rule kind of a lesson (always / never / when)
    severity: int
    summary: str
    full_text: str

    def cells(self) -> tuple[object, ...]:
        return (f"{self.at:%H:%M:%S}", self.type, self.name, self.kind, self.severity, self.summary)


def _event_summary(detail: Mapping[str, Any], round_idx: int) -> str:
    parts = [f"round {round_idx}"] if round_idx else []
    present = [key for key in _DETAIL_KEYS if detail.get(key) not in (None, "")]
    parts += [f"{key}={' '.join(str(detail[key]).split())}" for key in present]
    if "success" in detail:
        parts.append("ok" if detail["success"] else "failed")
    return " · ".join(parts)


def feed_item(entry: AccEventObserved | AccNudge | OutsideAccess | Event | Lesson, at: datetime) -> FeedItem:
    """What one session event looks like in the feed."""
    nudged = False
    if isinstance(entry, AccEventObserved):
        entry = entry.event
    elif isinstance(entry, AccNudge):
        nudged = entry.nudged
        entry = entry.lesson
    if isinstance(entry, Lesson):
        label = "nudge" if nudged else "lesson"
        detectors = entry.detectors
        who = (
            f"{' and '.join(detectors)} fired on the same failure, one lesson for both"
            if entry.also
            else (f"{entry.detector} fired")
        )
        header = f"{who} ({'shown to the model now' if nudged else 'saved to rules at turn end'})"
        return FeedItem(
            at, label, " + ".join(detectors), entry.kind, entry.severity, entry.rule, f"{header}\n{entry.rule}"
        )
    if isinstance(entry, Event):
        summary = _event_summary(entry.detail, entry.round_idx)
        details = "\n".join(f"{key}: {value}" for key, value in entry.detail.items())
        full = f"{entry.kind} (severity {entry.severity}, round {entry.round_idx})"
        full += f"\n{details}" if details else ""
        return FeedItem(at, "event", entry.kind, "", entry.severity, summary, full)
    if isinstance(entry, OutsideAccess):
        what = "connected to" if entry.kind == "network" else "read"
        summary = f"{entry.pad} cell {entry.cell} {what} {entry.target}"
        full = f"{summary}\nOutside content entered this turn: what the learners take from it waits for review."
        return FeedItem(at, "outside", "outside_access", entry.kind, 2, summary, full)
    raise TypeError(f"the ACC feed shows AccEventObserved and AccNudge, not {type(entry).__name__}")


class AccFeedTab(InspectorTab):
    """This session's ACC events and lessons, newest at the bottom."""

    TITLE = "ACC"
    BINDINGS = [Binding("c", "clear_feed", "Clear", id="inspector.clear_feed")]
    HELP = """\
## ACC

The error monitor (anterior cingulate) watches each turn for failure patterns: the same error again and again,
scratchpad resets or kills, switching scratchpad names, oversized cells, history repairs.

- **event**: something it observed (with its severity)
- **nudge**: a lesson shown to the model straight away (`ANTON_ACC_MODE=active`)
- **lesson**: a lesson saved to the rules at the end of the turn
- **outside**: a cell reached the network or a file outside the workspace; what is learned from that turn waits
  for your review

The feed covers this session only; the newest line is at the bottom. `c` clears it.
"""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.items: list[FeedItem] = []
        self._next_key = 0
        self._fitted_width = 0
        self._shown: list[int] = []

    def compose(self) -> ComposeResult:
        yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, classes="feed")
        yield Static(classes="detail")

    def on_mount(self) -> None:
        self.fill_table()

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    def add(
        self, entry: AccEventObserved | AccNudge | OutsideAccess | Event | Lesson, *, at: datetime | None = None
    ) -> FeedItem:
        """Append one event or fired lesson to the feed (`at` defaults to now)."""
        item = feed_item(entry, at or datetime.now())
        table = self.table
        follow = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        self.items.append(item)
        self._add_row(table, item)
        while len(self.items) > MAX_FEED_ROWS:
            self.items.pop(0)
            table.remove_row(table.coordinate_to_cell_key(Coordinate(0, 0)).row_key)
        if follow:
            table.move_cursor(row=table.row_count - 1, animate=False)
        self._show_detail()
        self.post_message(self.Summary(self, len(self.items)))
        return item

    def _add_row(self, table: DataTable, item: FeedItem) -> None:
        table.add_row(*pick(item.cells(), self._shown), key=f"acc-{self._next_key}")
        self._next_key += 1

    def refresh_data(self) -> None:
        """The feed lives in memory only; redraw it (for instance after the pane changed width)."""
        self.fill_table()

    def fill_table(self) -> None:
        table = self.table
        index = table.cursor_row
        self._shown = set_columns(table, COLUMNS)
        for item in self.items:
            self._add_row(table, item)
        self._fitted_width = table_width(table)
        if self.items:
            table.move_cursor(row=min(index, len(self.items) - 1), animate=False)
        self._show_detail()

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self.is_mounted and table_width(self.table) != self._fitted_width:
            self.fill_table()

    def action_clear_feed(self) -> None:
        self.items.clear()
        self.fill_table()
        self.post_message(self.Summary(self, 0))

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, index: int | None = None) -> None:
        detail = self.query_one(".detail", Static)
        if not self.items:
            detail.update(Content("No ACC events yet in this session."))
            return
        index = self.table.cursor_row if index is None else index
        item = self.items[min(max(index, 0), len(self.items) - 1)]
        detail.update(Content(item.full_text))
