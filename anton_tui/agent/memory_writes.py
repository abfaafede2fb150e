"""How a chat session writes what it learns into memory: every producer goes through `encode_through_gate` (the
trust gate, then the encoding gate: saved now, or held for the user), held memories are asked about in one
confirmation between or at the end of turns, each write is recorded with its producer, and the ACC's observations
become nudges during a turn and rules at its end.

A mixin of `ChatSession` (`agent/session.py`), which owns the state these use (`cortex`, `acc`, the held
memories, the background tasks) and `_emit`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from anton_tui.agent.events import AccEventObserved, AccNudge, MemoryConfirmationNeeded, memory_events

if TYPE_CHECKING:
    from anton_tui.memory.engrams.engram import Engram

log = logging.getLogger("anton_tui.agent.session")


class MemoryWrites:
    """The memory-writing side of `ChatSession`."""

    def queue_for_confirmation(self, engrams: list[Engram]) -> None:
        """Copilot mode: hold engrams back until the user has seen the answer.

        While a turn runs they wait for the end of that turn; otherwise they are asked at once, on
        `background_events`.
        """
        self.pending_confirmations.extend(engrams)
        self.save_held()
        if engrams and not self._turn_open:
            self._ask_between_turns()

    def _ask_between_turns(self) -> None:
        task = self.start_background(self.ask_confirmations(between_turns=True), "confirmations")
        self._confirm_tasks.add(task)
        task.add_done_callback(self._confirm_tasks.discard)

    def producing(self, producer: str, *, why: str = "") -> Any:
        """Memory writes inside this block are recorded in the history as made by `producer` in this turn."""
        from anton_tui.memory.history.origin import producing

        trust = self.trust_now()
        turn = (trust.turn if trust is not None and trust.turn else self.turn_count) or None
        return producing(
            producer,
            session=self.session_id or "",
            turn=turn,
            why=why or f"{producer}, turn {turn}",
            trust=trust.describe() if trust is not None and self.trust_gate else "",
        )

    def encode_through_gate(self, engrams: list[Engram], producer: str) -> list[Engram]:
        """The one path of every producer: gate, then encode now or queue for the user. Returns what was queued."""
        if self.cortex is None or not engrams:
            return []
        engrams = self.trust_filter(engrams, producer)
        passed = [e for e in engrams if not self.cortex.encoding_gate(e)]
        held = [e for e in engrams if self.cortex.encoding_gate(e)]
        if passed and self.cortex.mode != "off":
            with self.producing(producer):
                encoded = self.cortex.encode_all(passed)
            for event in memory_events(encoded, producer):
                self._emit(event)
        if held:
            self.queue_for_confirmation(held)
        return held

    def _encode_confirmed(self, engram: Engram) -> Any:
        """Save one engram the user kept, recording who proposed it and why it was held."""
        from anton_tui.memory.history.origin import producing

        why = self.held_why.get(engram, {})
        held = "; ".join(why.get("reasons", []))
        text = f"kept by the user after review (proposed by {why.get('producer') or 'a learner'}"
        text += f"; held: {held})" if held else ")"
        trust = why.get("trust", "")
        with producing(
            "confirmation",
            session=self.session_id or "",
            turn=self.turn_count or None,
            why=text,
            trust=f"{trust}; approved by the user" if trust.startswith("untrusted") else trust,
        ):
            return self.cortex.encode_all([engram])  # type: ignore[union-attr]

    async def ask_confirmations(self, *, between_turns: bool = False) -> None:
        """Ask about every held-back engram in one `MemoryConfirmationNeeded` and encode what the user keeps.

        The future is resolved with the engrams to keep (all, none or some of them); a cancelled future keeps none.
        At the end of a turn the question goes out on the turn's stream; `between_turns` sends it on
        `background_events` and defers to the next turn's end if a turn has started meanwhile.
        """
        if between_turns:  # let the other learners finish, so their engrams come in the same question
            while others := self._background_tasks - self._confirm_tasks - {asyncio.current_task()}:
                await asyncio.wait(others)
        if self._confirm_lock is None:
            self._confirm_lock = asyncio.Lock()
        async with self._confirm_lock:
            if between_turns and self._turn_open:
                return  # the running turn asks at its end
            if not self.pending_confirmations or self.cortex is None:
                return
            emit = self._emit_background if between_turns else self._emit
            engrams, self.pending_confirmations = list(self.pending_confirmations), []
            future: asyncio.Future = asyncio.get_running_loop().create_future()
            reasons = tuple(self.reasons_for(engram) for engram in engrams)
            emit(MemoryConfirmationNeeded(engrams=tuple(engrams), future=future, reasons=reasons))
            try:
                answer = await asyncio.shield(future)
            except asyncio.CancelledError:
                if not future.cancelled():  # this task was stopped, not the question: keep the engrams for later
                    self.pending_confirmations[:0] = engrams
                    raise
                answer = []  # the question was dismissed
                undecided = [engram for engram in engrams if engram in self.held_why]
                self.pending_confirmations[:0] = undecided  # what the trust gate held keeps waiting (and is saved)
                engrams = [engram for engram in engrams if engram not in self.held_why]
            chosen = [engram for engram in dict.fromkeys(answer or []) if engram in engrams]
            if chosen and self.cortex.mode != "off":
                parts = [await asyncio.to_thread(self._encode_confirmed, engram) for engram in chosen]
                encoded = dataclasses.replace(
                    parts[0], actions=tuple(a for p in parts for a in p.actions),
                    engrams=tuple(e for p in parts for e in p.engrams), removed=tuple(r for p in parts for r in p.removed),
                )  # fmt: skip
                for event in memory_events(encoded, "confirmation"):
                    emit(event)
            for engram in engrams:
                self.held_why.pop(engram, None)
            self.save_held()

    # ----------------------------------------------------------------- the ACC

    def acc_observe(self, kind: str, detail: dict[str, Any] | None = None, *, severity: int = 1, round_idx: int = 0):
        if self.acc is None or self.acc_mode == "off":
            return
        if self.cortex is not None and self.cortex.mode == "off":
            return
        try:
            event = self.acc.observe(kind, detail or {}, severity=severity, round_idx=round_idx)
        except ValueError:
            log.warning("ACC rejected event kind %r", kind)
            return
        self._emit(AccEventObserved(event))

    def _round_nudges(self) -> list[dict[str, Any]]:
        if self.acc is None or self.acc_mode != "active":
            return []
        from anton_tui.memory.learners.acc import format_nudge

        blocks = []
        for lesson in self.acc.at_round_n():
            self._emit(AccNudge(lesson=lesson, nudged=True))
            blocks.append({"type": "text", "text": format_nudge(lesson)})
        return blocks

    def _drain_acc(self) -> None:
        """End of turn: the ACC's lessons become global rules (passive and active modes), deduplicated."""
        if self.acc is None or self.acc_mode == "off" or self.cortex is None or self.cortex.mode == "off":
            return
        from anton_tui.memory.engrams.engram import Engram, entry_id
        from anton_tui.memory.learners.acc import rules_similarity_predicate

        managed = getattr(self.cortex, "managed_hc", None)  # an operator's rule counts as known too, as in Anton
        rules_text = (
            (managed.recall_rules() + "\n" if managed is not None else "")
            + self.cortex.global_hc.recall_rules()
            + "\n"
            + self.cortex.project_hc.recall_rules()
        )
        patterns = self.acc.patterns_seen()
        lessons = self.acc.at_end_of_turn(has_similar_lesson=rules_similarity_predicate(rules_text))
        self.acc.clear()
        self.turn_memory.note_patterns(self.cortex, patterns)  # outcome figures of the ACC's rules
        if not lessons:
            return
        engrams = [
            Engram(text=lesson.rule, kind=lesson.kind, scope="global", confidence="high", source="consolidation")
            for lesson in lessons
        ]
        for lesson in lessons:
            self._emit(AccNudge(lesson=lesson, nudged=False))
        held = self.encode_through_gate(engrams, "acc")
        for lesson, engram in zip(lessons, engrams, strict=True):
            if engram not in held:  # the rule now remembers its pattern
                self.cortex.global_hc.outcomes.rule_written(entry_id(self.cortex.global_hc.clean_text(lesson.rule)),
                                                            lesson.detector)  # fmt: skip
