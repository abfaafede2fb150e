"""A small Textual app for the serving tests: it says it is ready and hands the browser a text file to download
through `deliver_text_file`, as the app's export does. Run by textual-serve as `python tests/serve_tiny_app.py`."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from anton_tui.tui.served import deliver_text_file

READY = "tiny app ready"
EXPORTED = "Exported conversation ✓\nsecond line\n"
FILE_NAME = "my export?.txt"


class TinyApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static(READY)

    def on_mount(self) -> None:
        deliver_text_file(self, EXPORTED, FILE_NAME)


if __name__ == "__main__":
    TinyApp().run()
