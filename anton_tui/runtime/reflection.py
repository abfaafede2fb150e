"""Reflection and review as the Runtime offers them: the reflection chain and each reflection's page for the
Reflections view, a proposal applied, rejected or undone by the user, and the background work: due reflections at
start and when idle, conversation summaries caught up at start, and the summary of the conversation in progress
when it sits idle or the app quits.

`ReflectionService` reads and writes off the event loop and hands out frozen snapshots. Background reflection never
starts while a turn runs. Quitting waits a moment at most for the last conversation's summary
(`conversation_summary.EXIT_WAIT`); whatever is cut short is done at the next start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent.events import ReflectionsWritten, SessionEvent

if TYPE_CHECKING:
    from anton_tui.agent.conversation_summary import ConversationSummaries
    from anton_tui.memory.reflection.document import Reflection
    from anton_tui.memory.reflection.runner import ReflectionReport
    from anton_tui.memory.reflection.wiring import ReflectionParts
    from anton_tui.memory.review.book import Entry
    from anton_tui.memory.stores import MemoryStores

log = logging.getLogger(__name__)

IDLE_CHECK = 30.0  # seconds between looks at whether the app sits idle
OTHER = "other"  # the chain's entry for proposals made outside a reflection (/skill save, the AI-reviewed learners)


class ReflectingSession(Protocol):
    """What the reflection service watches of the session: whether a turn runs, which conversation is in progress
    and how far it got, where to report, and how to ask the user about what waits for review."""

    @property
    def running(self) -> bool: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def turn_count(self) -> int: ...

    @property
    def background_events(self) -> asyncio.Queue[SessionEvent]: ...

    @property
    def summaries(self) -> ConversationSummaries | None: ...

    def ask_between_turns(self) -> None: ...


class ReflectionSettings(Protocol):
    @property
    def reflection(self) -> bool: ...

    @property
    def conversation_idle_minutes(self) -> int: ...


def standalone_parts(stores: MemoryStores) -> ReflectionParts:
    """Reflection's parts over the stores alone, for a runtime whose session has none: the default review
    settings, memory written as in autopilot, no model (nothing is reviewed by the AI or written by a model)."""
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.reflection.wiring import DEFAULTS, ReflectionParts

    cortex = Cortex(stores.global_hc, stores.project_hc, managed_hc=stores.managed, shared=stores.shared)
    return ReflectionParts.build(stores, cortex, DEFAULTS, lambda: None)


@dataclass(frozen=True)
class ReflectionRow:
    """One reflection in the chain: its kind and label, title, whether it was quiet, when it was written, how many
    proposals it made and how many of them wait for the user."""

    kind: str
    label: str
    title: str
    quiet: bool
    written: str
    proposals: int
    held: int


@dataclass(frozen=True)
class ProposalRow:
    """A proposal as the view shows it: what and where, its status and why, and what its review went through."""

    id: str
    kind: str
    target: str
    title: str
    status: str
    why: str
    source: str
    story: tuple[str, ...] = ()

    @property
    def can_apply(self) -> bool:
        return self.status in ("held", "rejected", "undone", "proposed")

    @property
    def can_reject(self) -> bool:
        return self.status in ("held", "proposed")

    @property
    def can_undo(self) -> bool:
        return self.status == "applied"


@dataclass(frozen=True)
class ReflectionPage:
    """One reflection in full: its row, its text (Markdown: notes, statistics, what it read) and its proposals."""

    row: ReflectionRow
    text: str
    proposals: tuple[ProposalRow, ...]


@dataclass(frozen=True)
class ReflectionChain:
    """Every reflection, newest first within each kind (daily, weekly, monthly), and the proposals made outside a
    reflection."""

    rows: tuple[ReflectionRow, ...]
    other: int = 0

    @property
    def held(self) -> int:
        return sum(row.held for row in self.rows)


class ProposalNotDecided(Exception):
    """The user's decision could not be carried out; `str()` says why, and nothing changed."""


def _row(reflection: Reflection, statuses: Mapping[str, str]) -> ReflectionRow:
    held = sum(1 for line in reflection.proposals if statuses.get(line.id, line.status) == "held")
    return ReflectionRow(reflection.period.kind, reflection.period.label, reflection.title, reflection.quiet,
                         reflection.written, len(reflection.proposals), held)  # fmt: skip


