"""What the objects a chat session's turn is made of read of their session: the tools, the memory stores and the
scratchpads, the history and the turn's number and memory, and where to send events.

The tool round (`tool_round`) and the system prompt (`system_prompt`) each extend `TurnParts` with the little more
they need; `ChatSession` is what they are given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from anton_tui.agent.events import SessionEvent
    from anton_tui.agent.tools.registry import ToolRegistry
    from anton_tui.agent.turn_memory import TurnMemory
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.skills.store import SkillStore
    from anton_tui.scratchpad.runtime import ScratchpadManager


class TurnParts(Protocol):
    """The session's tools, stores, history and turn (see the module docstring)."""

    @property
    def tools(self) -> ToolRegistry: ...

    @property
    def cortex(self) -> Cortex | None: ...

    @property
    def skills(self) -> SkillStore | None: ...

    @property
    def scratchpads(self) -> ScratchpadManager | None: ...

    @property
    def history(self) -> list[dict[str, Any]]: ...

    @property
    def turn_memory(self) -> TurnMemory: ...

    @property
    def turn_count(self) -> int: ...

    @property
    def session_id(self) -> str | None: ...

    def emit(self, event: SessionEvent) -> None: ...
