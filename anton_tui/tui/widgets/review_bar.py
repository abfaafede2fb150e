"""Memories waiting for the user's review (copilot mode, or held by the trust gate): the line above the prompt that
counts them, and the questions themselves, oldest first.

A question arrives as a `MemoryConfirmationNeeded` event; the engine waits on its future. The screen opens the review
dialog at once only while the user is not writing in the prompt; otherwise the question waits here, and the line says
how to open it (Ctrl+Y, a click on the line, or sending the next message, which opens it first). So a dialog never
takes keys that were meant for the prompt.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from anton_tui.agent.events import MemoryConfirmationNeeded


class ReviewBar(Static):
    """The questions waiting for an answer, and one line saying so (hidden while none waits)."""

    DEFAULT_CSS = """
    ReviewBar {
        height: 1;
        padding: 0 1;
        background: $boost;
        color: $text-warning;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    ReviewBar.-waiting {
        display: block;
    }
    """

    class OpenRequested(Message):
        """The user clicked the line: open the oldest question."""

    def __init__(self, *, review_key: str = "Ctrl+Y", id: str | None = None) -> None:
        """`review_key` is the key that opens the review, as the footer shows it."""
        super().__init__(id=id)
        self.review_key = review_key
        self._waiting: list[MemoryConfirmationNeeded] = []

    def add(self, question: MemoryConfirmationNeeded) -> None:
        """Keep `question` for later; one it repeats (asked again after a cancelled turn) takes its place."""
        asked = set(question.engrams)
        for old in [old for old in self._waiting if set(old.engrams) <= asked]:
            self._waiting.remove(old)
            if not old.future.done():
                old.future.cancel()  # nothing waits on it any more: its memories are asked about again
        self._waiting.append(question)
        self._show()

    def take(self) -> MemoryConfirmationNeeded | None:
        """The oldest question still waiting for its answer, out of the queue (None when there is none)."""
        while self._waiting:
            question = self._waiting.pop(0)
            if not question.future.done():
                self._show()
                return question
        self._show()
        return None

    @property
    def waiting(self) -> int:
        """How many memories wait for a review here."""
        return sum(len(question.engrams) for question in self._waiting if not question.future.done())

    def _show(self) -> None:
        count = self.waiting
        self.set_class(count > 0, "-waiting")
        if count:
            what = "1 memory waits" if count == 1 else f"{count} memories wait"
            self.update(
                Content.assemble(
                    (f"⚑ {what} for your review", "bold"),
                    f" · {self.review_key} reviews now · sending your next message opens the review first",
                )
            )

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.OpenRequested())