def _proposal_row(entry: Entry) -> ProposalRow:
    proposal = entry.proposal
    story = tuple(f"{d.at[:16].replace('T', ' ')}  {d.status}: {d.why}" for d in entry.decisions)
    why = entry.last.why if entry.last is not None else ""
    return ProposalRow(proposal.id, proposal.kind, proposal.target, proposal.title, entry.status, why, proposal.source,
                       story)  # fmt: skip


def page_text(reflection: Reflection) -> str:
    """A reflection as the view shows it: the heading, the notes, then the statistics and what it was made from."""
    lines = [f"# {reflection.heading}", "", reflection.notes.strip(), "", "## Statistics", ""]
    figures = []
    for key, value in reflection.statistics.items():
        if key == "tools":
            figures.append("tools: " + (", ".join(f"{name} {count}" for name, count in dict(value).items()) or "none"))
        else:
            figures.append(f"{key.replace('_', ' ')} {value}")
    lines.append(" · ".join(figures))
    if reflection.inputs:
        lines += ["", "## Read from", ""]
        lines.append(" · ".join(f"{key.replace('_', ' ')} {value}" for key, value in reflection.inputs.items()))
    if reflection.tainted:
        lines += ["", "## Untrusted input", ""] + [f"- {reason}" for reason in reflection.tainted]
    lines += ["", f"*{reflection.period.kind} {reflection.period.label}, {reflection.start} to {reflection.end}, "
              f"written {reflection.written}*"]  # fmt: skip
    return "\n".join(lines)


