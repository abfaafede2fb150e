"""The private parts of Textual the app relies on, all here, each with why the public API does not serve.

Textual is pinned (pyproject.toml). `tests/tui/test_textual_internals.py` checks that every private name used here
still exists and behaves as relied upon, and fails naming the one that changed, so that an upgrade shows at once
what to revisit. No other module of the app uses a private Textual name (that test checks it too).

What is here, and the measured reason for each, is listed in docs/architecture.md ("Private Textual API").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, DuplicateKey, Row, RowKey

if TYPE_CHECKING:
    from textual import messages
    from textual.app import App
    from textual.widget import Widget


def batching(app: Any) -> bool:
    """Whether the app is inside `App.batch_update()`, when nothing may be painted. (`App._batch_count`: there is
    no public way to ask.)"""
    return bool(app._batch_count)


def write_to_terminal(app: App[Any], text: str) -> None:
    """Send `text` (an escape sequence: a desktop notification) straight to the terminal, now; nothing when the app
    runs headless. (`App._driver`: Textual's public `App.bell()` writes the bell this way, and offers no public way to
    write another sequence.)"""
    driver = app._driver
    if driver is not None and not app.is_headless:
        driver.write(text)
        driver.flush()


class PaintFirstScreen(Screen):
    """A screen that paints one widget, `paint_first`, as soon as it asks to be painted, then calls
    `first_painted()`.

    Textual paints at the screen's next frame (up to a sixtieth of a second later), and a frame that also needs a
    layout (as every hand-off of a streaming answer does) lays the whole screen out first: tens of milliseconds,
    for which a keystroke's echo in the prompt would wait. Textual offers no public way to paint one widget at once,
    so this steps into the screen's own update path: the `_on_update` handler (which only queues the paint), the
    update timer (`_on_timer_update`), the set of widgets waiting to be painted (`_dirty_widgets`), and the
    compositor that paints them (`_compositor.update_widgets`, then `_compositor_refresh`, which writes the change
    to the terminal). Measured with and without it: docs/architecture.md, "Private Textual API".
    """

    paint_first: Widget | None = None

    def first_painted(self) -> None:
        """`paint_first` has just been painted ahead of the screen's frame."""

    def batch_ended(self) -> None:
        """The app's last `batch_update()` has just ended (`PaintFirstAfterBatches`): `paint_first`, if it waits to
        be painted, is painted now. A streaming Markdown appends its text in one batch after another, a millisecond
        apart; the screen's update timer mostly ticks inside one of them, when nothing may be painted, so a keystroke
        made meanwhile waited for the stream to pause (measured: up to 1.8 s at a thousand chunks a second)."""
        if self.paint_first in self._dirty_widgets:
            self._paint_first_now()

    async def _on_update(self, message: messages.Update) -> None:
        if message.widget is self.paint_first and self._paint_first_now():
            message.stop()
            message.prevent_default()  # Screen's own handler, which queues the paint for the next frame, is skipped

    def _on_timer_update(self) -> None:
        if self.paint_first in self._dirty_widgets and self._layout_required and self._paint_first_now():
            return  # the update timer keeps running: the layout is still required, and comes at the next tick
        super()._on_timer_update()

    def _paint_first_now(self) -> bool:
        widget = self.paint_first
        if widget is None or not self.is_current or batching(self.app) or widget not in self._compositor:
            return False
        self._dirty_widgets.discard(widget)
        self._compositor.update_widgets({widget})
        self._compositor_refresh()
        self.first_painted()
        return True


class PaintFirstAfterBatches:
    """Mixed into the App: when its last `batch_update()` ends, the current screen, if it is a `PaintFirstScreen`, is
    told (`batch_ended`). (`App._end_batch`: Textual marks the end of a batch only by `App.check_idle()`, which does
    not reach the screen, whose update timer then waits for its next tick.)"""

    def _end_batch(self) -> None:
        super()._end_batch()  # type: ignore[misc]  # (mixed into an App: App's method, through the MRO)
        if batching(self):
            return
        stack = self.screen_stack  # type: ignore[attr-defined]  # (the App's, likewise)
        if stack and isinstance(stack[-1], PaintFirstScreen):
            stack[-1].batch_ended()


