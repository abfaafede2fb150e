"""Picking a saved conversation to continue (`/resume`), and a message of this one to go back to (`/rewind`).

`ResumeScreen` lists the project's saved conversations newest first (start time, first message, turns, model),
whether this program or Anton saved them; typing filters the list, **Enter** resumes the highlighted one, **d** deletes
it after asking. `RewindScreen` lists the messages typed in this conversation; **Enter** goes back to before the
highlighted one. Both read and change nothing themselves: the app gives them the rows and does what they return.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static

PREVIEW = 70


def _one_line(text: str, width: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@dataclass(frozen=True)
class Choice:
    """What the picker was closed with: `action` is "resume", "delete" or "rewind", `key` the session id or the
    history index."""

    action: str
    key: str


class ResumeScreen(ModalScreen[Choice | None]):
    """Choose a saved conversation; see the module docstring. `sessions` are `SavedSession` rows."""

    CSS_PATH = "resume.tcss"
    BINDINGS = [
        Binding("enter", "choose", "Resume", id="resume.choose", priority=True),
        Binding("ctrl+d", "delete", "Delete", id="resume.delete", priority=True),
        Binding("escape", "cancel", "Cancel", id="resume.cancel"),
    ]
    HELP = """\
## Resume a conversation

Saved conversations of this project, newest first, whether anton-tui or Anton saved them. Type to filter by the
first message, the date or the model; **Up**/**Down** move, **Enter** continues the highlighted conversation (its
scratchpads do not come back: they ended with the app), **Ctrl+D** deletes it after asking. A conversation whose
file cannot be read is listed as broken and left as it is. **Escape** closes this list.
"""

    def __init__(self, sessions: list, current: str | None = None) -> None:
        super().__init__()
        self.sessions = sessions
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="resume-dialog"):
            yield Label(Content("Resume a conversation"), id="resume-title")
            yield Input(placeholder="type to filter", id="resume-filter", compact=True)
            table: DataTable = DataTable(id="resume-table", cursor_type="row", zebra_stripes=False)
            yield table
            yield Static("", id="resume-status")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Started", "First message", "Turns", "Model")
        self.query_one(Input).cursor_blink = bool(getattr(self.app, "cursor_blink", True))
        self.fill("")
        self.query_one(Input).focus()

    def matches(self, session, words: list[str]) -> bool:
        haystack = " ".join([session.date, session.preview, session.model or "", session.session_id]).lower()
        return all(word in haystack for word in words)

    def preview_width(self) -> int:
        """Room for the first message: the dialog's width less the other columns (date 16, turns 5, model 16)."""
        dialog = min(110, int(self.app.size.width * 0.95)) - 6
        return max(20, min(PREVIEW, dialog - 16 - 5 - 16 - 8))

    def on_resize(self) -> None:
        self.fill(self.query_one(Input).value)

    def fill(self, query: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        words = query.lower().split()
        width = self.preview_width()
        shown = [session for session in self.sessions if self.matches(session, words)]
        for session in shown:
            preview = Text(_one_line(session.preview, width) or "(no message)")
            if session.source == "broken":
                preview = Text.assemble(("broken: ", "bold red"), _one_line(session.broken or "", 50))
            elif session.session_id == self.current:
                preview.append("  (this one)", style="dim")
            model = _one_line(session.model or "", 16)
            table.add_row(session.date, preview, str(session.turns), model, key=session.session_id)
        total = len(self.sessions)
        status = f"{len(shown)} of {total}" if words else f"{total} saved"
        self.query_one("#resume-status", Static).update(Content(f"{status} · Enter resumes · Ctrl+D deletes"))

    @on(Input.Changed, "#resume-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.fill(event.value)

    def key_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def key_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()

    def _highlighted(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_choose(self) -> None:
        key = self._highlighted()
        if key is not None:
            self.dismiss(Choice("resume", key))

    def action_delete(self) -> None:
        key = self._highlighted()
        if key is not None:
            self.dismiss(Choice("delete", key))

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(Choice("resume", str(event.row_key.value)))


class RewindScreen(ModalScreen[Choice | None]):
    """Choose a message typed in this conversation to go back to. `turns` are `UserTurn` rows, oldest first."""

    CSS_PATH = "resume.tcss"
    BINDINGS = [
        Binding("enter", "choose", "Go back", id="rewind.choose", priority=True),
        Binding("escape", "cancel", "Cancel", id="rewind.cancel"),
    ]
    HELP = """\
## Rewind

The messages you typed in this conversation, newest first. **Enter** goes back to before the highlighted one: it and
every later turn leave the conversation (and its saved file), and its text comes back in the prompt to edit and send
again. What those turns wrote to memory stays. **Escape** changes nothing.
"""

    def __init__(self, turns: list) -> None:
        super().__init__()
        self.turns = list(reversed(turns))

    def compose(self) -> ComposeResult:
        with Vertical(id="resume-dialog"):
            yield Label(Content("Go back to before a message"), id="resume-title")
            yield DataTable(id="resume-table", cursor_type="row")
            yield Static(Content("Later turns leave the conversation; memory they wrote stays."), id="resume-status")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "Message")
        for number, turn in zip(range(len(self.turns), 0, -1), self.turns, strict=False):
            table.add_row(str(number), _one_line(turn.text, 90), key=str(turn.index))
        table.focus()

    def action_choose(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            self.dismiss(Choice("rewind", str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)))

    def action_cancel(self) -> None:
        self.dismiss(None)
