"""A yes/no question in a small dialog; the screen's result is True for yes and False for no (Escape is no)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask before doing something. `danger=True` styles the confirm button as destructive and focuses "No" first."""

    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]
    HELP = """\
## Confirm

Press `y` (or the confirm button) to go ahead, `n` or `Escape` to leave everything as it is.
"""

    def __init__(
        self, question: str, detail: str = "", *, confirm: str = "Yes", cancel: str = "No", danger: bool = False
    ) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.confirm_label = confirm
        self.cancel_label = cancel
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Label(Content(self.question), id="confirm-question")
            if self.detail:
                with VerticalScroll(id="confirm-detail"):  # Tab reaches it; arrows and Page keys scroll it
                    yield Static(Content(self.detail))
            with Horizontal(id="confirm-buttons"):
                yield Button(self.confirm_label, variant="error" if self.danger else "primary", id="confirm-yes")
                yield Button(self.cancel_label, id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no" if self.danger else "#confirm-yes", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
