"""The screen shown when a setting stops the start: which variable, its value, and the file it came from.

The app has painted its first frame from the raw settings; building the engine then found a value that does not
validate. This screen says what is wrong and offers to open the setup (without the bad value) or to quit with exit
code 2, the code a script sees for a bad setting.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from anton_tui.settings_sources import ENVIRONMENT, SettingsError


class SettingsErrorScreen(ModalScreen[bool]):
    """A bad setting: dismissed with True to open the setup, False to quit."""

    CSS_PATH = "settings_error.tcss"
    AUTO_FOCUS = "#settings-error-fix"
    BINDINGS = [
        Binding("s", "choose(True)", "Open setup", id="settings-error.setup"),
        Binding("q,escape", "choose(False)", "Quit", id="settings-error.quit"),
    ]
    HELP = """\
## A setting is not valid

Anton cannot start with the value shown. **Open setup** (`s`) shows the setup screen without that value; what you
save there goes to the project's `.anton/.env`, and the app starts again. **Quit** (`q` or `Escape`) leaves with exit
code 2; fix the value in the file named and start again. A value set in the environment wins over both files, so
unset it in your shell.
"""

    def __init__(self, error: SettingsError) -> None:
        super().__init__()
        self.error = error

    def compose(self) -> ComposeResult:
        error = self.error
        where = "your shell's environment" if error.source == ENVIRONMENT else error.source
        with Vertical(id="settings-error-dialog"):
            yield Label(Content("A setting is not valid"), id="settings-error-title")
            yield Static(
                Content.assemble(("Variable  ", "dim"), (error.variable, "bold")), id="settings-error-variable"
            )
            yield Static(Content.assemble(("Value     ", "dim"), error.value), id="settings-error-value")
            yield Static(Content.assemble(("From      ", "dim"), where), id="settings-error-source")
            yield Static(Content.assemble(("Expected  ", "dim"), error.allowed), id="settings-error-allowed")
            if error.source == ENVIRONMENT:
                note = f"Unset {error.variable} in your shell, or the setup's value will not be used."
                yield Static(Content(note), id="settings-error-note")
            with Horizontal(id="settings-error-buttons"):
                yield Button("Open setup", variant="primary", id="settings-error-fix")
                yield Button("Quit", id="settings-error-quit")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "settings-error-fix")

    def action_choose(self, fix: bool) -> None:
        self.dismiss(fix)
