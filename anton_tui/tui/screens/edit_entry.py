"""A dialog to change the text of one memory entry; its result is the new text, or None when cancelled.

Entries are single lines, so Enter saves; the engine joins any pasted line breaks with spaces.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, TextArea


class EntryEditor(TextArea):
    """A wrapping text box where Enter submits instead of starting a new line."""

    class Submitted(Message):
        pass

    async def on_key(self, event: events.Key) -> None:
        """Runs before TextArea's own key handling, which `prevent_default` skips."""
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted())


class EditEntryScreen(ModalScreen[str | None]):
    """Edit one entry's text. Enter or Ctrl+S saves, Escape cancels; an empty text is refused."""

    CSS_PATH = "edit_entry.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="edit_entry.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="edit_entry.cancel"),
    ]
    HELP = """\
## Edit entry

Change the text, then press `Enter` (or `Ctrl+S`) to save, or `Escape` to leave it as it was.
Metadata (topic, confidence, source) is kept; the date becomes today.
"""

    def __init__(self, text: str, *, title: str = "Edit entry") -> None:
        super().__init__()
        self.original = text
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-dialog"):
            yield Label(Content(self.title_text), id="edit-title")
            yield EntryEditor(self.original, soft_wrap=True, show_line_numbers=False, id="edit-text")
            yield Static(Content("Enter or Ctrl+S saves · Escape cancels"), id="edit-hint")
            with Horizontal(id="edit-buttons"):
                yield Button("Save", variant="primary", id="edit-save")
                yield Button("Cancel", id="edit-cancel")

    def on_mount(self) -> None:
        editor = self.query_one(EntryEditor)
        editor.focus()
        editor.move_cursor(editor.document.end)

    @property
    def text(self) -> str:
        return self.query_one(EntryEditor).text

    @on(EntryEditor.Submitted)
    def _submitted(self) -> None:
        self.action_save()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "edit-save":
            self.action_save()
        else:
            self.action_cancel()

    def action_save(self) -> None:
        text = self.text.strip()
        if not text:
            self.notify("An entry cannot be empty; delete it instead.", severity="warning")
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
