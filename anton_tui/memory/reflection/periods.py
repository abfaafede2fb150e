"""The periods reflections are written for: days, ISO weeks (Monday to Sunday) and calendar months, in local time.

A period is due once it has ended. Catching up runs every period of a kind that ended since the last reflection of
that kind, oldest first, but none that ended more than `CATCH_UP_DAYS` (35) days ago; with no earlier reflection of
the kind, it starts at the first period with any activity in that window.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal

PeriodKind = Literal["daily", "weekly", "monthly"]
KINDS: tuple[PeriodKind, ...] = ("daily", "weekly", "monthly")
CATCH_UP_DAYS = 35


@dataclass(frozen=True, order=True)
class Period:
    """One day, ISO week or month: `first` and `last` are its first and last days."""

    kind: PeriodKind
    first: date
    last: date

    @classmethod
    def containing(cls, kind: PeriodKind, day: date) -> Period:
        if kind == "daily":
            return cls(kind, day, day)
        if kind == "weekly":
            monday = day - timedelta(days=day.weekday())
            return cls(kind, monday, monday + timedelta(days=6))
        days = calendar.monthrange(day.year, day.month)[1]
        return cls(kind, day.replace(day=1), day.replace(day=days))

    @classmethod
    def from_label(cls, kind: PeriodKind, label: str) -> Period:
        """The period a label names ("2026-11-20", "2026-W47", "2026-11"); ValueError for anything else."""
        if kind not in KINDS:
            raise ValueError(f"unknown period {kind!r}")
        if kind == "daily":
            return cls.containing(kind, date.fromisoformat(label))
        if kind == "weekly":
            year, _, week = label.partition("-W")
            return cls.containing(kind, date.fromisocalendar(int(year), int(week), 1))
        year, _, month = label.partition("-")
        if len(month) != 2:
            raise ValueError(f"not a month: {label!r}")
        return cls.containing(kind, date(int(year), int(month), 1))

    @property
    def label(self) -> str:
        """The name of its file: the day (2026-11-20), the ISO week (2026-W47) or the month (2026-11)."""
        if self.kind == "daily":
            return self.first.isoformat()
        if self.kind == "weekly":
            year, week, _ = self.first.isocalendar()
            return f"{year}-W{week:02d}"
        return self.first.strftime("%Y-%m")

    @property
    def days(self) -> list[date]:
        return [self.first + timedelta(days=n) for n in range((self.last - self.first).days + 1)]

    def span(self, zone: tzinfo | None) -> tuple[datetime, datetime]:
        """Its start and end as moments in time zone `zone` (the end is the next period's start)."""
        start = datetime.combine(self.first, time(), zone)
        end = datetime.combine(self.last + timedelta(days=1), time(), zone)
        return start, end

    def next(self) -> Period:
        return Period.containing(self.kind, self.last + timedelta(days=1))

    def ended_by(self, today: date) -> bool:
        return self.last < today


def due(kind: PeriodKind, today: date, last_written: Period | None, first_active: date | None) -> list[Period]:
    """The periods of `kind` to write now, oldest first (see the module docstring)."""
    horizon = today - timedelta(days=CATCH_UP_DAYS)
    if last_written is not None:
        period = last_written.next()
    elif first_active is not None:
        period = Period.containing(kind, first_active)
    else:
        return []
    while period.last < horizon:
        period = period.next()
    found = []
    while period.ended_by(today):
        found.append(period)
        period = period.next()
    return found
