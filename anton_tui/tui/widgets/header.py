"""The top line: which workspace, which model, which memory mode, whether Anton is working, tokens used so far."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from anton_tui.tui.css import stylesheet


def format_tokens(count: int) -> str:
    if count < 1_000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1_000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def display_path(path: Path, home: Path | None = None) -> str:
    """The workspace path as the user would type it (`~/…` under their home folder)."""
    home = Path.home() if home is None else home
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


class AntonHeader(Horizontal):
    """The header line; the screen calls `set_usage` and `set_status` as the turn goes."""

    DEFAULT_CSS = stylesheet(__file__, "header.tcss")
    SCOPED_CSS = False  # the rules style the widgets inside it too, as written

    HELP = """\
## Header

Shows the workspace (project folder), the model that answers and its provider, the memory mode (autopilot saves
memories on its own, copilot asks first, off saves none), what Anton is doing, and the tokens used in this session.
When memory is shared through a git remote, it also shows the last sync and how it went.
"""

    def __init__(
        self,
        *,
        version: str,
        workspace: Path,
        provider: str,
        model: str,
        memory_mode: str,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.version = version
        self.workspace = workspace
        self.provider = provider
        self.model = model
        self.memory_mode = memory_mode

    def compose(self) -> ComposeResult:
        yield Static(Content.from_markup("[b]anton[/b] $version", version=self.version), id="brand")
        yield Static(Content(display_path(self.workspace)), id="workspace")
        yield Static(Content(f"{self.provider}/"), id="provider")
        yield Static(Content(self.model), id="model")
        yield Static(Content(f"memory {self.memory_mode}"), id="memory-mode")
        held = Static(Content(""), id="held")
        held.display = False  # shown while memories wait for review
        yield held
        synced = Static(Content(""), id="sync")
        synced.display = False  # shown once shared memory has synced (or failed to)
        yield synced
        yield Static(Content("ready"), id="turn-status")
        yield Static(Content("0 in · 0 out"), id="tokens")

    def set_usage(self, input_tokens: int, output_tokens: int) -> None:
        self.query_one("#tokens", Static).update(
            Content(f"{format_tokens(input_tokens)} in · {format_tokens(output_tokens)} out")
        )

    def set_held(self, count: int) -> None:
        """The badge of memories held for review (hidden at 0)."""
        badge = self.query_one("#held", Static)
        badge.display = count > 0
        badge.update(Content(f"⚠ {count} held"))
        badge.tooltip = f"{count} learned memories wait for your review (they are asked after the next turn)"

    def set_sync(self, line: str, ok: bool, waiting: int = 0) -> None:
        """The last sync of shared memory and how it went (`waiting`: merge parts to resolve in the History tab)."""
        badge = self.query_one("#sync", Static)
        badge.display = True
        badge.update(Content(line))
        badge.set_class(not ok, "-failed")
        badge.tooltip = f"{waiting} merge parts wait in the History tab" if waiting else "last sync of shared memory"

    def set_model(self, provider: str, model: str, memory_mode: str) -> None:
        """After /setup: the new provider, model and memory mode."""
        self.provider, self.model, self.memory_mode = provider, model, memory_mode
        self.query_one("#provider", Static).update(Content(f"{provider}/"))
        self.query_one("#model", Static).update(Content(model))
        self.query_one("#memory-mode", Static).update(Content(f"memory {memory_mode}"))

    def set_status(self, text: str, *, busy: bool) -> None:
        status = self.query_one("#turn-status", Static)
        status.update(Content(text))
        status.set_class(busy, "-busy")
