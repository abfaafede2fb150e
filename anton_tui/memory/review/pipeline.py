"""The review pipeline: every proposed self-change runs its steps in order and ends applied, held for a person or
rejected, and each decision is recorded as its own change in the memory history.

Steps: taint (untrusted input moves the change to the tainted review level, `ANTON_REVIEW_TAINTED`, default human),
hash (the target still holds what it held when the change was proposed, else rejected), structure (else rejected),
injection scan (a skill is rejected, a rule, lesson or fact held for a person), then the review level
(`ANTON_REVIEW_LEVEL`): `human` holds it for a person, `none` applies it, `ai` asks the AI reviewer, whose verdict
applies or rejects it (a reviewer that cannot answer leaves it to a person). The rate limit
(`ANTON_REVIEW_MAX_PER_DAY`, default 10) counts the changes applied without a person since midnight: past it, a
change waits for a person instead, so a runaway loop cannot rewrite memory on its own. A person's decision (the
review dialog, the Reflections view) is final: it re-checks only that the target did not move and the change still
reads as one entry or a valid skill.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from anton_tui.memory.history.origin import Origin
from anton_tui.memory.history.repo import HistoryError
from anton_tui.memory.review import checks
from anton_tui.memory.review.book import Entry, ProposalBook
from anton_tui.memory.review.proposal import (
    DECIDED_BY_AI,
    DECIDED_BY_CHECK,
    DECIDED_BY_PERSON,
    DECIDED_BY_POLICY,
    LEVELS,
    Decision,
    HeldChange,
    Proposal,
    Status,
)
from anton_tui.memory.review.targets import REVIEW_PRODUCER, ChangeTargets, UndoRefused

if TYPE_CHECKING:
    from anton_tui.memory.history.recorder import MemoryRecorder
    from anton_tui.memory.review.reviewer import Verdict

log = logging.getLogger(__name__)

DEFAULT_LEVEL = "ai"
DEFAULT_TAINTED_LEVEL = "human"
DEFAULT_MAX_PER_DAY = 10


class Reviewer(Protocol):
    async def review(self, proposal: Proposal, diff: str) -> Verdict: ...


class ReviewSettingsSource(Protocol):
    @property
    def review_level(self) -> str: ...

    @property
    def review_tainted(self) -> str: ...

    @property
    def review_max_per_day(self) -> int: ...


@dataclass(frozen=True)
class ReviewSettings:
    """The review level for trusted and for untrusted input (ai, human or none) and the daily rate limit."""

    level: str = DEFAULT_LEVEL
    tainted: str = DEFAULT_TAINTED_LEVEL
    max_per_day: int = DEFAULT_MAX_PER_DAY

    def __post_init__(self) -> None:
        for value in (self.level, self.tainted):
            if value not in LEVELS:
                raise ValueError(f"review level {value!r} is not one of {', '.join(LEVELS)}")

    @classmethod
    def of(cls, settings: ReviewSettingsSource) -> ReviewSettings:
        return cls(settings.review_level, settings.review_tainted, settings.review_max_per_day)


class NotDecidable(Exception):
    """The proposal is not in a state that decision applies to (say, undo of a change that was never applied)."""


def local_now() -> datetime:
    return datetime.now().astimezone()


class ReviewPipeline:
    """Reviews, applies and undoes the self-changes of one project (see the module docstring)."""

    def __init__(
        self,
        book: ProposalBook,
        targets: ChangeTargets,
        recorder: MemoryRecorder | None,
        settings: ReviewSettings | None = None,
        reviewer: Reviewer | None = None,
        clock: Callable[[], datetime] = local_now,
    ) -> None:
        self.book = book
        self.targets = targets
        self.recorder = recorder
        self.settings = settings or ReviewSettings()
        self.reviewer = reviewer
        self.clock = clock
        self._deciding: asyncio.Lock | None = None
        self.on_decided: list[Callable[[Entry], None]] = []  # told of every decision (blocking, off the event loop)

    # ---- the review --------------------------------------------------------------------------------------------

    async def submit(self, proposal: Proposal) -> Entry:
        """Run every step over a new proposal and record the decision; returns the proposal's entry."""
        entry = await asyncio.to_thread(self.book.add, proposal)
        if entry.decisions:
            return entry  # reviewed before (the same proposal submitted twice)
        if self._deciding is None:
            self._deciding = asyncio.Lock()
        async with self._deciding:
            found, level = await asyncio.to_thread(self._checked, proposal)
            if found is not None:
                return found
            if level == "human":
                return await self._decide(proposal, "held", "held for a person: " + self._level_words(proposal))
            if (limited := await asyncio.to_thread(self._over_limit)) is not None:
                return await self._decide(proposal, "held", limited)
            if level == "none":
                return await self._apply(proposal, "applied without a reviewer (review level none)", DECIDED_BY_POLICY)
            return await self._ai_review(proposal)

    def _checked(self, proposal: Proposal) -> tuple[Entry | None, str]:
        """Run the checks (blocking); an entry when one of them decided, else the review level that applies."""
        tainted = checks.taint(proposal)
        level = self.settings.tainted if tainted is not None else self.settings.level
        for finding in (checks.stale(proposal, self.targets.base(proposal)), checks.structure(proposal)):
            if finding is not None:
                return self._decide_now(proposal, "rejected", f"rejected ({finding.step}): {finding.why}"), level
        injected = checks.injection(proposal)
        if injected is not None:
            if proposal.kind == "skill":
                return self._decide_now(proposal, "rejected", f"rejected (injection scan): {injected.why}"), level
            return self._decide_now(proposal, "held", f"held for a person (injection scan): {injected.why}"), level
        return None, level

    def _level_words(self, proposal: Proposal) -> str:
        if proposal.tainted:
            return f"made from untrusted input ({'; '.join(proposal.tainted)}), and ANTON_REVIEW_TAINTED is human"
        return "ANTON_REVIEW_LEVEL is human"

    def _over_limit(self) -> str | None:
        limit = self.settings.max_per_day
        midnight = self.clock().replace(hour=0, minute=0, second=0, microsecond=0)
        applied = self.book.applied_without_person_since(midnight)
        if applied < limit:
            return None
        return (
            f"held for a person (rate limit): {applied} changes were applied without a person today, "
            f"ANTON_REVIEW_MAX_PER_DAY is {limit}"
        )

    async def _ai_review(self, proposal: Proposal) -> Entry:
        from anton_tui.llm.errors import LLMError

        if self.reviewer is None:
            return await self._decide(proposal, "held", "held for a person: there is no model to review it with")
        diff = await asyncio.to_thread(self.targets.diff, proposal)
        try:
            verdict = await self.reviewer.review(proposal, diff)
        except LLMError as exc:
            return await self._decide(proposal, "held", f"held for a person: the AI reviewer could not answer ({exc})")
        if not verdict.approve:
            return await self._decide(proposal, "rejected", f"rejected by the AI reviewer: {verdict.reason}",
                                      DECIDED_BY_AI)  # fmt: skip
        return await self._apply(proposal, f"approved by the AI reviewer: {verdict.reason}", DECIDED_BY_AI)

    # ---- a person's decisions ----------------------------------------------------------------------------------

    async def decide(self, proposal_id: str, approve: bool) -> Entry:
        """A person applies or rejects a proposal (held, or one they overrule). Raises KeyError, NotDecidable."""
        entry = await asyncio.to_thread(self._entry, proposal_id)
        if approve:
            if entry.status == "applied":
                raise NotDecidable(f"proposal {proposal_id} is applied already")
            proposal = entry.proposal
            findings = await asyncio.to_thread(self._person_checks, proposal)
            if findings:
                return await self._decide(proposal, "rejected", f"rejected ({findings[0].step}): {findings[0].why}")
            return await self._apply(proposal, "approved by you", DECIDED_BY_PERSON)
        if entry.status not in ("held", "proposed"):
            what = "undo it instead" if entry.status == "applied" else f"it is {entry.status} already"
            raise NotDecidable(f"proposal {proposal_id} cannot be rejected: {what}")
        return await self._decide(entry.proposal, "rejected", "rejected by you", DECIDED_BY_PERSON)

    def _person_checks(self, proposal: Proposal) -> list[checks.Finding]:
        found = [checks.stale(proposal, self.targets.base(proposal)), checks.structure(proposal)]
        return [finding for finding in found if finding is not None]

    async def undo(self, proposal_id: str) -> Entry:
        """Put an applied change's target back as it was. Raises KeyError, NotDecidable, UndoRefused."""
        entry = await asyncio.to_thread(self._entry, proposal_id)
        applied = entry.applied()
        if applied is None:
            raise NotDecidable(f"proposal {proposal_id} is {entry.status}, not applied; there is nothing to undo")
        done = await asyncio.to_thread(self.targets.undo, entry.proposal, applied.applied_change, applied.before)
        return await self._decide(entry.proposal, "undone", f"undone by you: {done}", DECIDED_BY_PERSON)

    def _entry(self, proposal_id: str) -> Entry:
        entry = self.book.entry(proposal_id)
        if entry is None:
            raise KeyError(f"no proposal {proposal_id!r}")
        return entry

    # ---- what waits --------------------------------------------------------------------------------------------

    def held_changes(self) -> list[HeldChange]:
        """The proposals waiting for a person, as the review dialog shows them (blocking: reads the targets)."""
        held = []
        for entry in self.book.held():
            proposal = entry.proposal
            why = entry.last.why if entry.last is not None else ""
            held.append(HeldChange(proposal.id, proposal.kind, proposal.target, proposal.title, why,
                                   self.targets.diff(proposal), proposal.source))  # fmt: skip
        return held

    # ---- recording decisions -----------------------------------------------------------------------------------

    async def _apply(self, proposal: Proposal, why: str, by: str) -> Entry:
        try:
            applied = await asyncio.to_thread(self.targets.apply, proposal, f"applied: {why}")
        except (OSError, ValueError) as exc:
            return await self._decide(proposal, "held", f"held for a person: it could not be written ({exc})", by)
        return await asyncio.to_thread(self._decide_now, proposal, "applied", f"applied: {why}", by, applied.change,
                                       applied.before)  # fmt: skip

    async def _decide(self, proposal: Proposal, status: Status, why: str, by: str = DECIDED_BY_CHECK) -> Entry:
        return await asyncio.to_thread(self._decide_now, proposal, status, why, by)

    def _decide_now(
        self,
        proposal: Proposal,
        status: Status,
        why: str,
        by: str = DECIDED_BY_CHECK,
        applied_change: str = "",
        before: str | None = None,
    ) -> Entry:
        """Record a decision in the memory history (its own change) and in the book (blocking)."""
        change = applied_change or self.record(proposal, why)
        decision = Decision(status, why, by, self.clock().isoformat(timespec="seconds"), change, applied_change, before)
        entry = self.book.decide(proposal.id, decision)
        for listener in list(self.on_decided):
            try:
                listener(entry)
            except Exception:  # a listener's failure must not undo a decision that stands
                log.exception("a listener of review decisions failed")
        return entry

    def record(self, proposal: Proposal, why: str) -> str:
        """An empty change in the memory history of the target's scope that says what was decided and why (blocking);
        its id, or "" when there is no history. The trust gate's decisions on a turn's memories are recorded here
        too."""
        recorder = self.recorder
        if recorder is None:
            return ""
        scope = "global" if proposal.kind in ("skill", "profile") else proposal.scope
        trust = "untrusted: " + "; ".join(proposal.tainted) if proposal.tainted else "trusted"
        origin = Origin(REVIEW_PRODUCER, why=f"proposal {proposal.id} ({proposal.target}): {why}", trust=trust)
        recorder.flush()
        try:
            change = recorder.history(scope).commit({}, origin, self.clock().timestamp(), allow_empty=True)
        except (HistoryError, OSError) as exc:  # the decision stands in the book without its record
            log.warning("a review decision could not be recorded in the %s memory history: %s", scope, exc)
            return ""
        return change.id if change is not None else ""


__all__ = ["NotDecidable", "ReviewPipeline", "ReviewSettings", "UndoRefused"]
