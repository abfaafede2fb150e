"""Writing the reflections that are due: the daily, weekly and monthly chain of one project, and the proposals each
reflection makes, handed to the review pipeline.

`Reflector.run` catches up on every period that ended since the last reflection of its kind (`periods.due`), days
first so that a week finds its days written, and a week or month first writes the days it needs. A period below the
activity threshold (fewer user messages than `min_messages`) gets a one-line quiet note and no model call. A model
that cannot be reached writes nothing for that period, so the next run tries it again. After a reflection is written
its proposals go through the review one by one, and the reflection's front matter follows their decisions, then and
later (`refresh`, called by the pipeline after each decision).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.memory.episodes.record import SUFFIX, session_start
from anton_tui.memory.reflection.activity import Activity, chain_brief, gather_day, summed
from anton_tui.memory.reflection.document import ProposalLine, Reflection, ReflectionFiles, ReflectionFormatError
from anton_tui.memory.reflection.periods import CATCH_UP_DAYS, KINDS, Period, PeriodKind, due

if TYPE_CHECKING:
    from anton_tui.llm.client import LLMClient
    from anton_tui.memory.episodes.summaries import SummaryFiles
    from anton_tui.memory.history.recorder import MemoryRecorder
    from anton_tui.memory.learners.acc_journal import AccJournal
    from anton_tui.memory.reflection.draft import ProposedChange
    from anton_tui.memory.review.book import Entry
    from anton_tui.memory.review.pipeline import ReviewPipeline
    from anton_tui.memory.review.proposal import Proposal
    from anton_tui.memory.skills.store import SkillStore

log = logging.getLogger(__name__)

DEFAULT_MIN_MESSAGES = 3
LOWER: dict[PeriodKind, PeriodKind] = {"weekly": "daily", "monthly": "weekly"}


@dataclass(frozen=True)
class ProposalOutcome:
    """What became of one proposal: as `anton-tui reflect --json` prints it."""

    id: str
    kind: str
    target: str
    status: str
    why: str
    reflection: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "kind": self.kind, "target": self.target, "status": self.status, "why": self.why,
                "reflection": self.reflection}  # fmt: skip


@dataclass
class ReflectionReport:
    """What a run wrote: the reflections' paths, the quiet periods, the proposals, and the periods that failed."""

    written: list[Path] = field(default_factory=list)
    quiet: list[str] = field(default_factory=list)
    proposals: list[ProposalOutcome] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "written": [str(path) for path in self.written],
            "quiet": list(self.quiet),
            "proposals": [outcome.to_json() for outcome in self.proposals],
            "failed": list(self.failed),
        }


def _local_now() -> datetime:
    return datetime.now().astimezone()


@contextlib.contextmanager
def _one_writer(folder: Path) -> Iterator[bool]:
    """Whether this process may write the reflections now: one process at a time (the app in the background and
    `anton-tui reflect` from cron, say), held by a lock on ``<folder>/.writing``; the other one does nothing."""
    if not folder.parent.is_dir():  # no project folder (.anton) yet: nothing to reflect on, nothing to lock
        yield True
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / ".writing", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield True  # a folder that cannot hold the lock: the writes will say what is wrong
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


