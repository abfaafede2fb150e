"""One scratchpad cell as it runs: what it is for, its code, its output as it arrives, and how it ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Log, Static

from anton_tui.tui.widgets.code import highlighted_python

if TYPE_CHECKING:
    from anton_tui.scratchpad.cell import Cell

OUTPUT_MAX_LINES = 400
OUTPUT_MAX_CHARS = 200_000
ERROR_MAX_CHARS = 3_000

_STATUS_LOOK = {
    "pending": ("○", "$text-muted"),
    "running": ("●", "$text-warning"),
    "ok": ("✓", "$text-success"),
    "error": ("✗", "$text-error"),
    "killed": ("■", "$text-error"),
    "cancelled": ("■", "$text-warning"),
}


class CellView(Vertical, can_focus=True):
    """A cell in a pad's tab; the pane feeds it the cell's live events."""

    def __init__(self, pad: str, index: int, description: str, code: str) -> None:
        super().__init__(classes="cell -running")
        self.pad = pad
        self.index = index
        self.description = description
        self.code = code
        self.status = "running"
        self.seconds: float | None = None
        self.shown_chars = 0
        self._newline_owed = False  # a trailing newline is written with the next chunk, so no blank last line shows
        self.streamed = {"stdout": False, "stderr": False}
        self.hidden: tuple[str, ...] = ()  # secrets the model did not see in this output (it is shown raw here)
        self._header = Static(classes="cell-header")
        self._progress = Static(classes="cell-progress")
        self._output = Log(max_lines=OUTPUT_MAX_LINES, classes="cell-output")
        self._error = Static(classes="cell-error")

    def compose(self) -> ComposeResult:
        yield self._header
        yield Static(highlighted_python(self.code), classes="cell-code")
        yield self._progress
        yield self._output
        yield self._error

    def on_mount(self) -> None:
        self._progress.display = False
        self._output.display = False
        self._error.display = False
        self._render_header()

    def _render_header(self) -> None:
        icon, style = _STATUS_LOOK.get(self.status, ("?", "$text-muted"))
        timing = "" if self.seconds is None else f"{self.seconds:.1f}s"
        count = len(self.hidden)
        raw = f" raw output: {count} secret{'s' if count > 1 else ''} hidden from the model" if count else ""
        self._header.update(
            Content.from_markup(
                f"[{style}]$icon $status[/] [b]Cell $index[/b] $description [$text-muted]$timing[/]"
                "[$text-warning]$raw[/]",
                icon=icon,
                status=self.status,
                index=str(self.index),
                description=self.description,
                timing=timing,
                raw=raw,
            )
        )

    def append_output(self, stream: str, text: str) -> None:
        self.streamed[stream] = True
        self._write(text)

    def _write(self, text: str) -> None:
        if not text or self.shown_chars >= OUTPUT_MAX_CHARS:
            return
        room = OUTPUT_MAX_CHARS - self.shown_chars
        if len(text) > room:
            text = text[:room] + "\n… further output is not shown here (the cell keeps it)\n"
        self.shown_chars += len(text)
        if self._newline_owed:
            text = "\n" + text
        self._newline_owed = text.endswith("\n")
        self._output.display = True
        self._output.write(text.removesuffix("\n"))

    def set_progress(self, message: str) -> None:
        self._progress.update(Content.from_markup("[$text-accent]↻[/] $message", message=message))
        self._progress.display = True

    def set_elapsed(self, seconds: float) -> None:
        self.seconds = seconds
        self._render_header()

    def finish(self, cell: Cell) -> None:
        self.set_status(cell.status, cell.duration)
        if not self.streamed["stdout"]:
            self._write(cell.stdout)
        if not self.streamed["stderr"]:
            self._write(cell.stderr)
        if cell.error:
            error = cell.error if len(cell.error) <= ERROR_MAX_CHARS else "…" + cell.error[-ERROR_MAX_CHARS:]
            self._error.update(Content(error.rstrip()))
            self._error.display = True

    def mark_hidden(self, kinds: tuple[str, ...]) -> None:
        self.hidden = kinds
        self._render_header()

    def set_status(self, status: str, seconds: float | None = None) -> None:
        self.status = status
        if seconds is not None:
            self.seconds = seconds
        self.set_class(status == "running", "-running")
        self.set_class(status in ("error", "killed"), "-failed")
        self._render_header()

    @property
    def output_text(self) -> str:
        return "\n".join(self._output.lines)
