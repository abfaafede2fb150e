"""The History tab: every recorded memory change, newest first, the diff of the one selected, and undo.

It reads through the runtime's history service (`log`, `show`, `undo`), whose work runs off the event loop. Undo
asks first; when later changes touched the same lines it shows what cannot be undone automatically and changes
nothing. Parts of a sync's merge that wait for a choice (the sync service's `waiting`) are listed first, marked
"to resolve"; `m` keeps this machine's version of that scope's waiting parts, `t` takes the other side's.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Static

from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.widgets.inspector.base import ColumnSpec, FixedColumnsTable, InspectorTab, pick, set_columns

LIMIT = 500
COLUMNS = (
    ColumnSpec("time", "UTC", 11, drop=2),
    ColumnSpec("scope", "Scope", 7, drop=1),
    ColumnSpec("producer", "By", 12),
    ColumnSpec("summary", "Change", None),
)


def short_time(stamp: float) -> str:
    return time.strftime("%m-%d %H:%M", time.gmtime(stamp))  # UTC, as the Episodes tab


class HistoryTab(InspectorTab):
    """The memory history of both scopes (see the module docstring)."""

    TITLE = "History"
    BINDINGS = [
        Binding("u", "undo", "Undo change", id="inspector.undo"),
        Binding("r", "reload", "Reload", id="inspector.reload"),
        Binding("m", "resolve('ours')", "Keep mine", id="inspector.keep_mine", show=False),
        Binding("t", "resolve('theirs')", "Take theirs", id="inspector.take_theirs", show=False),
    ]
    HELP = """\
## History

Every change to the memory files, newest first: when, which scope, who made it (memorize, cerebellum,
consolidator, acc, identity, compaction, reset, user edit, undo, or external for editors and other programs) and
what changed. The diff of the selected change is shown below.

- `u`: undo the selected change (a new change that reverts it; you are asked first)
- `r`: reload

