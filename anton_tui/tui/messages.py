"""Textual messages that carry engine output into the UI.

Widget-specific messages (a submitted prompt, a retry request, a scratchpad action) are declared on the widget that
posts them; this module holds the ones posted by background workers.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from anton_tui.agent.events import AssistantTextDelta, SessionEvent


class SessionEventMessage(Message, bubble=False):
    """One engine event from the running turn, posted by the turn worker in the order the engine yielded it.

    Streamed text that arrives while the screen has not yet taken the last text message is added to that message
    (`take_more_text`): a fast model sends hundreds of pieces a second, and one message each would keep the screen's
    queue from ever running dry, which is when it paints."""

    def __init__(self, event: SessionEvent) -> None:
        super().__init__()
        self.event = event
        self.taken = False

    def take_more_text(self, text: str) -> bool:
        """Add streamed `text` to this not-yet-handled text message; False when that is no longer possible."""
        if self.taken or not isinstance(self.event, AssistantTextDelta):
            return False
        self.event = AssistantTextDelta(self.event.text + text)
        return True

    def take(self) -> SessionEvent:
        """The event, for the handler: nothing more is added once it is taken."""
        self.taken = True
        return self.event


class ScratchpadControlDone(Message):
    """The engine carried out a scratchpad action (`cancel_cell`, `reset_pad` or `remove_pad`) on `pad`."""

    def __init__(self, action: str, pad: str, result: Any = None) -> None:
        super().__init__()
        self.action = action
        self.pad = pad
        self.result = result


class MemoryConfirmationAnswered(Message):
    """The user decided which held-back memories to keep; `kept` is how many."""

    def __init__(self, kept: int, offered: int) -> None:
        super().__init__()
        self.kept = kept
        self.offered = offered


class CommandReplied(Message):
    """A slash command finished; `output` (a `CommandOutput`) is its reply for the chat."""

    def __init__(self, line: str, output: Any) -> None:
        super().__init__()
        self.line = line
        self.output = output


class ChatCleared(Message):
    """The conversation was forgotten (`/clear`); the transcript should empty too."""
