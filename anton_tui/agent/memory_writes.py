"""How a chat session writes what it learns into memory: every producer goes through `encode_through_gate` (the
trust gate, then the encoding gate: saved now, or held for the user), held memories are asked about in one
confirmation at the end of a turn or between turns, and each write is recorded with its producer.

This is the turn's side of the one review every self-change takes (`memory.review`): the trust gate runs its taint
and injection steps, an engram the tainted review level sends to the AI reviewer goes through the review pipeline
(`review`), each held engram is recorded in the memory history as held (and as rejected when the user discards it),
and the changes the pipeline holds for a person (a reflection's proposals, a skill) are asked about in the same
confirmation as the held memories.

A `ChatSession` holds one `MemoryWrites`; what it needs of the session is `MemoryWriteHost`, of the review pipeline
`Review`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from anton_tui.agent.events import MemoryConfirmationNeeded, MemoryWritten, SessionEvent, memory_events

if TYPE_CHECKING:
    from anton_tui.agent.background import BackgroundWork
    from anton_tui.agent.trust_gate import TrustGate
    from anton_tui.memory.engrams.cortex import Cortex, Encoded
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.history.origin import Origin
    from anton_tui.memory.review.book import Entry
    from anton_tui.memory.review.proposal import HeldChange, Proposal


class Review(Protocol):
    """What the memory-write path asks of the review pipeline (`memory.review.pipeline.ReviewPipeline`)."""

    async def submit(self, proposal: Proposal) -> Entry: ...

    async def decide(self, proposal_id: str, approve: bool) -> Entry: ...

    def held_changes(self) -> list[HeldChange]: ...

    def record(self, proposal: Proposal, why: str) -> str: ...


class MemoryWriteHost(Protocol):
    """What the memory-write path reads of its session."""

    @property
    def cortex(self) -> Cortex | None: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def turn_count(self) -> int: ...

    @property
    def background_events(self) -> asyncio.Queue[SessionEvent]: ...

    def emit(self, event: SessionEvent) -> None:
        """To the running turn's stream, or to `background_events` between turns."""


