"""Find in the conversation (Ctrl+F): a search box under the chat that steps through every match, newest first.

Matches on screen are scrolled to and highlighted (the whole message); matches in parts of the conversation that are
no longer on screen (pruned from a long chat, or earlier than a resumed conversation's last entries) are shown in the
bar as an excerpt, since their blocks are gone. **Enter** or **Down** goes to the next (older) match, **Up** to the
newer one, **Escape** closes the bar.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from anton_tui.agent.find import find_in_transcript, pattern
from anton_tui.tui.widgets.chat import ChatView, Notice, UserMessage

CURRENT = "-find-current"


@dataclass(frozen=True)
class Match:
    """A match: a block on screen (`block`), or an earlier entry no longer on screen (`excerpt`)."""

    block: Widget | None = None
    excerpt: str = ""


def block_text(block: Widget) -> str:
    """The words a chat block shows, for searching."""
    from anton_tui.tui.widgets.answer import AssistantMessage  # Markdown: kept off the first frame
    from anton_tui.tui.widgets.tool_block import ToolCallBlock

    if isinstance(block, UserMessage):
        return block.text
    if isinstance(block, AssistantMessage):
        return block.source
    if isinstance(block, ToolCallBlock):
        return f"{block.tool_name} {block.summary}"
    if isinstance(block, Notice):
        return str(block.render())
    return ""


class FindBar(Horizontal):
    """The search box; `search(entries)` is given the whole transcript when the query changes."""

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

    def __init__(self, chat: ChatView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chat = chat
        self.matches: list[Match] = []
        self.current = -1
        self.entries: list = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in the conversation", compact=True, id="find-input")
        yield Static("", id="find-status", markup=False)

    def open(self, entries: list) -> None:
        self.entries = entries
        self.add_class("-open")
        box = self.query_one(Input)
        box.cursor_blink = bool(getattr(self.app, "cursor_blink", True))
        self.call_after_refresh(box.focus)  # once the bar is displayed: a hidden widget cannot take the focus
        if box.value:
            self.search(box.value)

    @on(Input.Changed, "#find-input")
    def _changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    def search(self, query: str) -> None:
        """Every match, oldest first: earlier entries no longer on screen, then the blocks on screen."""
        compiled = pattern(query)
        blocks = list(self.chat.blocks) if compiled is not None else []
        users_on_screen = sum(isinstance(block, UserMessage) for block in blocks)
        user_entries = [n for n, entry in enumerate(self.entries) if entry.kind == "user"]
        first_shown = user_entries[-users_on_screen] if 0 < users_on_screen <= len(user_entries) else len(self.entries)
        earlier = find_in_transcript(self.entries, query, before=first_shown) if compiled is not None else []
        on_screen = [block for block in blocks if compiled is not None and compiled.search(block_text(block))]
        self.matches = [Match(excerpt=found.excerpt) for found in earlier] + [Match(block=b) for b in on_screen]
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
        where = f"{self.current + 1} of {len(self.matches)}"
        if match.block is not None and match.block.is_mounted:
            match.block.add_class(CURRENT)
            self.chat.release_anchor()
            self.chat.scroll_to_widget(match.block, animate=False, top=True)
            status.update(Content(where))
        else:
            status.update(Content(f"{where} · earlier, no longer on screen: {match.excerpt}"))

    def action_close(self) -> None:
        for block in self.chat.query(f".{CURRENT}"):
            block.remove_class(CURRENT)
        self.remove_class("-open")
        self.post_message(self.Closed())
