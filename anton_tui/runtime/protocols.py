"""What the `Runtime` needs from a conversation: a chat session, optional scratchpad controls, and a few settings.

The runtime is written against these small protocols, so it runs with the real `ChatSession`, the demo replay, or a
scripted object in a test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from anton_tui.agent.events import SessionEvent

if TYPE_CHECKING:
    from anton_tui.agent.turn_memory import TurnMemory


@runtime_checkable
class ChatSessionLike(Protocol):
    """A conversation: each user message starts a turn that streams engine events until it finishes."""

    def turn(self, user_text: str) -> AsyncIterator[SessionEvent]: ...

    def cancel(self) -> Any:
        """Stop the running turn; may return an awaitable, which the app awaits."""


@runtime_checkable
class HoldsTurnMemory(Protocol):
    """A session that gives the model memory and skills besides its history (`agent.turn_memory`)."""

    turn_memory: TurnMemory


@runtime_checkable
class ScratchpadControl(Protocol):
    """Actions the scratchpad pane can ask of the engine. Each may return an awaitable."""

    def cancel_cell(self, pad: str) -> Any: ...

    def reset_pad(self, pad: str) -> Any: ...

    def remove_pad(self, pad: str) -> Any: ...


class SettingsLike(Protocol):
    """The settings fields the UI reads: a subset of `anton_tui.config.Settings`. `keymap`, a mapping of binding ids
    to keys, is read when present, and the header shows `effective_memory_mode`, or `memory_mode` where there is
    none."""

    home: Path
    project_dir: Path
    theme: str
    planning_provider: str
    planning_model: str
