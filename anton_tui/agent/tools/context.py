"""What a tool handler may use: the memory stores, the scratchpads, and a way to report live events.

Handlers receive a `ToolContext` instead of the whole session, so each tool's reach is visible in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from anton_tui.agent.events import SessionEvent
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.memory.skills.store import SkillStore
    from anton_tui.redact import Redactor
    from anton_tui.scratchpad.cell import Cell
    from anton_tui.scratchpad.runtime import ScratchpadManager


class ScratchpadObserver(Protocol):
    """Watches scratchpad cells around execution (the cerebellum is one)."""

    def on_pre_execute(self, cell: Cell) -> None: ...

    def on_post_execute(self, cell: Cell) -> None: ...


AccObserve = Callable[..., None]


@dataclass
class ToolContext:
    cortex: Cortex | None
    episodic: EpisodicMemory | None
    skills: SkillStore | None
    scratchpads: ScratchpadManager | None
    emit: Callable[[SessionEvent], None]
    acc_observe: AccObserve
    turn: int = 0
    scratchpad_observers: list[ScratchpadObserver] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    log_episode: Callable[..., None] = lambda *args, **kwargs: None
    redactor: Redactor | None = None  # what the model reads of a cell's output goes through it
    session_id: str = ""  # recorded with the memory changes a tool makes
    taint: Callable[[str], None] = lambda reason: None  # outside content entered this turn (see memory/trust.py)
    trust_filter: Callable[[list, str], list] = lambda engrams, producer: list(engrams)  # the rest wait for review
