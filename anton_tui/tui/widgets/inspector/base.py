"""Shared parts of the inspector's tabs: the reload contract, the warning banner and table helpers.

Every tab reloads with `refresh_data()`, which reads the disk in a thread worker; the worker only posts a message,
and the tab's handler for that message updates the widgets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar, NamedTuple

from rich.text import Text
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from anton_tui.memory.engram import MemoryProblem
from anton_tui.tui.stores import MemoryStores

FALLBACK_WIDTH = 78
MIN_FLEX_WIDTH = 16


class ColumnSpec(NamedTuple):
    key: str
    label: str
    width: int | None  # None: takes the width the fixed columns leave
    drop: int = 0  # when the table is too narrow, columns with the highest `drop` are hidden first; 0 never


def cell(value: object) -> Text:
    """A table cell shown exactly as written (never read as markup), cut with an ellipsis when too wide."""
    return Text("" if value is None else str(value), no_wrap=True, overflow="ellipsis", end="")


def _flex_width(columns: Sequence[ColumnSpec], available: int, padding: int) -> int:
    fixed = sum(c.width for c in columns if c.width is not None)
    flexible = sum(1 for c in columns if c.width is None)
    spare = available - fixed - 2 * padding * len(columns)
    return spare // flexible if flexible else spare


def fit_columns(columns: Sequence[ColumnSpec], available: int, padding: int = 1) -> list[tuple[int, ColumnSpec, int]]:
    """The columns that fit in `available` cells as (index, spec, width).

    Fixed columns keep their width and the flexible ones share the rest. While a flexible column would get fewer
    than MIN_FLEX_WIDTH cells, the droppable column with the highest `drop` is hidden.
    """
    shown = list(columns)
    droppable = sorted((c for c in columns if c.drop), key=lambda c: c.drop, reverse=True)
    while droppable and _flex_width(shown, available, padding) < MIN_FLEX_WIDTH:
        shown.remove(droppable.pop(0))
    share = max(MIN_FLEX_WIDTH, _flex_width(shown, available, padding))
    return [
        (index, spec, spec.width if spec.width is not None else share)
        for index, spec in enumerate(columns)
        if spec in shown
    ]


def set_columns(table: DataTable, columns: Sequence[ColumnSpec], labels: Sequence[str] | None = None) -> list[int]:
    """Clear `table` and give it the columns that fit its width; returns the indexes of the columns shown."""
    table.clear(columns=True)
    fitted = fit_columns(columns, table_width(table))
    for index, spec, width in fitted:
        table.add_column(labels[index] if labels else spec.label, key=spec.key, width=width)
    return [index for index, _, _ in fitted]


def pick(values: Sequence[object], indexes: Sequence[int]) -> list[Text]:
    """The cells of one row for the columns shown."""
    return [cell(values[index]) for index in indexes]


def table_width(table: DataTable) -> int:
    """Cells the table can show per line (its scrollbar gutter excluded).

    A table on a hidden tab has no size yet; it is laid out for the width of the nearest visible container, so it
    looks right the moment its tab is shown.
    """
    width = table.scrollable_content_region.width
    if width > 0:
        return width
    gutter = table.styles.scrollbar_size_vertical
    for node in table.ancestors:
        if isinstance(node, Widget) and node.size.width > 0:
            return max(node.size.width - gutter, 1)
    return FALLBACK_WIDTH


def cursor_key(table: DataTable) -> str | None:
    """Key of the row under the cursor, or None for an empty table."""
    if table.row_count == 0:
        return None
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


def restore_cursor(table: DataTable, keys: Sequence[str], key: str | None, old_index: int) -> None:
    """Put the cursor back on `key` if that row still exists, else near where it was."""
    if not keys:
        return
    index = keys.index(key) if key in keys else min(max(old_index, 0), len(keys) - 1)
    table.move_cursor(row=index, animate=False)


def describe_problem(scope: str, problem: MemoryProblem) -> str:
    """One warning line: which file and line, why, and the start of the line itself."""
    where = f"{scope} {problem.path.name}" + (f" line {problem.line}" if problem.line is not None else "")
    text = problem.text.strip()
    quoted = f"  “{text[:60]}{'…' if len(text) > 60 else ''}”" if text else ""
    return f"⚠ {where}: {problem.reason}{quoted}"


class ProblemBanner(Static):
    """Warnings about files that could not be read; hidden while there are none. The files are never changed."""

    def show_problems(self, lines: Iterable[str]) -> None:
        lines = list(lines)
        self.display = bool(lines)
        self.update(Content("\n".join(lines)))


class InspectorTab(Vertical):
    """One tab of the inspector. Subclasses implement `refresh_data()`."""

    TITLE: ClassVar[str] = ""

    class Summary(Message):
        """Posted after a reload: how many items the tab shows and how many warnings it has."""

        def __init__(self, tab: InspectorTab, count: int, warnings: int = 0) -> None:
            super().__init__()
            self.tab = tab
            self.count = count
            self.warnings = warnings

    def __init__(self, stores: MemoryStores, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.stores = stores

    def refresh_data(self) -> None:
        """Reload from disk (in a thread worker); the widgets change when the result arrives."""
        raise NotImplementedError

    def focus_main(self) -> None:
        """Focus the tab's main list."""
        tables = self.query(DataTable)
        if tables:
            tables.first().focus()
