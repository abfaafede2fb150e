"""What one past turn's request carried of memory and skills, opened from a message picked in the chat.

The same lines and sizes as the Context tab (`widgets/inspector/context_tab.py`), but for the turn the picked message
started rather than the latest one. The report is the one the session kept for that turn (`Runtime.context_report`);
turns that ran before the conversation was resumed have none, and the screen says so. It reads and changes nothing.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from anton_tui.tui.textual_internals import FixedColumnsTable
from anton_tui.tui.widgets.inspector.base import pick, set_columns
from anton_tui.tui.widgets.inspector.context_tab import COLUMNS, cells_of, describe

NOT_KEPT = (
    "Not recorded: this turn ran before the conversation was resumed. What a request carried is kept while the "
    "app runs, for the turns of the conversation in progress."
)


def _one_line(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class TurnContextScreen(ModalScreen[None]):
    """The memory and skills one turn's request carried; `report` is a `ContextReport` or None when not kept."""

    CSS_PATH = "turn_context.tcss"
    BINDINGS = [Binding("escape,i,q", "close", "Close", id="turn-context.close")]
    HELP = """\
## What a turn saw

The rules, lessons, profile lines, skills and scratchpad hints the request of the turn you picked carried, each
with its size in characters and estimated tokens, and why it went in (pinned, or ranked with its score against the
turn); the entries left out come last, with the reason. **Up**/**Down** move through the lines, **Escape** closes.
"""

    def __init__(self, report: Any, message: str) -> None:
        super().__init__()
        self.report = report
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="turn-context-dialog"):
            title = f"What turn {self.report.turn} saw" if self.report is not None else "What this turn saw"
            yield Label(Content(title), id="turn-context-title")
            yield Static(Content(f"› {_one_line(self.message)}"), id="turn-context-message")
            status = describe(self.report) if self.report is not None else NOT_KEPT
            yield Static(Content(status), id="turn-context-status")
            yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, id="turn-context-table")
            yield Static(Content("Up/Down move through the lines · Escape closes"), id="turn-context-hint")

    def on_mount(self) -> None:
        table = self.query_one(FixedColumnsTable)
        table.display = self.report is not None
        self.fill()
        table.focus()

    def on_resize(self) -> None:
        self.fill()

    def fill(self) -> None:
        if self.report is None:
            return
        table = self.query_one(FixedColumnsTable)
        shown = set_columns(table, COLUMNS)
        for number, item in enumerate(self.report.items):
            table.add_row(*pick(cells_of(item), shown), key=str(number))

    def action_close(self) -> None:
        self.dismiss(None)
