"""A small form of text fields in a dialog, for the skills screen's new and rename: the fields, a check that names
what is wrong (shown under them, nothing done; it may ask the Runtime, so it is awaited), and OK or Cancel."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class FormModal(ModalScreen[dict[str, str] | None]):
    """A small form of text fields; `await check(values)` gives a problem to show, or None to accept."""

    CSS_PATH = "skills.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="skills.form-cancel")]

    def __init__(
        self,
        title: str,
        fields: list[tuple[str, str, str]],
        check: Callable[[dict[str, str]], Awaitable[str | None]],
        *,
        cursor_blink: bool,
        submit: str = "OK",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields  # (id, label, initial value)
        self.check = check
        self.cursor_blink = cursor_blink
        self.submit_label = submit

    def compose(self) -> ComposeResult:
        with Vertical(id="form-dialog"):
            yield Label(Content(self.title_text), id="form-title")
            for field_id, label, value in self.fields:
                yield Label(Content(label), classes="form-label")
                field = Input(value, id=field_id, compact=True)
                field.cursor_blink = self.cursor_blink
                yield field
            yield Static("", id="form-error", markup=False)
            with Horizontal(id="form-buttons"):
                yield Button(self.submit_label, variant="primary", id="form-ok")
                yield Button("Cancel", id="form-cancel")

    def values(self) -> dict[str, str]:
        return {field_id: self.query_one(f"#{field_id}", Input).value.strip() for field_id, _, _ in self.fields}

    @on(Input.Submitted)
    @on(Button.Pressed, "#form-ok")
    async def _submit(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        values = self.values()
        problem = await self.check(values)
        if problem:
            self.query_one("#form-error", Static).update(problem)
            self.notify(problem, title="Not saved", severity="error")
            return
        self.dismiss(values)

    @on(Button.Pressed, "#form-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