class MemoryWrites:
    """The one path from a producer to memory, and the questions about what was held (see the module docstring)."""

    def __init__(self, host: MemoryWriteHost, trust: TrustGate, background: BackgroundWork) -> None:
        self._host = host
        self._trust = trust
        self._background = background
        self._lock: asyncio.Lock | None = None
        self._asking: set[asyncio.Task[None]] = set()  # confirmations asked between turns, not yet answered
        self._asked: set[str] = set()  # held changes in a question not answered yet
        self.turn_open = False  # from a turn's start until it asks its own confirmations
        self.review: Review | None = None  # the review pipeline (None: no AI review, held changes are not asked)

    # ---- writing ---------------------------------------------------------------------------------------------

    def producing(self, producer: str, *, why: str = "") -> AbstractContextManager[Origin]:
        """Memory writes inside this block are recorded in the history as made by `producer` in this turn."""
        from anton_tui.memory.history.origin import producing

        trust = self._trust.now()
        turn = (trust.turn if trust is not None and trust.turn else self._host.turn_count) or None
        return producing(
            producer,
            session=self._host.session_id or "",
            turn=turn,
            why=why or f"{producer}, turn {turn}",
            trust=trust.describe() if trust is not None and self._trust.enabled else "",
        )

    def encode_through_gate(self, engrams: list[Engram], producer: str) -> list[Engram]:
        """The one path of every producer: gate, then encode now or queue for the user. Returns what was queued."""
        cortex = self._host.cortex
        if cortex is None or not engrams:
            return []
        engrams = self.trust_filter(engrams, producer)
        passed = [e for e in engrams if not cortex.encoding_gate(e)]
        held = [e for e in engrams if cortex.encoding_gate(e)]
        if passed and cortex.mode != "off":
            with self.producing(producer):
                encoded = cortex.encode_all(passed)
            for event in memory_events(encoded, producer):
                self._host.emit(event)
        if held:
            self.queue_for_confirmation(held, producer)
        return held

    def trust_filter(self, engrams: list[Engram], producer: str) -> list[Engram]:
        """The engrams that may be saved now; the trust gate's others are queued for review with their reasons, or
        handed to the AI reviewer when the tainted review level says so."""
        keep, held, for_ai = self._trust.triage(engrams, producer)
        if held:
            self._record_decisions(held, "held for a person")
            self.queue_for_confirmation(held, producer)
        if for_ai:
            self._review_by_ai(for_ai, producer)
        return keep

    def _proposal(self, engram: Engram, producer: str = "") -> Proposal:
        from anton_tui.memory.review.proposal import engram_proposal

        why = self._trust.why.get(engram)
        trust = self._trust.now()
        tainted = tuple(why.reasons[:1]) if why is not None and why.trust.startswith("untrusted") else ()
        if not tainted and trust is not None and trust.untrusted:
            tainted = (trust.describe(),)
        return engram_proposal(engram.text, engram.kind, engram.scope, topic=engram.topic,
                               source=producer or (why.producer if why is not None else ""), tainted=tainted)  # fmt: skip

    def _record_decisions(self, engrams: list[Engram], what: str) -> None:
        """Each engram's decision as its own change in the memory history (in the background)."""
        review = self.review
        if review is None or not engrams:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script's direct call): the decision stands, unrecorded
            return
        records = [(self._proposal(engram), f"{what}: {'; '.join(self._trust.reasons_for(engram))}")
                   for engram in engrams]  # fmt: skip

        async def record() -> None:
            for proposal, why in records:
                await asyncio.to_thread(review.record, proposal, why)

        self._background.start(record(), "recording review decisions")

    def _review_by_ai(self, engrams: list[Engram], producer: str) -> None:
        """Engrams from a tainted turn, under ANTON_REVIEW_TAINTED=ai: the review pipeline decides each."""
        review = self.review
        if review is None:  # nothing to review with: a person decides, as by default
            held = self._trust.sort(engrams, producer)[1] if self._trust.enabled else engrams
            self.queue_for_confirmation(held, producer)
            return
        proposals = [self._proposal(engram, producer) for engram in engrams]

        async def submit() -> None:
            for proposal in proposals:
                await review.submit(proposal)
            self.ask_between_turns()  # what the reviewer could not decide waits for a person

        self._background.start(submit(), "AI review of learned memories")

    def _encode_confirmed(self, cortex: Cortex, engram: Engram) -> Encoded:
        """Save one engram the user kept, recording who proposed it and why it was held."""
        from anton_tui.memory.history.origin import producing

        why = self._trust.why.get(engram)
        held = "; ".join(why.reasons) if why is not None else ""
        text = f"kept by the user after review (proposed by {self._trust.proposer(engram) or 'a learner'}"
        text += f"; held: {held})" if held else ")"
        trust = why.trust if why is not None else ""
        with producing(
            "confirmation",
            session=self._host.session_id or "",
            turn=self._host.turn_count or None,
            why=text,
            trust=f"{trust}; approved by the user" if trust.startswith("untrusted") else trust,
        ):
            return cortex.encode_all([engram])

    # ---- asking the user -------------------------------------------------------------------------------------

    def queue_for_confirmation(self, engrams: list[Engram], producer: str = "") -> None:
        """Copilot mode: hold engrams (proposed by `producer`) back until the user has seen the answer.

        While a turn runs they wait for the end of that turn; otherwise they are asked at once, on
        `background_events`.
        """
        self._trust.hold(engrams, producer)
        if engrams and not self.turn_open:
            self.ask_between_turns()

    def ask_between_turns(self) -> None:
        """Ask about what waits for review now, on `background_events` (once the learners at work have finished)."""
        task = self._background.start(self.ask_confirmations(between_turns=True), "confirmations")
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    def begin_turn(self) -> None:
        self.turn_open = True

    async def end_turn(self) -> None:
        """The turn's answer is out: ask about what was held during it, on the turn's stream."""
        self.turn_open = False
        await self.ask_confirmations()

    def turn_closed(self) -> None:
        """After a turn however it ended: one that did not ask (it was cancelled) leaves the question for later."""
        self.turn_open = False
        if self._trust.pending:
            self.ask_between_turns()

    async def ask_confirmations(self, *, between_turns: bool = False) -> None:
        """Ask about every held-back engram and every change the review holds for a person in one
        `MemoryConfirmationNeeded`; encode the engrams the user keeps and decide the changes.

        The future is resolved with what to keep (all, none or some of the engrams and changes); a cancelled future
        keeps none and decides nothing. At the end of a turn the question goes out on the turn's stream;
        `between_turns` sends it on `background_events` and defers to the next turn's end if a turn has started
        meanwhile.
        """
        if between_turns:  # let the other learners finish, so their engrams come in the same question
            while others := self._background.tasks - self._asking - {asyncio.current_task()}:
                await asyncio.wait(others)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if between_turns and self.turn_open:
                return  # the running turn asks at its end
            cortex = self._host.cortex
            changes = await self._held_changes()
            if not changes and (not self._trust.pending or cortex is None):
                return
            emit = self._host.background_events.put_nowait if between_turns else self._host.emit
            engrams = self._trust.take() if cortex is not None else []
            future: asyncio.Future[list[Engram | HeldChange] | None] = asyncio.get_running_loop().create_future()
            reasons = tuple(self._trust.reasons_for(engram) for engram in engrams)
            self._asked.update(change.id for change in changes)
            emit(MemoryConfirmationNeeded(engrams=tuple(engrams), future=future, reasons=reasons,
                                          changes=tuple(changes)))  # fmt: skip
            try:
                answer = await asyncio.shield(future)
            except asyncio.CancelledError:
                self._asked.difference_update(change.id for change in changes)
                if not future.cancelled():  # this task was stopped, not the question: keep the engrams for later
                    self._trust.put_back(engrams)
                    raise
                answer = []  # the question was dismissed: held changes keep waiting
                changes = []
                undecided = [engram for engram in engrams if engram in self._trust.why]
                self._trust.put_back(undecided)  # what the trust gate held keeps waiting (and is saved)
                engrams = [engram for engram in engrams if engram not in self._trust.why]
            if answer is None:  # "not now" (`keep_for_review`): all of them wait again, kept for the next start
                self._asked.difference_update(change.id for change in changes)
                self._trust.put_back(engrams)
                self._trust.save()
                return
            chosen = [engram for engram in dict.fromkeys(answer or []) if engram in engrams]
            if chosen and cortex is not None and cortex.mode != "off":
                parts = [await asyncio.to_thread(self._encode_confirmed, cortex, engram) for engram in chosen]
                for event in memory_events(_joined(parts), "confirmation"):
                    emit(event)
            self._record_decisions([e for e in engrams if e not in chosen and e in self._trust.why], "rejected by you")
            self._trust.settle(engrams)
            from anton_tui.memory.review.proposal import HeldChange

            await self._decide_changes(changes, {item.id for item in answer or [] if isinstance(item, HeldChange)})

    async def _held_changes(self) -> list[HeldChange]:
        review = self.review
        if review is None:
            return []
        held = await asyncio.to_thread(review.held_changes)
        return [change for change in held if change.id not in self._asked]

    async def _decide_changes(self, changes: list[HeldChange], approved: set[str]) -> None:
        """Apply the held changes the user kept and reject the others (each decision recorded by the pipeline)."""
        review = self.review
        if review is None:
            return
        from anton_tui.memory.review.pipeline import NotDecidable

        for change in changes:
            self._asked.discard(change.id)
            try:
                entry = await review.decide(change.id, change.id in approved)
            except (KeyError, NotDecidable):
                continue  # decided meanwhile elsewhere (the Reflections view, another window)
            if entry.status == "applied" and change.kind != "skill":
                self._host.emit(MemoryWritten(engrams=(), actions=(entry.last.why if entry.last else "",),
                                              producer="review"))  # fmt: skip


def _joined(parts: list[Encoded]) -> Encoded:
    """One record of several `encode_all` calls."""
    return dataclasses.replace(
        parts[0],
        actions=tuple(action for part in parts for action in part.actions),
        engrams=tuple(engram for part in parts for engram in part.engrams),
        removed=tuple(removed for part in parts for removed in part.removed),
    )
