"""Wires the learning loops into a chat session: what runs after each turn, in the background, and when.

- Cerebellum: watches every scratchpad cell; after a turn with failed or warning cells, one post-mortem call.
- Consolidator: after a turn, replays a pad's new cells when they are worth it (each cell is replayed once).
  Failed cells are the cerebellum's job, so with the cerebellum on a failure alone does not cost a second call on
  the same cells; a long session (five new cells) is always replayed.
- Identity: every `identity_every_turns` turns, looks for facts about the user in their last five messages.
- Compaction: after the first turn of the session (a session may be built before any event loop runs) and every
  `compaction_every_turns` turns, when memory has grown past the threshold; `compact_now()` compacts on demand
  (``/memory vacuum``).

What each loop learns goes through `ChatSession.encode_through_gate`, so copilot mode asks before saving anything
the gate holds back. In memory mode off nothing here calls a model or writes. The hooks copy what they need the
moment the turn ends and do the slow part as background tasks: the reply never waits for them.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from anton_tui.agent.events import MemoryWritten
from anton_tui.agent.session import TurnEndHook
from anton_tui.memory.learners.cerebellum import CellRecord, Cerebellum
from anton_tui.memory.learners.consolidator import Consolidator
from anton_tui.memory.learners.identity import recent_user_messages

if TYPE_CHECKING:
    from anton_tui.agent.session import ChatSession
    from anton_tui.config import Settings
    from anton_tui.memory.learners.compaction import CompactionOutcome
    from anton_tui.scratchpad.cell import Cell

log = logging.getLogger(__name__)


async def _nothing() -> None:
    return None


class LearningLoops:
    """The background learners of one session. `attach_learning` builds one and registers its hooks."""

    def __init__(
        self,
        session: ChatSession,
        *,
        compaction_every_turns: int = 10,
        identity_every_turns: int = 5,
        cerebellum: bool = True,
        consolidation: bool = True,
    ) -> None:
        if session.cortex is None:
            raise ValueError("the learning loops need a session with memory (a cortex)")
        self.session = session
        self.cortex = session.cortex
        self.compaction_every_turns = max(1, compaction_every_turns)
        self.identity_every_turns = max(1, identity_every_turns)
        self.cerebellum = Cerebellum(self.cortex, session.llm, sink=session.encode_through_gate) if cerebellum else None
        self.consolidator = Consolidator() if consolidation else None
        self._compacting = False
        self._checked_at_start = False

    @property
    def memory_on(self) -> bool:
        return self.cortex.mode != "off"

    def hooks(self) -> list[TurnEndHook]:
        """Turn-end hooks, in the order they must take their snapshots (each skipped for a cancelled turn)."""
        hooks: list[TurnEndHook] = []
        if self.cerebellum is not None:
            hooks.append(TurnEndHook("cerebellum", self.cerebellum_hook, True, on_cancel=self.cerebellum.reset))
        if self.consolidator is not None:
            hooks.append(TurnEndHook("consolidation", self.consolidation_hook, True))
        hooks.append(TurnEndHook("identity", self.identity_hook, True))
        hooks.append(TurnEndHook("compaction", self.compaction_hook, True))
        return hooks

    # ---- hooks: called the moment a turn ends, they copy what they need and return the background work ---------

    def cerebellum_hook(self, session: ChatSession, turn: int) -> Coroutine[Any, Any, None]:
        assert self.cerebellum is not None
        records = self.cerebellum.take()
        if not records or not self.memory_on:
            return _nothing()
        return self._post_mortem(records)

    def consolidation_hook(self, session: ChatSession, turn: int) -> Coroutine[Any, Any, None]:
        assert self.consolidator is not None
        if not self.memory_on or session.scratchpads is None:
            return _nothing()
        pads = [pad for name in session.scratchpads.names() if (pad := session.scratchpads.get(name)) is not None]
        due = self.consolidator.due(pads, errors_reviewed=self.cerebellum is not None)
        return self._replay(due) if due else _nothing()

    def identity_hook(self, session: ChatSession, turn: int) -> Coroutine[Any, Any, None]:
        if not self.memory_on or turn % self.identity_every_turns:
            return _nothing()
        text = recent_user_messages(session.history)
        return self._identity(text) if text else _nothing()

    def compaction_hook(self, session: ChatSession, turn: int) -> Coroutine[Any, Any, None]:
        first = not self._checked_at_start
        self._checked_at_start = True
        if not self.memory_on or not (first or turn % self.compaction_every_turns == 0):
            return _nothing()
        if self._compacting:
            return _nothing()
        self._compacting = True
        return self._compact_if_needed()

    # ---- the background work -----------------------------------------------------------------------------------

    async def _post_mortem(self, records: list[CellRecord]) -> None:
        assert self.cerebellum is not None
        await self.cerebellum.flush(records)

    async def _replay(self, due: list[tuple[str, list[Cell]]]) -> None:
        assert self.consolidator is not None
        from anton_tui.redact import scrub_cell

        for _pad, cells in due:
            cells = [scrub_cell(cell, self.session.redact)[0] for cell in cells]  # the model reads them
            engrams = await self.consolidator.replay_and_extract(cells, self.session.llm)
            if engrams and self.memory_on:
                self.session.encode_through_gate(engrams, "consolidator")

    async def _identity(self, text: str) -> None:
        await self.cortex.maybe_update_identity(
            text, sink=lambda engrams: self.session.encode_through_gate(engrams, "identity")
        )

    async def _compact_if_needed(self) -> None:
        try:
            if not self.cortex.needs_compaction():
                return
            with self.session.producing("compaction", why="memory grew past the compaction threshold"):
                outcomes = await self.cortex.compact_all()
        finally:
            self._compacting = False
        for outcome in outcomes:
            if outcome.problem:
                log.warning("memory compaction: %s", outcome)
        self._report(outcomes)

    async def compact_now(self) -> list[str]:
        """``/memory vacuum``: compact both scopes now, whatever their size; one line per file looked at."""
        with self.session.producing("compaction", why="/memory vacuum"):
            outcomes = await self.cortex.compact_now()
        self._report(outcomes)
        from anton_tui.memory.learners.compaction import RULE

        return [str(outcome) for outcome in outcomes] or [f"Nothing to compact: {RULE}."]

    def _report(self, outcomes: list[CompactionOutcome]) -> None:
        changed = tuple(str(outcome) for outcome in outcomes if outcome.changed)
        if changed:
            self.session.emit(MemoryWritten(engrams=(), actions=changed, producer="compaction"))


def attach_learning(session: ChatSession, settings: Settings) -> LearningLoops | None:
    """Build the learning loops for `session` from settings and register them; None for a session without memory."""
    if session.cortex is None:
        return None
    loops = LearningLoops(
        session,
        compaction_every_turns=settings.compaction_every_turns,
        identity_every_turns=settings.identity_every_turns,
    )
    if loops.cerebellum is not None:
        session.scratchpad_observers.append(loops.cerebellum)
    session.turn_end_hooks.extend(loops.hooks())
    session.learning = loops
    return loops
