"""The top line: which workspace, which model, which memory mode, whether Anton is working, tokens used so far."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from anton_tui.tui.css import stylesheet
from anton_tui.tui.widgets.header_fit import SHORT_CONTEXT, STATUS_WIDEST, context_texts, plan_drops


class UsageShown(Protocol):
    """What the status line shows after a request (the runtime's `UsageFigures`)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cost_label(self) -> str: ...
    @property
    def context_tokens(self) -> int: ...
    @property
    def context_window(self) -> int: ...


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
After the first answer it also shows the estimated cost at list prices (`~$0.12`; only for models with a known
price) and how much of the model's context window the last request filled (`ctx 12k/200k`). In a narrow terminal the
less important parts are left out.
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
        self._dropped: set[str] = set()  # parts `fit` left out
        self._context_texts = ("", "")

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
        for part in ("cost", "context"):
            yield Static(Content(""), id=part, classes="-blank")  # shown after the first answer

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit)  # after the screen's width classes have been applied

    def show_usage(self, figures: UsageShown) -> None:
        """The status line after a request."""
        self.set_usage(figures.input_tokens, figures.output_tokens)
        cost = self.query_one("#cost", Static)
        cost.update(Content(figures.cost_label))
        cost.set_class(not figures.cost_label, "-blank")
        cost.tooltip = "Estimated from the providers' list prices (no caching or batch discounts)"
        self._context_texts = context_texts(figures.context_tokens, figures.context_window)
        context = self.query_one("#context", Static)
        context.remove_class("-blank")
        context.tooltip = (
            f"The last request used {figures.context_tokens:,} of the model's {figures.context_window:,} tokens"
        )
        self.fit()

    def fit(self) -> None:
        """Leave out what does not fit on one line (see `header_fit`)."""
        width = self.size.width
        if not width:
            return
        long, short = self._context_texts
        context = self.query_one("#context", Static)
        context.update(Content(long))
        widths, parts = {}, {}
        for part in self.query_children(Static):
            dropped = part.styles.inline.display == "none" and part.id in self._dropped
            if part.id == "workspace" or part.has_class("-blank") or not (part.display or dropped):
                continue  # hidden for another reason (a narrow screen, a badge at 0), or nothing to say yet
            shown = part.visual  # every part is a Static of `Content`
            length = STATUS_WIDEST if part.id == "turn-status" else 0
            text_width = shown.cell_length if isinstance(shown, Content) else 0
            padding = part.styles.padding
            widths[str(part.id)] = max(length, text_width) + padding.left + padding.right
            parts[str(part.id)] = part
        drops = plan_drops(width, widths, len(long) - len(short))
        for part_id, part in parts.items():  # left out by an inline style, so the stylesheet's own rules still hold
            if part_id in drops:
                part.styles.display = "none"
            elif part_id in self._dropped:
                part.styles.inline.clear_rule("display")
                self.refresh(layout=True)
        self._dropped = drops
        if SHORT_CONTEXT in drops:
            context.update(Content(short))

    def set_usage(self, input_tokens: int, output_tokens: int) -> None:
        self.query_one("#tokens", Static).update(
            Content(f"{format_tokens(input_tokens)} in · {format_tokens(output_tokens)} out")
        )
        self.fit()

    def set_held(self, count: int) -> None:
        """The badge of memories held for review (hidden at 0)."""
        badge = self.query_one("#held", Static)
        badge.display = count > 0
        badge.update(Content(f"⚠ {count} held"))
        badge.tooltip = f"{count} learned memories wait for your review (they are asked after the next turn)"
        self.fit()

    def set_sync(self, line: str, ok: bool, waiting: int = 0) -> None:
        """The last sync of shared memory and how it went (`waiting`: merge parts to resolve in the History tab)."""
        badge = self.query_one("#sync", Static)
        badge.display = True
        badge.update(Content(line))
        badge.set_class(not ok, "-failed")
        badge.tooltip = f"{waiting} merge parts wait in the History tab" if waiting else "last sync of shared memory"
        self.fit()

    def set_model(self, provider: str, model: str, memory_mode: str) -> None:
        """After /setup: the new provider, model and memory mode."""
        self.provider, self.model, self.memory_mode = provider, model, memory_mode
        self.query_one("#provider", Static).update(Content(f"{provider}/"))
        self.query_one("#model", Static).update(Content(model))
        self.query_one("#memory-mode", Static).update(Content(f"memory {memory_mode}"))
        self.fit()

    def set_status(self, text: str, *, busy: bool) -> None:
        status = self.query_one("#turn-status", Static)
        status.update(Content(text))
        status.set_class(busy, "-busy")
