"""The ACC's part in a turn: what happens is observed, lessons fire as nudges between tool rounds (active mode), and
at the end of the turn they become global rules (passive and active modes), through the session's encoding gate.

A `ChatSession` holds one `AccFeedback`; what it needs of the session is `AccHost`. In mode "off", or with memory
off, it observes nothing. With a `journal`, the events worth looking back on and the lessons fired are kept in the
ACC's journal for the daily reflection (`memory.learners.acc_journal`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent.events import AccEventObserved, AccNudge, SessionEvent

if TYPE_CHECKING:
    from anton_tui.agent.turn_memory import TurnMemory
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.learners.acc import AnteriorCingulate
    from anton_tui.memory.learners.acc_journal import AccJournal

log = logging.getLogger(__name__)


class AccHost(Protocol):
    """What the ACC's feedback needs of its session."""

    @property
    def cortex(self) -> Cortex | None: ...

    def emit(self, event: SessionEvent) -> None: ...

    def encode_through_gate(self, engrams: list[Engram], producer: str) -> list[Engram]: ...

    @property
    def turn_memory(self) -> TurnMemory: ...


class AccFeedback:
    """The ACC of one session and its mode: off, passive (rules at the end of a turn) or active (nudges as well)."""

    def __init__(self, host: AccHost, acc: AnteriorCingulate | None, mode: str = "off") -> None:
        self._host = host
        self.acc = acc
        self.mode = mode
        self.journal: AccJournal | None = None  # where events and lessons are kept for reflection (factory)

    def _memory_off(self) -> bool:
        cortex = self._host.cortex
        return cortex is not None and cortex.mode == "off"

    def new_turn(self) -> None:
        if self.acc is not None:
            self.acc.clear()

    def observe(
        self, kind: str, detail: dict[str, Any] | None = None, *, severity: int = 1, round_idx: int = 0
    ) -> None:
        if self.acc is None or self.mode == "off" or self._memory_off():
            return
        try:
            event = self.acc.observe(kind, detail or {}, severity=severity, round_idx=round_idx)
        except ValueError:
            log.warning("ACC rejected event kind %r", kind)
            return
        self._host.emit(AccEventObserved(event))
        if self.journal is not None:
            self.journal.event(event.kind, event.severity, dict(event.detail))

    def round_nudges(self) -> list[dict[str, Any]]:
        """Active mode: the lessons that fire after this tool round, as text blocks for the model."""
        if self.acc is None or self.mode != "active":
            return []
        from anton_tui.memory.learners.acc import format_nudge

        blocks = []
        for lesson in self.acc.at_round_n():
            self._host.emit(AccNudge(lesson=lesson, nudged=True))
            if self.journal is not None:
                self.journal.lesson(lesson.detector, lesson.rule, lesson.severity)
            blocks.append({"type": "text", "text": format_nudge(lesson)})
        return blocks

    def end_turn(self) -> None:
        """End of turn: the ACC's lessons become global rules (passive and active modes), deduplicated."""
        cortex = self._host.cortex
        if self.acc is None or self.mode == "off" or cortex is None or cortex.mode == "off":
            return
        from anton_tui.memory.engrams.engram import Engram, entry_id
        from anton_tui.memory.learners.acc import rules_similarity_predicate

        managed = cortex.managed_hc  # an operator's rule counts as known too, as in Anton
        rules_text = (
            (managed.recall_rules() + "\n" if managed is not None else "")
            + cortex.global_hc.recall_rules()
            + "\n"
            + cortex.project_hc.recall_rules()
        )
        patterns = self.acc.patterns_seen()
        lessons = self.acc.at_end_of_turn(has_similar_lesson=rules_similarity_predicate(rules_text))
        self.acc.clear()
        self._host.turn_memory.note_patterns(cortex, patterns)  # did the rules written for them keep them away?
        if not lessons:
            return
        engrams = [
            Engram(text=lesson.rule, kind=lesson.kind, scope="global", confidence="high", source="consolidation")
            for lesson in lessons
        ]
        for lesson in lessons:
            self._host.emit(AccNudge(lesson=lesson, nudged=False))
            if self.journal is not None:
                self.journal.lesson(lesson.detector, lesson.rule, lesson.severity)
        held = self._host.encode_through_gate(engrams, "acc")
        for lesson, engram in zip(lessons, engrams, strict=True):
            if engram not in held:  # the rule remembers the pattern it was written for (see `engrams.outcomes`)
                cortex.global_hc.outcomes.rule_written(
                    entry_id(cortex.global_hc.clean_text(lesson.rule)), lesson.detector
                )
