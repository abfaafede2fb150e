"""Picking a saved conversation to continue (`/resume`), and a message of this one to go back to (`/rewind`).

`ResumeScreen` lists the project's saved conversations newest first (start time, title or first message, turns,
model), whether this program or Anton saved them, each fork right under the conversation it was forked from; typing
filters the list. **Enter** resumes the highlighted one; **Ctrl+R** renames it, **Ctrl+F** forks it (and continues
in the fork), **Ctrl+E** exports it to Markdown, **Ctrl+D** deletes it to the trash after asking and **Ctrl+Z**
brings the last one deleted back. Those changes go through the runtime (`Runtime.conversations`) in the screen's
workers; the conversation to resume is what the screen is dismissed with. `RewindScreen` lists the messages typed in
this conversation; **Enter** goes back to before the highlighted one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime

PREVIEW = 70
CHANGE_FAILED = (LookupError, ValueError, RuntimeError, FileExistsError, OSError)


def _one_line(text: str, width: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@dataclass(frozen=True)
class Choice:
    """What the picker was closed with: `action` is "resume" or "rewind", `key` the session id or the history
    index."""

    action: str
    key: str


def depths(sessions: list[Any]) -> dict[str, int]:
    """How deep each row sits in the tree of forks (its parent must come before it in `sessions`)."""
    found: dict[str, int] = {}
    for session in sessions:
        parent = session.parent
        found[session.session_id] = found[parent] + 1 if parent is not None and parent in found else 0
    return found


class ResumeScreen(ModalScreen[Choice | None]):
    """Choose and handle saved conversations; see the module docstring. `sessions` are `SavedSession` rows in tree
    order (`Runtime.conversations.tree()`); without a `runtime` the list can only be resumed from."""

    CSS_PATH = "resume.tcss"
    BINDINGS = [
        Binding("enter", "choose", "Resume", id="resume.choose", priority=True),
        Binding("ctrl+r", "rename", "Rename", id="resume.rename", priority=True),
        Binding("ctrl+f", "fork", "Fork", id="resume.fork", priority=True),
        Binding("ctrl+e", "export", "Export", id="resume.export", priority=True),
        Binding("ctrl+d", "delete", "Delete", id="resume.delete", priority=True),
        Binding("ctrl+z", "restore", "Undo delete", id="resume.restore", priority=True),
        Binding("escape", "cancel", "Cancel", id="resume.cancel"),
    ]
    HELP = """\
## Resume a conversation

