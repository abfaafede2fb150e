"""Find in the conversation (Ctrl+F): a search box under the chat that steps through every match, newest first.

Every block of the conversation is searched, mounted or not: a match is scrolled to and highlighted (the whole
message), and one in a part of the conversation that is not mounted (earlier than what the chat shows, after
scrolling back, or of a resumed conversation) is first brought back into the chat. **Enter** or **Down** goes to the
next (older) match, **Up** to the newer one, **Escape** closes the bar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from anton_tui.tui.widgets.chat import ChatView
from anton_tui.tui.widgets.chat_window import Slot

CURRENT = "-find-current"


def find_pattern(query: str) -> re.Pattern[str] | None:
    """The query as a case-blind pattern where spaces match any whitespace (a phrase is found across a line break);
    None for a blank query."""
    words = query.split()
    if not words:
        return None
    return re.compile(r"\s+".join(re.escape(word) for word in words), re.IGNORECASE)


@dataclass(frozen=True)
class Match:
    """A block holding the query: its place in the conversation."""

    slot: Slot

    @property
    def block(self) -> Widget | None:
        """Its widget, while it is mounted."""
        return self.slot.widget


class FindBar(Horizontal):
    """The search box over `chat`; `search(query)` runs when the query changes."""

    DEFAULT_CSS = """
    FindBar { height: 1; margin: 0 1; display: none; }
    FindBar.-open { display: block; }
    FindBar > Input { width: 30; }
    FindBar > #find-status { width: 1fr; padding: 0 1; color: $text-muted; }
    ChatView > .-find-current { background: $accent 20%; }
    """
    SCOPED_CSS = False  # the highlight rule styles chat blocks
    BINDINGS = [
        Binding("enter,down", "step(1)", "Older match", id="find.older", priority=True),
        Binding("up", "step(-1)", "Newer match", id="find.newer", priority=True),
        Binding("escape", "close", "Close find", id="find.close", priority=True),
    ]
    HELP = __doc__

    class Closed(Message):
        """The bar was closed (the prompt takes the focus back)."""

    def __init__(self, chat: ChatView, *, cursor_blink: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chat = chat
        self.cursor_blink = cursor_blink
        self.matches: list[Match] = []
        self.current = -1

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in the conversation", compact=True, id="find-input")
        yield Static("", id="find-status", markup=False)

    def open(self, entries: list | None = None) -> None:
        """Open the bar. (`entries`, the session's transcript, is not needed: the chat holds every block it showed.)"""
        self.add_class("-open")
        box = self.query_one(Input)
        box.cursor_blink = self.cursor_blink
        self.call_after_refresh(box.focus)  # once the bar is displayed: a hidden widget cannot take the focus
        if box.value:
            self.search(box.value)

    @on(Input.Changed, "#find-input")
    def _changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    def search(self, query: str) -> None:
        """Every match in the conversation, oldest first; the newest is shown."""
        compiled = find_pattern(query)
        window = self.chat.window
        slots = window.slots if compiled is not None else []
        self.matches = [Match(slot) for slot in slots if compiled is not None and compiled.search(window.words(slot))]
        self.current = len(self.matches) - 1
        self.show()

    def action_step(self, direction: int) -> None:
        if self.matches:
            self.current = (self.current - direction) % len(self.matches)
            self.show()

    def show(self) -> None:
        for block in self.chat.query(f".{CURRENT}"):
            block.remove_class(CURRENT)
        status = self.query_one("#find-status", Static)
        if not self.matches:
            query = self.query_one(Input).value.strip()
            status.update(Content("no match" if query else ""))
            return
        match = self.matches[self.current]
        status.update(Content(f"{self.current + 1} of {len(self.matches)}"))
        if match.block is not None and match.block.is_mounted:
            self._highlight(match.block)
        else:
            self.call_later(self._bring_back, match)

    async def _bring_back(self, match: Match) -> None:
        block = await self.chat.reveal(match.slot)
        if block is not None and self.matches and self.matches[self.current] is match:
            self._highlight(block)

    def _highlight(self, block: Widget) -> None:
        block.add_class(CURRENT)
        self.chat.release_anchor()
        self.chat.call_after_refresh(self.chat.scroll_to_widget, block, animate=False, top=True)

    def action_close(self) -> None:
        for block in self.chat.query(f".{CURRENT}"):
            block.remove_class(CURRENT)
        self.remove_class("-open")
        self.post_message(self.Closed())