When shared memory was synced and part of the merge could not be decided, those parts come first, marked
"to resolve": `m` keeps your version, `t` takes the other side's (for that scope), then the sync finishes.
"""

    class Listed(Message):
        def __init__(self, changes: list[Any], error: str | None, waiting: list[tuple[str, Any]] | None = None) -> None:
            super().__init__()
            self.changes = changes
            self.error = error
            self.waiting = waiting or []

    class Shown(Message):
        def __init__(self, change_id: str, diff: str) -> None:
            super().__init__()
            self.change_id = change_id
            self.diff = diff

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.changes: list[Any] = []
        self.waiting: list[tuple[str, Any]] = []  # (scope, MergeConflict) of syncs waiting for a choice
        self.diff_of: str | None = None
        self.load_started = False

    def compose(self) -> ComposeResult:
        yield Static(classes="status")
        yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, classes="history")
        with VerticalScroll(classes="diff"):
            yield Static(classes="diff-text")

    def on_mount(self) -> None:
        self._status("Loading…")

    def _status(self, text: str) -> None:
        self.query_one(".status", Static).update(Content(text))

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    # ---- loading -----------------------------------------------------------------------------------------------

    def refresh_data(self) -> None:
        if not self.has_runtime:
            return  # (read once the runtime is there)
        self.load_started = True
        self._list()

    def ensure_loaded(self) -> None:
        if not self.load_started:
            self.refresh_data()

    @work(exclusive=True, exit_on_error=False, group="inspector-history")
    async def _list(self) -> None:
        try:
            await self.runtime.history.record_external()  # what an editor or Anton changed since
            changes = await self.runtime.history.log(limit=LIMIT)
            waiting = await self.runtime.sync.waiting()
        except Exception as exc:
            self.post_message(self.Listed([], f"The history cannot be read: {exc}"))
        else:
            flat = [(scope, conflict) for scope, found in waiting.items() for conflict in found]
            self.post_message(self.Listed(changes, None, flat))

    @on(Listed)
    def _listed(self, message: Listed) -> None:
        message.stop()
        self.changes = message.changes
        self.waiting = message.waiting
        if message.error:
            self._status(message.error)
        elif self.waiting:
            self._status(f"{len(self.waiting)} parts of a sync wait for a choice: m keeps mine, t takes theirs.")
        elif not self.changes:
            self._status("No memory changes recorded yet.")
        else:
            self._status(f"{len(self.changes)} changes, newest first. u: undo the selected one.")
        self.fill_table()
        self.post_message(self.Summary(self, len(self.changes)))

    def fill_table(self) -> None:
        table = self.table
        index = table.cursor_row
        shown = set_columns(table, COLUMNS)
        for index, (scope, conflict) in enumerate(self.waiting):
            values = ("", scope, "to resolve", f"{conflict.file}: {conflict.reason}")
            table.add_row(*pick(values, shown), key=f"waiting-{index}")
        for change in self.changes:
            values = (short_time(change.time), change.scope, change.producer, change.summary)
            table.add_row(*pick(values, shown), key=change.id)
        if self.changes or self.waiting:
            table.move_cursor(row=min(max(index, 0), len(self.changes) + len(self.waiting) - 1), animate=False)
            self._select(table.cursor_row)
        else:
            self.query_one(".diff-text", Static).update(Content(""))

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._select(event.cursor_row)

    def _select(self, row: int) -> None:
        if 0 <= row < len(self.waiting):
            scope, conflict = self.waiting[row]
            self.diff_of = None
            head = (f"{scope} · waits for a choice: m keeps mine, t takes theirs", "dim")
            self.query_one(".diff-text", Static).update(Content.assemble(head, "\n", conflict.describe()))
            return
        row -= len(self.waiting)
        if 0 <= row < len(self.changes):
            self._show(self.changes[row].id)

    @work(exclusive=True, exit_on_error=False, group="inspector-history-diff")
    async def _show(self, change_id: str) -> None:
        try:
            _change, diff = await self.runtime.history.show(change_id)
        except Exception as exc:
            diff = f"(cannot be shown: {exc})"
        self.post_message(self.Shown(change_id, diff))

    @on(Shown)
    def _shown(self, message: Shown) -> None:
        message.stop()
        change = next((c for c in self.changes if c.id == message.change_id), None)
        if change is None:
            return
        from textual.highlight import highlight

        self.diff_of = change.id
        facts = [f"{change.short} · {change.scope} · {change.producer}"]
        facts += [f"session {change.session}"] if change.session else []
        facts += [f"turn {change.turn}"] if change.turn is not None else []
        head = " · ".join(facts)
        why = f"\n{change.why}" if change.why else ""
        trust = f"\ntrust: {change.trust}" if change.trust else ""
        body = highlight(message.diff, language="diff") if message.diff else Content("(no difference)")
        self.query_one(".diff-text", Static).update(Content.assemble((head + why + trust, "dim"), "\n", body))

    # ---- undo --------------------------------------------------------------------------------------------------

    def selected(self) -> Any:
        row = self.table.cursor_row - len(self.waiting)
        return self.changes[row] if self.changes and 0 <= row < len(self.changes) else None

    def action_resolve(self, prefer: str) -> None:
        row = self.table.cursor_row
        if not self.waiting:
            self.notify("No sync waits for a choice.")
            return
        scope = self.waiting[row][0] if 0 <= row < len(self.waiting) else self.waiting[0][0]
        self._resolve(scope, prefer)

    @work(exit_on_error=False, group="inspector-write")
    async def _resolve(self, scope: str, prefer: str) -> None:
        outcome = await self.runtime.sync.resolve(scope, prefer)
        side = "your version" if prefer == "ours" else "the other side's"
        if outcome.ok:
            self.notify(f"Resolved with {side}: {outcome.message}.")
        else:
            self.notify(outcome.message, title="Sync not finished", severity="warning", timeout=10)
        self.refresh_data()

    def action_reload(self) -> None:
        self.refresh_data()

    def action_undo(self) -> None:
        change = self.selected()
        if change is None:
            self.notify("No change selected.", severity="warning")
            return
        question = f"Undo change {change.short} ({change.producer}, {change.scope})?"
        self.app.push_screen(ConfirmScreen(question, change.summary, confirm="Undo"), partial(self._confirmed, change))

    def _confirmed(self, change: Any, confirmed: bool | None) -> None:
        if confirmed:
            self._undo(change.id)

    @work(exit_on_error=False, group="inspector-write")
    async def _undo(self, change_id: str) -> None:
        try:
            outcome = await self.runtime.history.undo(change_id)
        except Exception as exc:
            self.notify(str(exc), title="Not undone", severity="error", timeout=10)
            return
        if not outcome.done:
            text = "\n".join(conflict.describe() for conflict in outcome.conflicts)
            self.notify(text, title="Cannot be undone automatically; nothing was changed", severity="warning",
                        timeout=15)  # fmt: skip
        elif outcome.change is None:
            self.notify("Nothing to undo: memory already reads as before that change.")
        else:
            self.notify(f"Undone by change {outcome.change.short}.")
        self.refresh_data()

    def focus_main(self) -> None:
        self.table.focus()
