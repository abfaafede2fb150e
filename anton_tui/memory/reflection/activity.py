"""What a reflection is made from: a day's raw activity (its episodes, the ACC's journal, the memory history's
changes, the day's conversation summaries), or for a week and a month the reflections below it, with statistics.

`gather_day` reads only the day's lines of the episode log (`episodes.span`), so its cost follows the day's activity,
not the log's length. Weekly and monthly statistics are the sums of their dailies' (kept in each daily's front
matter), so the chain never reads the raw log twice. The text for the model (`Activity.brief`) is bounded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.memory.episodes.span import episodes_between
from anton_tui.memory.reflection.periods import Period

if TYPE_CHECKING:
    from anton_tui.memory.episodes.record import Episode
    from anton_tui.memory.history.recorder import MemoryRecorder
    from anton_tui.memory.learners.acc_journal import AccJournal
    from anton_tui.memory.reflection.document import Reflection
    from anton_tui.memory.skills.model import Skill

BRIEF_CHARS = 24_000
MESSAGE_CHARS, ERROR_CHARS, SUMMARY_CHARS = 300, 300, 1500
PER_SESSION_MESSAGES, MAX_ERRORS, MAX_JOURNAL, MAX_CHANGES = 12, 15, 20, 25
COUNTED = ("conversations", "user_messages", "answers", "tool_calls", "cells", "errors", "untrusted_turns",
           "acc_events", "lessons_fired", "memory_changes")  # fmt: skip
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Activity:
    """What one period's reflection reads: its statistics, why its input was untrusted (if it was), how much of
    each source it read, and the text given to the model."""

    statistics: dict[str, Any]
    tainted: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    brief: str = ""

    @property
    def user_messages(self) -> int:
        return int(self.statistics.get("user_messages", 0))


def is_error(episode: Episode) -> bool:
    if episode.role != "tool_result":
        return False
    if (episode.meta or {}).get("error"):
        return True
    return episode.content.startswith("ERROR") or TRACEBACK in episode.content


def gather_day(
    period: Period,
    zone: tzinfo | None,
    *,
    episodes_dir: Path,
    journal: AccJournal | None = None,
    recorder: MemoryRecorder | None = None,
    summaries: dict[str, str] | None = None,
) -> Activity:
    """One day's activity (see the module docstring). `summaries` maps a session id to its conversation summary."""
    start, end = period.span(zone)
    counts: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    sessions: dict[str, list[str]] = {}
    errors: list[str] = []
    untrusted: set[tuple[str, int]] = set()
    lines = 0
    for episode in episodes_between(episodes_dir, start, end):
        lines += 1
        meta = episode.meta or {}
        if meta.get("trust") == "untrusted":
            untrusted.add((episode.session, episode.turn))
        role = episode.role
        if role == "user":
            counts["user_messages"] += 1
            sessions.setdefault(episode.session, []).append("user: " + _clip(episode.content, MESSAGE_CHARS))
        elif role == "assistant":
            counts["answers"] += 1
            sessions.setdefault(episode.session, []).append("answer: " + _clip(episode.content, MESSAGE_CHARS))
        elif role == "tool_call":
            counts["tool_calls"] += 1
            tool = str(meta.get("tool") or "tool")
            tools[tool] += 1
            if tool == "scratchpad":
                counts["cells"] += 1
        elif is_error(episode):
            counts["errors"] += 1
            if len(errors) < MAX_ERRORS:
                tool = str(meta.get("tool") or "tool")
                errors.append(f"[{tool}, session {episode.session} turn {episode.turn}] "
                              f"{_clip(episode.content, ERROR_CHARS)}")  # fmt: skip
    counts["conversations"] = len(sessions)
    counts["untrusted_turns"] = len(untrusted)
    journal_lines = journal.day(period.first) if journal is not None else []
    counts["acc_events"] = sum(1 for line in journal_lines if line.kind != "lesson")
    counts["lessons_fired"] = sum(1 for line in journal_lines if line.kind == "lesson")
    changes = _changes(recorder, start, end)
    counts["memory_changes"] = len(changes)
    statistics: dict[str, Any] = {key: counts[key] for key in COUNTED}
    statistics["tools"] = dict(tools.most_common())
    tainted = tuple(f"session {session} turn {turn} read outside content" for session, turn in sorted(untrusted))
    summaries = summaries or {}
    parts = [_numbers(period, statistics)]
    if sessions:
        parts.append("## Conversations")
        for session, said in sessions.items():
            summary = summaries.get(session)
            if summary:
                parts.append(f"### Conversation {session} (its summary)\n{_clip(summary, SUMMARY_CHARS, flat=False)}")
            else:
                parts.append(
                    f"### Conversation {session}\n" + "\n".join(f"- {line}" for line in said[:PER_SESSION_MESSAGES])
                )
    if errors:
        parts.append("## Errors\n" + "\n".join(f"- {error}" for error in errors))
    if journal_lines:
        parts.append("## The ACC's journal (failures it saw, lessons it fired)\n" + "\n".join(
            f"- {line.ts[11:16]} {line.kind}{f' ({line.detector})' if line.detector else ''}: {line.summary}"
            for line in journal_lines[:MAX_JOURNAL]))  # fmt: skip
    if changes:
        parts.append("## Memory changes\n" + "\n".join(changes[:MAX_CHANGES]))
    inputs = {"episode_lines": lines, "conversations": len(sessions), "summaries": sum(1 for s in sessions if s in summaries),
              "acc_journal_lines": len(journal_lines), "memory_changes": len(changes)}  # fmt: skip
    return Activity(statistics, tainted[:10], inputs, _bounded("\n\n".join(parts)))


