"""The one-line pane switcher of a narrow terminal: names the panes, marks the one shown, and says which key switches.

Below 100 columns the main screen shows one pane at a time (chat, scratchpad or memory inspector) across the whole
width; this bar is how the user knows the others exist. Clicking a name shows that pane.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

PANES = (("conversation", "Chat"), ("scratchpad", "Scratchpad"), ("inspector", "Memory"))


class PaneBar(Static):
    """`show(pane)` marks the pane on screen; posts `PaneBar.Chosen` when a name is clicked."""

    DEFAULT_CSS = """
    PaneBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    class Chosen(Message):
        def __init__(self, pane: str) -> None:
            super().__init__()
            self.pane = pane

    def __init__(self, key: str = "f4", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.key = key
        self.current = PANES[0][0]
        self.news: set[str] = set()  # panes that changed while another one was shown
        self._spans: list[tuple[int, int, str]] = []

    def on_mount(self) -> None:
        self.show(self.current)

    def mark_news(self, pane: str) -> None:
        """Something happened in `pane` while it is not shown: a dot after its name says so until it is."""
        if pane != self.current and pane not in self.news:
            self.news.add(pane)
            self.show(self.current)

    def show(self, pane: str, key: str | None = None) -> None:
        self.current = pane
        self.news.discard(pane)
        self.key = key or self.key
        parts: list[Content] = []
        self._spans = []
        offset = 0
        for name, label in PANES:
            text = f" {label}{' •' if name in self.news else ''} "
            style = "reverse bold" if name == pane else ""
            parts.append(Content.styled(text, style) if style else Content(text))
            self._spans.append((offset, offset + len(text), name))
            offset += len(text) + 1
            parts.append(Content(" "))
        parts.append(Content.styled(f" {self.key} next pane", "dim"))
        self.update(Content("").join(parts))

    def on_click(self, event: events.Click) -> None:
        x = event.x - 1  # the left padding
        for start, end, name in self._spans:
            if start <= x < end:
                self.post_message(self.Chosen(name))
                return
