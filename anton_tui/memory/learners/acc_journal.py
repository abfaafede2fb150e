"""The ACC's journal: the events worth looking back on (failures, kills, resets, repairs, the round cap) and the
lessons it fired, one JSON line each, in one file per day (``<project>/.anton/acc/<YYYY-MM-DD>.jsonl``).

The ACC itself keeps nothing past a turn; the daily reflection reads a day's file to see what went wrong that day.
Routine events (each tool call, each success: severity below `MIN_SEVERITY`) are left out, so the journal stays a
small fraction of the episode log. Writing never raises: a journal that cannot be written loses its line, not the
turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import append_locked

log = logging.getLogger(__name__)

MIN_SEVERITY = 3
SUMMARY_CHARS = 300


@dataclass(frozen=True)
class JournalLine:
    """One line of the journal: an event (`kind` is the ACC's event kind) or a fired lesson (`kind` "lesson")."""

    ts: str
    kind: str
    severity: int
    summary: str
    detector: str = ""


def _local_now() -> datetime:
    return datetime.now().astimezone()


class AccJournal:
    """The journal of one project (see the module docstring)."""

    def __init__(self, folder: Path, clock: Callable[[], datetime] = _local_now) -> None:
        self.folder = Path(folder)
        self.clock = clock

    def path_for(self, day: date) -> Path:
        return self.folder / f"{day.isoformat()}.jsonl"

    def event(self, kind: str, severity: int, detail: dict[str, Any]) -> None:
        if severity < MIN_SEVERITY:
            return
        summary = " ".join(f"{key}={value}" for key, value in detail.items() if value not in ("", None))
        self._append({"kind": kind, "severity": severity, "summary": summary[:SUMMARY_CHARS]})

    def lesson(self, detector: str, rule: str, severity: int) -> None:
        self._append({"kind": "lesson", "severity": severity, "summary": rule[:SUMMARY_CHARS], "detector": detector})

    def _append(self, item: dict[str, Any]) -> None:
        now = self.clock()
        line = json.dumps({"ts": now.isoformat(timespec="seconds"), **item}, ensure_ascii=False) + "\n"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            append_locked(self.path_for(now.date()), line.encode("utf-8"))
        except OSError as exc:
            log.debug("ACC journal line not written: %s", exc)

    def day(self, day: date) -> list[JournalLine]:
        """The lines of one day, in order (a line that cannot be read is skipped)."""
        try:
            raw = self.path_for(day).read_bytes()
        except OSError:
            return []
        lines = []
        for text in raw.splitlines():
            try:
                item = json.loads(text)
                lines.append(JournalLine(str(item["ts"]), str(item["kind"]), int(item.get("severity", 1)),
                                         str(item.get("summary", "")), str(item.get("detector", ""))))  # fmt: skip
            except (ValueError, KeyError, TypeError):
                continue
        return lines
