"""Shared parts of the inspector's tabs: the reload contract, the warning banner and table helpers.

Every tab reloads with `refresh_data()`. A tab that shows files (`FileTab`) asks the Runtime for a snapshot in a
worker that only posts a message (the Runtime reads the files off the event loop); the tab's handler for that
message updates the widgets. Nothing is read when a tab is mounted: the pane loads the tabs after the first frame
(and once the runtime is built), one after another, and a tab shown before its turn loads at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from anton_tui.memory.engrams.engram import MemoryProblem
from anton_tui.tui.textual_internals import FixedColumnsTable

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime

FALLBACK_WIDTH = 78
MIN_FLEX_WIDTH = 16


class ColumnSpec(NamedTuple):
    key: str
    label: str
    width: int | None  # None: takes the width the fixed columns leave
    drop: int = 0  # when the table is too narrow, columns with the highest `drop` are hidden first; 0 never


class Cell:
    """A table cell shown exactly as written (never read as markup), cut with an ellipsis when too wide.

    Its Rich text is made when the cell is drawn, so only the rows in view pay for it, not every row of the table.
    """

    __slots__ = ("text",)

    def __init__(self, value: object) -> None:
        self.text = "" if value is None else str(value)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Cell({self.text!r})"

    def __rich__(self) -> Text:
        return Text(self.text, no_wrap=True, overflow="ellipsis", end="")


def _flex_width(columns: Sequence[ColumnSpec], available: int, padding: int) -> int:
    fixed = sum(c.width for c in columns if c.width is not None)
    flexible = sum(1 for c in columns if c.width is None)
    spare = available - fixed - 2 * padding * len(columns)
    return spare // flexible if flexible else spare


def fit_columns(columns: Sequence[ColumnSpec], available: int, padding: int = 1,
                min_flex: int = MIN_FLEX_WIDTH) -> list[tuple[int, ColumnSpec, int]]:  # fmt: skip
    """The columns that fit in `available` cells as (index, spec, width).

    Fixed columns keep their width and the flexible ones share the rest. While a flexible column would get fewer
    than `min_flex` cells, the droppable column with the highest `drop` is hidden.
    """
    shown = list(columns)
    droppable = sorted((c for c in columns if c.drop), key=lambda c: c.drop, reverse=True)
    while droppable and _flex_width(shown, available, padding) < min_flex:
        shown.remove(droppable.pop(0))
    share = max(MIN_FLEX_WIDTH, _flex_width(shown, available, padding))
    return [
        (index, spec, spec.width if spec.width is not None else share)
        for index, spec in enumerate(columns)
        if spec in shown
    ]


def set_columns(table: DataTable, columns: Sequence[ColumnSpec], labels: Sequence[str] | None = None, *,
                min_flex: int = MIN_FLEX_WIDTH) -> list[int]:  # fmt: skip
    """Clear `table` and give it the columns that fit its width (other columns are hidden before a flexible one gets
    fewer than `min_flex` cells); returns the indexes of the columns shown."""
    table.clear(columns=True)
    fitted = fit_columns(columns, table_width(table), min_flex=min_flex)
    for index, spec, width in fitted:
        table.add_column(labels[index] if labels else spec.label, key=spec.key, width=width)
    return [index for index, _, _ in fitted]


def pick(values: Sequence[object], indexes: Sequence[int]) -> list[Cell]:
    """The cells of one row for the columns shown."""
    return [Cell(values[index]) for index in indexes]


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
    if isinstance(table, FixedColumnsTable):
        table.ensure_rows(index)  # (rows far down a long list are made when needed)
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
    """One tab of the inspector. Subclasses implement `refresh_data()`; tabs that show files derive from `FileTab`."""

    TITLE: ClassVar[str] = ""

    class Summary(Message):
        """Posted after a reload: how many items the tab shows and how many warnings it has."""

        def __init__(self, tab: InspectorTab, count: int, warnings: int = 0) -> None:
            super().__init__()
            self.tab = tab
            self.count = count
            self.warnings = warnings

    def __init__(self, runtime: Runtime | None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._runtime = runtime

    @property
    def runtime(self) -> Runtime:
        """The runtime the tab reads through; tabs read only once the pane has it (`InspectorPane.attach_runtime`)."""
        if self._runtime is None:
            raise RuntimeError("the inspector's runtime is not built yet")
        return self._runtime

    @property
    def has_runtime(self) -> bool:
        return self._runtime is not None

    def attach_runtime(self, runtime: Runtime) -> None:
        """The runtime is built: the tab may read through it from now on."""
        self._runtime = runtime
        if self.is_mounted:
            self.runtime_attached()

    def runtime_attached(self) -> None:
        """Called once the runtime is there (after mounting): a tab that reads at once does it here."""

    def refresh_data(self) -> None:
        """Reload from disk (in a worker); the widgets change when the result arrives."""
        raise NotImplementedError

    def focus_main(self) -> None:
        """Focus the tab's main list."""
        tables = self.query(DataTable)
        if tables:
            tables.first().focus()