class Reflector:
    """The reflection chain of one project (see the module docstring)."""

    def __init__(
        self,
        files: ReflectionFiles,
        *,
        episodes_dir: Path,
        skills: SkillStore,
        journal: AccJournal | None = None,
        recorder: MemoryRecorder | None = None,
        summaries: SummaryFiles | None = None,
        llm: Callable[[], LLMClient | None] = lambda: None,
        pipeline: ReviewPipeline | None = None,
        min_messages: int = DEFAULT_MIN_MESSAGES,
        clock: Callable[[], datetime] = _local_now,
    ) -> None:
        self.files = files
        self.episodes_dir = Path(episodes_dir)
        self.skills = skills
        self.journal = journal
        self.recorder = recorder
        self.summaries = summaries
        self.llm = llm
        self.pipeline = pipeline
        self.min_messages = min_messages
        self.clock = clock
        self._running: asyncio.Lock | None = None
        self._first_day: date | None = None  # the first day with activity, as the run in progress found it
        if pipeline is not None:
            pipeline.on_decided.append(self.refresh)

    # ---- what is due -------------------------------------------------------------------------------------------

    def due(self, kinds: Iterable[PeriodKind] = KINDS, today: date | None = None) -> list[Period]:
        """The periods to write now, days first (blocking: it lists the folders)."""
        today = today or self.clock().date()
        first_active = self._first_active(today)
        found = []
        for kind in KINDS:
            if kind in kinds:
                found += due(kind, today, self.files.last(kind), first_active)
        return found

    def _first_active(self, today: date) -> date | None:
        """The first day of the catch-up window with any episode (read from the session files' names and times)."""
        horizon = today - timedelta(days=CATCH_UP_DAYS)
        zone = self.clock().tzinfo
        try:
            names = [name for name in self.episodes_dir.iterdir() if name.suffix == SUFFIX]
        except (FileNotFoundError, NotADirectoryError):
            names = []
        earliest: date | None = None
        for path in names:
            began = session_start(path.stem)
            if began is None:
                continue
            day = began.astimezone(zone).date()
            if day < horizon:
                try:
                    if datetime.fromtimestamp(path.stat().st_mtime, zone).date() < horizon:
                        continue
                except OSError:
                    continue
                day = horizon
            earliest = day if earliest is None or day < earliest else earliest
        return earliest

    # ---- writing -----------------------------------------------------------------------------------------------

    async def run(
        self, kinds: Iterable[PeriodKind] = KINDS, *, force: bool = False, today: date | None = None
    ) -> ReflectionReport:
        """Write every reflection due (with `force`, the last ended period of each kind again as well, and with a
        model call below the threshold too, unless it saw no activity at all)."""
        if self._running is None:
            self._running = asyncio.Lock()
        kinds = tuple(kinds)
        today = today or self.clock().date()
        report = ReflectionReport()
        async with self._running:
            with _one_writer(self.files.folder) as alone:
                if not alone:
                    report.failed.append("another process is writing this project's reflections; nothing was done")
                    return report
                await self._run(kinds, force, today, report)
        return report

    async def _run(self, kinds: tuple[PeriodKind, ...], force: bool, today: date, report: ReflectionReport) -> None:
        periods = await asyncio.to_thread(self.due, kinds, today)
        self._first_day = await asyncio.to_thread(self._first_active, today)
        if force:
            for kind in KINDS:
                last = Period.containing(kind, today).first - timedelta(days=1)
                latest = Period.containing(kind, last)
                if kind in kinds and latest not in periods:
                    periods.append(latest)
        for period in sorted(periods, key=lambda p: (KINDS.index(p.kind), p.first)):
            await self._reflect(period, report, force=force, today=today)

    async def _reflect(self, period: Period, report: ReflectionReport, *, force: bool, today: date) -> None:
        lower = LOWER.get(period.kind)
        if lower is not None:  # the days (or weeks) it is made from come first, from the first active one
            first = self._first_day
            for below in self._periods_within(lower, period):
                if first is None or below.last < first or not below.ended_by(today):
                    continue
                if await asyncio.to_thread(self.files.read_or_none, below) is None:
                    await self._reflect(below, report, force=False, today=today)
        activity, below_notes = await asyncio.to_thread(self._activity, period)
        label = f"{period.kind} {period.label}"
        start, end = (moment.isoformat(timespec="seconds") for moment in period.span(self.clock().tzinfo))
        written = self.clock().isoformat(timespec="seconds")
        threshold = 1 if force else self.min_messages
        if activity.user_messages < threshold or (
            period.kind != "daily" and not activity.statistics.get("active_days")
        ):
            note = self._quiet_note(period, activity)
            reflection = Reflection(period, start, end, written, True, note, "", activity.tainted, activity.inputs,
                                    activity.statistics)  # fmt: skip
            await asyncio.to_thread(self.files.write, reflection)
            report.quiet.append(label)
            return
        llm = self.llm()
        if llm is None:
            report.failed.append(f"{label}: there is no model to write it with")
            return
        from anton_tui.llm.errors import LLMError
        from anton_tui.memory.reflection.draft import MAX_PROPOSALS, draft

        try:
            drafted = await draft(llm, period.kind, activity.brief)
        except LLMError as exc:
            report.failed.append(f"{label}: {exc}")
            return
        relative = f"{period.kind}/{period.label}.md"
        proposals = await asyncio.to_thread(self._proposals, drafted.proposals[:MAX_PROPOSALS], activity, relative,
                                            written)  # fmt: skip
        reflection = Reflection(
            period, start, end, written, False, drafted.notes, " ".join(drafted.title.split()), activity.tainted,
            activity.inputs | ({"below": below_notes} if below_notes else {}), activity.statistics,
            tuple(ProposalLine(p.id, p.kind, p.target, p.text, "proposed", p.why) for p in proposals),
        )  # fmt: skip
        path = await asyncio.to_thread(self.files.write, reflection)
        report.written.append(path)
        for proposal in proposals:
            if self.pipeline is None:
                continue
            entry = await self.pipeline.submit(proposal)
            last = entry.last
            report.proposals.append(ProposalOutcome(proposal.id, proposal.kind, proposal.target, entry.status,
                                                    last.why if last is not None else "", str(path)))  # fmt: skip

    def _periods_within(self, kind: PeriodKind, period: Period) -> list[Period]:
        if kind == "daily":
            return [Period.containing("daily", day) for day in period.days]
        weeks = {Period.containing("weekly", day) for day in period.days}
        return sorted(week for week in weeks if period.first <= week.last <= period.last)

    def _activity(self, period: Period) -> tuple[Activity, list[str]]:
        zone = self.clock().tzinfo
        if period.kind == "daily":
            return gather_day(period, zone, episodes_dir=self.episodes_dir, journal=self.journal,
                              recorder=self.recorder, summaries=self._day_summaries(period)), []  # fmt: skip
        days = [r for day in self._periods_within("daily", period) if (r := self.files.read_or_none(day)) is not None]
        if period.kind == "weekly":
            below = days
            skills = None
        else:
            below = [r for week in self._periods_within("weekly", period) if (r := self.files.read_or_none(week))]
            skills = self.skills.list_all()
        statistics = summed(days)
        tainted = tuple(f"{r.period.kind} {r.period.label}: {reason}" for r in days for reason in r.tainted)
        inputs: dict[str, Any] = {f"{LOWER[period.kind]}_reflections": len(below)}
        if skills is not None:
            inputs["skills"] = len(skills)
        brief = chain_brief(period, statistics, below, skills)
        return Activity(statistics, tainted[:10], inputs, brief), [
            f"{r.period.kind}/{r.period.label}.md" for r in below
        ]

    def _day_summaries(self, period: Period) -> dict[str, str]:
        if self.summaries is None:
            return {}
        found = {}
        for session_id in self.summaries.session_ids():
            summary = self.summaries.read(session_id)
            if summary is not None and period.first.isoformat() <= summary.date <= period.last.isoformat():
                found[session_id] = summary.body
        return found

    def _quiet_note(self, period: Period, activity: Activity) -> str:
        count = activity.user_messages
        what = {"daily": "day", "weekly": "week", "monthly": "month"}[period.kind]
        said = "no message" if not count else f"{count} message{'s' if count != 1 else ''}"
        return f"Quiet {what}: {said} from the user (below {self.min_messages}), so nothing was reflected on."

    def _proposals(
        self, changes: list[ProposedChange], activity: Activity, reflection: str, created: str
    ) -> list[Proposal]:
        from anton_tui.memory.review.proposal import Proposal

        proposals = []
        for change in changes:
            if change.kind == "skill":
                label, text = self._skill_text(change, created)
                proposal = Proposal("skill", text, "global", change.why, f"reflection {reflection}", label=label)
            else:
                scope = "global" if change.kind == "profile" else change.scope
                proposal = Proposal(change.kind, " ".join(change.text.split()), scope, change.why,
                                    f"reflection {reflection}", form=change.form, topic=change.topic)  # fmt: skip
            base = self.pipeline.targets.base(proposal) if self.pipeline is not None else ""
            proposals.append(dataclasses.replace(proposal, base=base, tainted=activity.tainted,
                                                 reflection=reflection, created=created))  # fmt: skip
        return proposals

    def _skill_text(self, change: ProposedChange, created: str) -> tuple[str, str]:
        """The skill's label and the whole SKILL.md it would have: an existing skill of the user keeps its front
        matter (the procedure is replaced); a new one gets the front matter anton-agent writes."""
        from anton_tui.memory.skills.format import (
            new_front_matter,
            normalize_name,
            parse_front_matter,
            render_skill_md,
            split_skill_md,
        )

        label = normalize_name(change.skill_label or change.text[:40]) or "reflection-skill"
        body = change.text.strip() + "\n"
        current = self.skills.root / label / "SKILL.md"
        try:
            front_text, _old_body = split_skill_md(current.read_text(encoding="utf-8"))
            front = parse_front_matter(front_text)
        except (OSError, ValueError):
            front = new_front_matter(label=label, display_name=label, description=change.skill_when.strip(),
                                     when_to_use="", provenance="reflection", created_at=created)  # fmt: skip
        return label, render_skill_md(front, body)

    # ---- reading, and keeping statuses current -----------------------------------------------------------------

    def refresh(self, entry: Entry) -> None:
        """A proposal was decided: its reflection's front matter says so (blocking; called by the pipeline)."""
        relative = entry.proposal.reflection
        if not relative or entry.last is None:
            return
        kind, _, name = relative.partition("/")
        try:
            period = Period.from_label(kind, name.removesuffix(".md"))  # type: ignore[arg-type]  # checked by from_label
            reflection = self.files.read(period)
        except (ValueError, ReflectionFormatError) as exc:
            log.warning("reflection %s not brought up to date: %s", relative, exc)
            return
        if reflection is None:
            return
        updated = reflection.with_statuses({entry.proposal.id: (entry.status, entry.last.why)})
        if updated != reflection:
            self.files.write(updated)