def _changes(recorder: MemoryRecorder | None, start: datetime, end: datetime) -> list[str]:
    if recorder is None:
        return []
    first, last = start.timestamp(), end.timestamp()
    found = []
    for change in recorder.log():
        if change.time < first:
            break  # newest first
        if change.time >= last or change.producer == "baseline":
            continue
        moment = datetime.fromtimestamp(change.time, start.tzinfo).strftime("%H:%M")
        why = f" ({_clip(change.why, 120)})" if change.why else ""
        found.append(f"- {moment} {change.producer} ({change.scope}): {_clip(change.summary, 160)}{why}")
    return list(reversed(found))


def summed(reflections: Iterable[Reflection]) -> dict[str, Any]:
    """The statistics of a week or a month: the sums of its reflections' own, and how many days were active."""
    totals: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    active = 0
    for reflection in reflections:
        stats = reflection.statistics
        for key in COUNTED:
            value = stats.get(key, 0)
            totals[key] += value if isinstance(value, int) else 0
        tools.update({str(k): v for k, v in (stats.get("tools") or {}).items() if isinstance(v, int)})
        if reflection.period.kind == "daily":
            active += 0 if reflection.quiet else 1
        else:
            active += int(stats.get("active_days", 0))
    statistics: dict[str, Any] = {key: totals[key] for key in COUNTED}
    statistics["active_days"] = active
    statistics["tools"] = dict(tools.most_common())
    return statistics


def chain_brief(period: Period, statistics: dict[str, Any], below: list[Reflection], skills: list[Skill] | None) -> str:
    """The text for a weekly or monthly reflection: its numbers, the notes of the reflections below it, and for a
    month the skill catalogue with each skill's use."""
    parts = [_numbers(period, statistics)]
    for reflection in below:
        quiet = " (quiet)" if reflection.quiet else ""
        parts.append(f"## {reflection.heading}{quiet}\n{reflection.notes}")
    if skills is not None:
        rows = [f"- {skill.label}: recalled {skill.stats.total_recalls} times"
                f"{f', last {skill.stats.stage(1).last_used[:10]}' if skill.stats.stage(1).last_used else ''}"
                f" — {_clip(skill.cue, 160)}" for skill in skills]  # fmt: skip
        parts.append("## Skill catalogue and use\n" + ("\n".join(rows) if rows else "No skills saved."))
    return _bounded("\n\n".join(parts))


def _numbers(period: Period, statistics: dict[str, Any]) -> str:
    span = period.label if period.kind == "daily" else f"{period.label} ({period.first} to {period.last})"
    rows = [f"- {key.replace('_', ' ')}: {statistics[key]}" for key in (*COUNTED, "active_days") if key in statistics]
    tools = statistics.get("tools") or {}
    if tools:
        rows.append("- tools used: " + ", ".join(f"{name} {count}" for name, count in tools.items()))
    return f"# {period.kind.capitalize()} period {span}\n## Statistics\n" + "\n".join(rows)


def _clip(text: str, limit: int, *, flat: bool = True) -> str:
    text = " ".join(text.split()) if flat else text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded(text: str) -> str:
    return text if len(text) <= BRIEF_CHARS else text[: BRIEF_CHARS - 40] + "\n\n[… the rest was left out]"
