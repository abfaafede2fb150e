"""Textual messages that carry engine output into the UI.

Widget-specific messages (a submitted prompt, a retry request, a scratchpad action) are declared on the widget that
posts them; this module holds the ones posted by background workers.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message
from textual.worker import Worker, WorkerState

from anton_tui.agent.events import SessionEvent


class SessionEventMessage(Message, bubble=False):
    """One engine event from the running turn, posted by the turn worker in the order the engine yielded it.
    Streamed text is gathered for the chat by `ChatStream` (`tui/streaming.py`), not here."""

    def __init__(self, event: SessionEvent) -> None:
        super().__init__()
        self.event = event


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


class WorkerFailed(Message):
    """Background work of a widget failed with `error`; the screen shows it (one place for every failure)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    @classmethod
    def of(cls, event: Worker.StateChanged) -> WorkerFailed | None:
        """The message for a worker that has just failed; None for any other change of state."""
        error = event.worker.error
        return cls(error) if event.state == WorkerState.ERROR and error is not None else None
