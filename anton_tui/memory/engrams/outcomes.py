"""Whether a rule the ACC wrote works: how often its error pattern was seen before the rule landed, and since, in
turns where the rule was in the prompt.

Every turn's ACC pass reports the detectors that fired (`pattern_seen`): each detector's tally grows by one, and each
rule written for one of them that was loaded in that turn counts one more "since". When the ACC writes a rule
(`rule_written`) it remembers its detector and the tally so far (its "before", the turn that wrote it included). The
figures live in the scope's ``.retrieval.sqlite3`` beside the memory files (see `counters`), never in rules.md.

Brain analogy: the reward-prediction error closing the loop: did the correction change what keeps going wrong?
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from anton_tui.memory.engrams.counters import StatsFile

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One ACC rule's figures: its detector, the turns its pattern was seen before it landed, and since (loaded)."""

    detector: str
    before: int
    since: int
    written_at: str


class RuleOutcomes:
    """The outcome figures of one scope's ACC rules (see the module docstring)."""

    def __init__(self, stats: StatsFile) -> None:
        self.stats = stats

    def pattern_seen(self, detectors: Collection[str], loaded: Collection[str]) -> None:
        """One turn's ACC pass: the detectors that fired, and the ids of the rules that turn's prompt carried."""
        if not detectors:
            return
        try:
            with self.stats.writing() as conn:
                conn.executemany(
                    "INSERT INTO patterns (detector, seen) VALUES (?, 1) "
                    "ON CONFLICT (detector) DO UPDATE SET seen = seen + 1",
                    [(detector,) for detector in sorted(set(detectors))],
                )
                rows = conn.execute("SELECT id, detector FROM outcomes").fetchall()
                came_back = [(rule,) for rule, detector in rows if detector in detectors and rule in loaded]
                conn.executemany("UPDATE outcomes SET since = since + 1 WHERE id = ?", came_back)
        except (sqlite3.Error, OSError) as exc:
            log.warning("rule outcomes not saved in %s: %s", self.stats.path, exc)

    def rule_written(self, rule_id: str, detector: str) -> None:
        """The ACC wrote the rule `rule_id` for `detector`; its "before" is the detector's tally so far."""
        now = dt.datetime.now().isoformat(timespec="seconds")
        try:
            with self.stats.writing() as conn:
                row = conn.execute("SELECT seen FROM patterns WHERE detector = ?", (detector,)).fetchone()
                conn.execute(
                    "INSERT OR IGNORE INTO outcomes (id, detector, before, since, written_at) VALUES (?, ?, ?, 0, ?)",
                    (rule_id, detector, int(row[0]) if row else 0, now),
                )
        except (sqlite3.Error, OSError) as exc:
            log.warning("rule outcome not saved in %s: %s", self.stats.path, exc)

    def figures(self, ids: Iterable[str] | None = None) -> dict[str, Outcome]:
        """Outcome figures by rule id (those in `ids`, if given)."""
        wanted = None if ids is None else set(ids)
        try:
            with self.stats.reading() as conn:
                if conn is None:
                    return {}
                rows = conn.execute("SELECT id, detector, before, since, written_at FROM outcomes").fetchall()
        except sqlite3.Error as exc:
            log.warning("rule outcomes not read from %s: %s", self.stats.path, exc)
            return {}
        return {
            rule: Outcome(detector, before, since, at)
            for rule, detector, before, since, at in rows
            if wanted is None or rule in wanted
        }

    def pattern_count(self, detector: str) -> int:
        """Turns in which `detector` fired, in this scope's tally."""
        try:
            with self.stats.reading() as conn:
                row = (
                    None
                    if conn is None
                    else conn.execute("SELECT seen FROM patterns WHERE detector = ?", (detector,)).fetchone()
                )
        except sqlite3.Error:
            return 0
        return int(row[0]) if row else 0