class ReflectionService:
    """The reflection chain and the review's proposals of one project, for the UI (see the module docstring)."""

    def __init__(
        self,
        parts: ReflectionParts,
        session: ReflectingSession | None,
        settings: Callable[[], ReflectionSettings],
    ) -> None:
        self.parts = parts
        self._session = session
        self._settings = settings
        self._idle_task: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self.held = 0  # proposals waiting for the user (the header adds them to the held memories)
        parts.pipeline.on_decided.append(self._recount)  # decided here, in the review dialog or by a reflection

    def _recount(self, _decided: Entry) -> None:
        self.held = len(self.parts.pipeline.book.held())

    # ---- background work ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        """After the warm-up: the summaries an earlier run left out, the reflections due, and the idle watch."""
        session = self._session
        self.held = len(await asyncio.to_thread(self.parts.pipeline.book.held))
        if session is None:
            return
        summaries = session.summaries
        if summaries is not None:
            summaries.catch_up(session.session_id)
        if self.held:
            session.ask_between_turns()
        if self._settings().reflection:
            self._spawn(self.run_due(), "due reflections")
        self._idle_task = asyncio.create_task(self._watch_idle())

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._background.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.warning("background %s failed", name, exc_info=finished.exception())

        task.add_done_callback(done)

    async def run_due(self, *, force: bool = False) -> ReflectionReport | None:
        """Write the reflections due now (never while a turn runs: it waits for the turn to end); the report goes
        to the session's background events, and proposals held for the user are asked about."""
        session = self._session
        while session is not None and session.running:  # noqa: ASYNC110 (the session has no event for a turn's end)
            await asyncio.sleep(1.0)
        report = await self.parts.reflector.run(force=force)
        self.held = len(await asyncio.to_thread(self.parts.pipeline.book.held))
        if session is not None and (report.written or report.quiet or report.failed):
            session.background_events.put_nowait(
                ReflectionsWritten(
                    tuple(str(path) for path in report.written), tuple(report.quiet), self.held, tuple(report.failed)
                )
            )
            if any(outcome.status == "held" for outcome in report.proposals):
                session.ask_between_turns()
        return report

    async def _watch_idle(self) -> None:
        """Every `IDLE_CHECK` seconds: once no turn has run for `conversation_idle_minutes`, summarise the
        conversation in progress and write the reflections due (once per idle spell)."""
        session = self._session
        assert session is not None
        seen = (session.session_id, session.turn_count)
        last_active = time.monotonic()
        handled: tuple[str | None, int] | None = None
        while True:
            await asyncio.sleep(IDLE_CHECK)
            now_seen = (session.session_id, session.turn_count)
            if session.running or now_seen != seen:
                seen, last_active = now_seen, time.monotonic()
                continue
            minutes = self._settings().conversation_idle_minutes
            if not minutes or time.monotonic() - last_active < minutes * 60 or handled == now_seen:
                continue
            handled = now_seen
            if session.summaries is not None and session.turn_count:
                session.summaries.ended(session.session_id)
            if self._settings().reflection:
                self._spawn(self.run_due(), "due reflections")

    async def close(self) -> None:
        """Quitting: the conversation in progress is summarised if that takes no more than a moment."""
        if self._idle_task is not None:
            self._idle_task.cancel()
        for task in list(self._background):
            task.cancel()
        session = self._session
        if session is None or session.summaries is None:
            return
        from anton_tui.agent.conversation_summary import EXIT_WAIT

        if session.turn_count:
            session.summaries.ended(session.session_id)
        await session.summaries.wait(EXIT_WAIT)

    # ---- the chain and its pages -------------------------------------------------------------------------------

    async def chain(self) -> ReflectionChain:
        return await asyncio.to_thread(self._chain)

    def _chain(self) -> ReflectionChain:
        from anton_tui.memory.reflection.periods import KINDS

        files = self.parts.reflector.files
        statuses = {entry.proposal.id: entry.status for entry in self.parts.pipeline.book.entries()}
        rows = []
        for kind in KINDS:
            for period in reversed(files.periods(kind)):
                reflection = files.read_or_none(period)
                if reflection is not None:
                    rows.append(_row(reflection, statuses))
        other = sum(1 for entry in self.parts.pipeline.book.entries() if not entry.proposal.reflection)
        return ReflectionChain(tuple(rows), other)

    async def page(self, kind: str, label: str) -> ReflectionPage | None:
        """One reflection in full (None when it is gone or cannot be read); `kind` "other" lists the proposals made
        outside a reflection."""
        return await asyncio.to_thread(self._page, kind, label)

    def _page(self, kind: str, label: str) -> ReflectionPage | None:
        from anton_tui.memory.reflection.periods import Period

        entries = self.parts.pipeline.book.entries()
        if kind == OTHER:
            mine = [entry for entry in entries if not entry.proposal.reflection]
            held = sum(1 for entry in mine if entry.status == "held")
            row = ReflectionRow(OTHER, "", "Proposals outside reflections", False, "", len(mine), held)
            text = "# Proposals outside reflections\n\nSkills drafted by `/skill save` and memories the AI reviewer "
            text += "decided, with what became of each."
            return ReflectionPage(row, text, tuple(_proposal_row(entry) for entry in reversed(mine)))
        try:
            period = Period.from_label(kind, label)  # type: ignore[arg-type]  # from_label checks the kind
        except ValueError:
            return None
        reflection = self.parts.reflector.files.read_or_none(period)
        if reflection is None:
            return None
        by_id = {entry.proposal.id: entry for entry in entries}
        statuses = {pid: entry.status for pid, entry in by_id.items()}
        proposals = tuple(_proposal_row(by_id[line.id]) if line.id in by_id else
                          ProposalRow(line.id, line.kind, line.target, line.text, line.status, line.why, "")
                          for line in reflection.proposals)  # fmt: skip
        return ReflectionPage(_row(reflection, statuses), page_text(reflection), proposals)

    # ---- the user's decisions ----------------------------------------------------------------------------------

    async def apply(self, proposal_id: str) -> ProposalRow:
        return await self._decided(self.parts.pipeline.decide(proposal_id, True))

    async def reject(self, proposal_id: str) -> ProposalRow:
        return await self._decided(self.parts.pipeline.decide(proposal_id, False))

    async def undo(self, proposal_id: str) -> ProposalRow:
        return await self._decided(self.parts.pipeline.undo(proposal_id))

    async def _decided(self, decision: Any) -> ProposalRow:
        from anton_tui.memory.review.pipeline import NotDecidable, UndoRefused

        try:
            entry = await decision
        except (KeyError, NotDecidable, UndoRefused) as exc:
            raise ProposalNotDecided(str(exc).strip("'\"")) from None
        self.held = len(await asyncio.to_thread(self.parts.pipeline.book.held))
        return _proposal_row(entry)
