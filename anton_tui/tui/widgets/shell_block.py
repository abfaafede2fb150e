"""One `!` command in the chat: the command line, its output as it arrives, and how it ended.

The block shows the last `SHOWN_LINES` lines of the output (the agent's copy is kept by the runtime); the last line
says "running…", then the exit code or "stopped", and how long it took.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from anton_tui.tui.css import stylesheet

SHOWN_LINES = 30
KEPT_CHARS = 20_000


class ShellBlock(Vertical):
    """A shell command run from the prompt, with live output."""

    DEFAULT_CSS = stylesheet(__file__, "shell_block.tcss")

    def __init__(self, command: str) -> None:
        super().__init__(classes="chat-block")
        self.command = command
        self.output = ""
        self.lines = 0  # newlines received so far
        self.exit_code: int | None = None
        self.running = True

    def compose(self) -> ComposeResult:
        yield Static(Content.from_markup("[b]$[/b] $command", command=self.command), classes="shell-command")
        yield Static("", classes="shell-output", markup=False)
        yield Static(Content.from_markup("[$text-muted]running…  (Escape stops it)[/]"), classes="shell-status")

    def append(self, text: str) -> None:
        self.output = (self.output + text)[-KEPT_CHARS:]
        self.lines += text.count("\n")
        lines = self.output.rstrip("\n").split("\n")
        shown = "\n".join(lines[-SHOWN_LINES:])
        hidden = self.lines + (0 if self.output.endswith("\n") else 1) - min(len(lines), SHOWN_LINES)
        if hidden > 0:
            shown = f"[… {hidden:,} earlier lines not shown]\n{shown}"
        output = self.query_one(".shell-output", Static)
        output.update(Content(shown))
        output.display = bool(shown)

    def finish(self, exit_code: int | None, *, cancelled: bool, duration: float) -> None:
        self.running = False
        self.exit_code = exit_code
        status = self.query_one(".shell-status", Static)
        if cancelled:
            status.update(Content.from_markup("[$warning]stopped[/] [$text-muted](Escape)[/]"))
            self.add_class("-stopped")
        elif exit_code == 0:
            status.update(Content.from_markup("[$success]exit 0[/] [$text-muted]in $t s[/]", t=f"{duration:.1f}"))
        else:
            status.update(
                Content.from_markup("[$error]exit $code[/] [$text-muted]in $t s[/]", code=str(exit_code),
                                    t=f"{duration:.1f}")
            )  # fmt: skip
            self.add_class("-failed")

    @property
    def status_text(self) -> str:
        return str(self.query_one(".shell-status", Static).render())

    def on_mount(self) -> None:
        self.query_one(".shell-output", Static).display = False