Saved conversations of this project, newest first, whether anton-tui or Anton saved them; a fork sits under the
conversation it was forked from. Type to filter by the title, the first message, the date or the model; **Up**/**Down**
move, **Enter** continues the highlighted conversation (its scratchpads do not come back: they ended with the app).
**Ctrl+R** gives it a title, **Ctrl+F** forks it (a new conversation holding all of it, which you then continue; Anton
can resume it too), **Ctrl+E** exports it to Markdown (a download in a browser tab), **Ctrl+D** deletes it after
asking: it stays in the trash 30 days, and **Ctrl+Z** brings it back. A conversation whose file cannot be read is
listed as broken and left as it is. **Escape** closes this list.
"""

    def __init__(
        self, sessions: list[Any], current: str | None = None, runtime: Runtime | None = None, *, cursor_blink: bool
    ) -> None:
        super().__init__()
        self.sessions = sessions
        self.current = current
        self.runtime = runtime
        self.cursor_blink = cursor_blink
        self.said = ""  # the outcome of the last change, shown in the status line

    def compose(self) -> ComposeResult:
        with Vertical(id="resume-dialog"):
            yield Label(Content("Resume a conversation"), id="resume-title")
            yield Input(placeholder="type to filter", id="resume-filter", compact=True)
            table: DataTable[Any] = DataTable(id="resume-table", cursor_type="row", zebra_stripes=False)
            yield table
            yield Static("", id="resume-status")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Started", "Conversation", "Turns", "Model")
        self.query_one(Input).cursor_blink = self.cursor_blink
        self.fill("")
        self.query_one(Input).focus()

    def matches(self, session: Any, words: list[str]) -> bool:
        parts = [session.date, session.preview, session.title or "", session.model or "", session.session_id]
        haystack = " ".join(parts).lower()
        return all(word in haystack for word in words)

    def preview_width(self) -> int:
        """Room for the first message: the dialog's width less the other columns (date 16, turns 5, model 16)."""
        dialog = min(110, int(self.app.size.width * 0.95)) - 6
        return max(20, min(PREVIEW, dialog - 16 - 5 - 16 - 8))

    def on_resize(self) -> None:
        self.fill(self.query_one(Input).value)

    def describe(self, session: Any, depth: int, width: int) -> Text:
        """The conversation's cell, at most `width` wide: the branch of the tree, the title (or the first message),
        where a fork began."""
        branch = "  " * (depth - 1) + "└ " if depth else ""
        if session.source == "broken":
            return Text.assemble((branch, "dim"), ("broken: ", "bold red"), _one_line(session.broken or "", 50))
        fork = f" · fork at {session.forked_at}" if session.parent and session.forked_at else ""
        mine = "  (this one)" if session.session_id == self.current else ""
        room = max(12, width - len(branch) - len(fork) - len(mine))
        if session.title:
            label = Text(_one_line(session.title, room), style="bold")
        else:
            label = Text(_one_line(session.preview, room) or "(no message)")
        return Text.assemble((branch, "dim"), label, (fork, "dim"), (mine, "dim"))

    def fill(self, query: str) -> None:
        table = self.query_one(DataTable)
        cursor = self._highlighted()
        table.clear()
        words = query.lower().split()
        width = self.preview_width()
        depth = depths(self.sessions)
        shown = [session for session in self.sessions if self.matches(session, words)]
        for session in shown:
            model = _one_line(session.model or "", 16)
            cell = self.describe(session, depth[session.session_id] if not words else 0, width)
            table.add_row(session.date, cell, str(session.turns), model, key=session.session_id)
        keys = [session.session_id for session in shown]
        if cursor in keys:
            table.move_cursor(row=keys.index(cursor), animate=False)
        total = len(self.sessions)
        status = f"{len(shown)} of {total}" if words else f"{total} saved"
        hints = "Enter resumes · Ctrl+R renames · Ctrl+F forks · Ctrl+E exports · Ctrl+D deletes"
        self.query_one("#resume-status", Static).update(
            Content("\n".join(filter(None, [self.said, f"{status} · {hints}"])))
        )

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

    def _session(self, key: str) -> Any:
        return next(session for session in self.sessions if session.session_id == key)

    def action_choose(self) -> None:
        key = self._highlighted()
        if key is not None:
            self.dismiss(Choice("resume", key))

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(Choice("resume", str(event.row_key.value)))

    # ---- changes, through the runtime --------------------------------------------------------------------------

    def action_rename(self) -> None:
        self._change("rename")

    def action_fork(self) -> None:
        self._change("fork")

    def action_export(self) -> None:
        self._change("export")

    def action_delete(self) -> None:
        self._change("delete")

    def action_restore(self) -> None:
        self._change("restore")

    @work(group="resume-change", exclusive=True, exit_on_error=False)
    async def _change(self, what: str) -> None:
        runtime, key = self.runtime, self._highlighted()
        if runtime is None:
            self.notify("Only resuming is possible here.", severity="warning")
            return
        if key is None and what != "restore":
            return
        try:
            said = await self._apply(runtime, what, key or "")
        except CHANGE_FAILED as exc:
            self.notify(str(exc), title=f"Not done: {what}", severity="error", timeout=8)
            return
        if said is None:
            return
        self.said = said
        self.sessions = await runtime.conversations.tree()
        query = self.query_one(Input)
        if what == "delete":
            query.value = ""  # the row it filtered for is gone: the whole list again
        self.fill(query.value)

    async def _apply(self, runtime: Runtime, what: str, key: str) -> str | None:
        """Do one change; the line that says what happened (None: nothing was done)."""
        from anton_tui.tui.screens.confirm import ConfirmScreen
        from anton_tui.tui.screens.edit_entry import EditEntryScreen
        from anton_tui.tui.served import deliver_text_file

        conversations = runtime.conversations
        if what == "rename":
            current = self._session(key).title or ""
            title = await self.app.push_screen_wait(EditEntryScreen(current, title="A title for this conversation"))
            if title is None:
                return None
            about = await conversations.set_title(title, key)
            return f"Renamed {key}: {about.title}."
        if what == "fork":
            fork = await conversations.fork(None, key)
            self.dismiss(Choice("resume", fork.session_id))  # the fork is continued; the original stays as it was
            return None
        if what == "export":
            export = await conversations.export(key)
            if deliver_text_file(self.app, export.text, export.name) is not None:
                return f"Exported {key}: your browser downloads {export.name}."
            path = await conversations.save_export(export)
            return f"Exported {key} to {path}."
        if what == "delete":
            question = f"Delete the conversation {key}? It stays in the trash 30 days (Ctrl+Z here brings it back)."
            if not await self.app.push_screen_wait(ConfirmScreen(question, danger=True)):
                return None
            trashed = await conversations.delete(key)
            return f"Deleted {key}; it is kept until {trashed.expires:%Y-%m-%d} · Ctrl+Z brings it back."
        restored = await conversations.restore()
        return f"Restored {restored}."


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