class FileTab(InspectorTab):
    """A tab that shows files from disk: `read_snapshot()` asks the Runtime for them, `apply_snapshot()` shows them.

    `load_started` turns true with the first read; until then the tab is empty and a change on disk needs no
    reload (the first read will see it). Each read is numbered, and only the result of the latest one is shown, so
    a slow read that a newer one overtook never replaces newer data. Until the first read is shown the tab's detail
    line says `waiting_text()`.
    """

    class Loaded(Message):
        def __init__(self, snapshot: Any, generation: int) -> None:
            super().__init__()
            self.snapshot = snapshot
            self.generation = generation

    TABLE_CLASSES: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._generation = 0
        self.loaded = False
        self.load_error: str | None = None

    def compose(self) -> ComposeResult:
        yield ProblemBanner(classes="problems")
        yield from self.compose_controls()
        yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, classes=self.TABLE_CLASSES)
        yield Static(classes="detail")

    def compose_controls(self) -> ComposeResult:
        """Widgets between the problem banner and the table (a filter box, say)."""
        yield from ()

    def on_mount(self) -> None:
        self.query_one(ProblemBanner).display = False
        self._show_detail(None)

    @property
    def table(self) -> FixedColumnsTable:
        return self.query_one(FixedColumnsTable)

    @property
    def load_started(self) -> bool:
        return self._generation > 0

    async def read_snapshot(self) -> Any:
        """Read what the tab shows through the Runtime (called in a worker; touches no widget)."""
        raise NotImplementedError

    def apply_snapshot(self, snapshot: Any) -> None:
        """Show what `read_snapshot` returned (on the app's loop)."""
        raise NotImplementedError

    def _show_detail(self, row: Any) -> None:
        """Describe `row` below the list; with None, the empty list (see `waiting_text` before the first load)."""
        raise NotImplementedError

    def waiting_text(self) -> str:
        if self.load_error:
            return f"Could not read the files: {self.load_error}"
        return "Loading…"

    def load_failed(self, error: BaseException | None) -> None:
        """The first read failed: say so where the list would be (later reads that fail keep what is shown)."""
        if not self.loaded:
            self.load_error = f"{type(error).__name__}: {error}"
            self._show_detail(None)

    def refresh_data(self) -> None:
        if self.has_runtime:  # (before, nothing is read: the pane loads every tab once the runtime is there)
            self._load(self._next_generation())

    def ensure_loaded(self) -> None:
        """Start the first read unless one has already started."""
        if not self.load_started:
            self.refresh_data()

    async def load_now(self) -> None:
        """Read and show the result before returning; for loading the tabs one after another."""
        generation = self._next_generation()
        snapshot = await self.read_snapshot()
        self._show(snapshot, generation)

    def _next_generation(self) -> int:
        self._generation += 1
        return self._generation

    @work(exclusive=True, exit_on_error=False, group="inspector-load")
    async def _load(self, generation: int) -> None:
        snapshot = await self.read_snapshot()
        if not get_current_worker().is_cancelled:
            self.post_message(self.Loaded(snapshot, generation))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        message.stop()
        self._show(message.snapshot, message.generation)

    def _show(self, snapshot: Any, generation: int) -> None:
        if generation == self._generation and self.is_attached:
            self.loaded = True
            self.load_error = None
            self.apply_snapshot(snapshot)