class FixedColumnsTable(DataTable):
    """A DataTable whose columns all have a set width and whose rows are one line high, filled in one go.

    A plain DataTable measures every cell of every new row (to size columns that fit their content), even when no
    column needs it, and `add_row` announces each row on its own; for thousands of rows that is most of the time it
    takes to fill. Here the measuring is skipped while every column has a fixed width, and `add_keyed_rows` adds many
    rows with one update. DataTable has no public bulk insert: this writes its row bookkeeping as `add_row` does
    (`_row_locations`, `_data`, `rows`, `_new_rows`, `_require_update_dimensions`, `_highlight_cursor`,
    `_update_count`) and overrides `_update_dimensions`, the measuring step.

    `show_keyed_rows` shows a long list without making every row: a row's cells are made when the cursor or the
    scroll position comes within `PAGE_ROWS` of it (a list of 50,000 lessons would otherwise hold some 50 MB of
    rows nobody looks at). `row_count` counts the rows made so far, `total_rows` all of them.
    """

    PAGE_ROWS = 400

    _later_keys: Sequence[str] | None = None
    _later_cells: Callable[[int], Sequence[Any]] | None = None
    _later_base = 0

    def show_keyed_rows(self, keys: Sequence[str], cells: Callable[[int], Sequence[CellType]]) -> None:
        """Append one row per key (after the rows there are), the cells of row `n` of them made by `cells(n)`
        when that row is first needed."""
        self._later_keys, self._later_cells, self._later_base = keys, cells, self.row_count
        self.ensure_rows(0)

    @property
    def total_rows(self) -> int:
        if self._later_keys is None:
            return self.row_count
        return self._later_base + len(self._later_keys)

    def ensure_rows(self, index: int) -> None:
        """Make the rows up to `index` and a page beyond it."""
        keys, cells = self._later_keys, self._later_cells
        if keys is None or cells is None:
            return
        base = self._later_base
        start, stop = self.row_count - base, min(index - base + self.PAGE_ROWS + 1, len(keys))
        if stop > start:
            self.add_keyed_rows((keys[n], cells(n)) for n in range(start, stop))
        if self.row_count - base >= len(keys):
            self._later_keys = self._later_cells = None  # all made

    def clear(self, columns: bool = False) -> FixedColumnsTable:
        self._later_keys = self._later_cells = None
        super().clear(columns)
        return self

    def watch_cursor_coordinate(self, old_coordinate: Coordinate, new_coordinate: Coordinate) -> None:
        if self._later_keys is not None and new_coordinate.row >= self.row_count - self.PAGE_ROWS // 2:
            self.ensure_rows(new_coordinate.row)
        super().watch_cursor_coordinate(old_coordinate, new_coordinate)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._later_keys is not None:
            bottom = int(new_value) + self.scrollable_content_region.height
            if bottom >= self.row_count - self.PAGE_ROWS // 2:
                self.ensure_rows(bottom)

    def action_scroll_bottom(self) -> None:
        self.ensure_rows(self.total_rows)
        super().action_scroll_bottom()

    def add_keyed_rows(self, rows: Iterable[tuple[str, Sequence[CellType]]]) -> None:
        """Append one-line rows given as (key, cells); the same as `add_row(*cells, key=key)` for each."""
        column_keys = [column.key for column in self.ordered_columns]
        start = self.row_count
        added = 0
        for key, cells in rows:
            row_key = RowKey(key)
            if row_key in self._row_locations:
                raise DuplicateKey(f"The row key {row_key!r} already exists.")
            if len(cells) > len(column_keys):
                raise ValueError("More values provided than there are columns.")
            self._row_locations[row_key] = start + added
            self._data[row_key] = dict(zip_longest(column_keys, cells))
            self.rows[row_key] = Row(row_key, 1)
            self._new_rows.add(row_key)
            added += 1
        if not added:
            return
        self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate
        if start == 0 and self.columns and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()  # the cursor has a row to stand on now, as `add_row` announces it
        self._update_count += 1
        self.check_idle()

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        new_rows = list(new_rows)
        if not any(column.auto_width for column in self.columns.values()):
            rows = self.rows
            if not any(
                (row := rows.get(key)) is not None and (row.label is not None or row.auto_height) for key in new_rows
            ):
                new_rows = []  # nothing to measure: only the table's size is worked out
        super()._update_dimensions(new_rows)


class FrameHook:
    """For benchmarks and tests, mixed into an App: `frame_written(screen, update)` is called for every frame the
    app writes to the terminal (after `App._display`, the one place where that happens; Textual has no public event
    for it), outside `batch_update()` and while the app runs."""

    def _display(self, screen: Screen, renderable: Any) -> None:
        super()._display(screen, renderable)  # type: ignore[misc]
        if renderable is not None and not batching(self) and self._running:  # type: ignore[attr-defined]
            self.frame_written(screen, renderable)

    def frame_written(self, screen: Screen, renderable: Any) -> None:
        raise NotImplementedError
