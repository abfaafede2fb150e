"""Per-entry retrieval counters of one memory scope: how often each rule or lesson was a candidate for a turn, was
loaded, was left out, and when it was last loaded; a rule left out of a long stretch of turns is *dormant*.

They live beside the memory files, in ``.retrieval.sqlite3`` in the scope's memory folder, never in ``rules.md`` or
``lessons.md`` (those stay byte for byte what Anton reads). Entries are named by their id (the sha256 of the text),
so an edited rule starts counting afresh. `RetrievalCounters.record` is called once per prompt the agent really sends
(`memory context` from the command line only reads); the outcome figures of the ACC's rules (`outcomes`) are kept in
the same file. A store that cannot be opened or written is logged and left alone: counting never costs a turn.

Brain analogy: use-dependent plasticity: traces that are retrieved stay strong, traces never retrieved fade.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = ".retrieval.sqlite3"
DORMANT_AFTER = 200  # prompts built since a rule was last loaded (or first seen) before it counts as dormant
FILES = ("rules", "lessons")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    file TEXT NOT NULL, id TEXT NOT NULL,
    candidate INTEGER NOT NULL DEFAULT 0, loaded INTEGER NOT NULL DEFAULT 0, left_out INTEGER NOT NULL DEFAULT 0,
    first_seen INTEGER NOT NULL, last_loaded INTEGER, last_loaded_at TEXT,
    PRIMARY KEY (file, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS patterns (detector TEXT PRIMARY KEY, seen INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS outcomes (
    id TEXT PRIMARY KEY, detector TEXT NOT NULL, before INTEGER NOT NULL, since INTEGER NOT NULL DEFAULT 0,
    written_at TEXT NOT NULL
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class EntryFigures:
    """One entry's counters: prompts it was a candidate for, was loaded into, was left out of; when last loaded."""

    candidate: int = 0
    loaded: int = 0
    left_out: int = 0
    last_loaded_at: str | None = None  # ISO date and time
    idle: int = 0  # prompts built since it was last loaded (or first seen)

    @property
    def dormant(self) -> bool:
        return self.idle >= DORMANT_AFTER


@dataclass(frozen=True, slots=True)
class PromptRecord:
    """What one prompt did with one scope's entries (ids per file): loaded, left out, and everything present."""

    loaded: Mapping[str, Collection[str]]
    left_out: Mapping[str, Collection[str]]
    present: Mapping[str, Collection[str]]


class StatsFile:
    """The scope's ``.retrieval.sqlite3``, opened on first use; one connection, used under a lock."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / FILE_NAME
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection | None]:
        """A connection to read through, or None when there is no file yet (nothing is created)."""
        with self._lock:
            if self._conn is None and not self.path.is_file():
                yield None
                return
            yield self._open()

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one write transaction (committed at the end, rolled back on an error)."""
        with self._lock:
            conn = self._open()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")  # a counted prompt costs no wait for the disk (synchronous below)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _count(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'prompts'").fetchone()
    return int(row[0]) if row else 0


class RetrievalCounters:
    """The counters of one scope (see the module docstring)."""

    def __init__(self, stats: StatsFile) -> None:
        self.stats = stats
        self._present_seen: dict[
            str, Collection[str]
        ] = {}  # the ids noted last, per file (the same list while unchanged)

    def record(self, prompt: PromptRecord, at: dt.datetime | None = None) -> None:
        """Count one prompt (sent `at`, default now). Entries present for the first time start their idle stretch
        here."""
        now = (at or dt.datetime.now()).isoformat(timespec="seconds")
        try:
            with self.stats.writing() as conn:
                number = _count(conn) + 1
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('prompts', ?)", (number,))
                for file in FILES:
                    present = prompt.present.get(file, ())
                    if self._present_seen.get(file) is not present:
                        self._note_present(conn, file, frozenset(present), number)
                        self._present_seen[file] = present
                    conn.executemany(
                        "UPDATE entries SET candidate = candidate + 1, loaded = loaded + 1, last_loaded = ?, "
                        "last_loaded_at = ? WHERE file = ? AND id = ?",
                        [(number, now, file, entry) for entry in prompt.loaded.get(file, ())],
                    )
                    conn.executemany(
                        "UPDATE entries SET candidate = candidate + 1, left_out = left_out + 1 WHERE file = ? AND id = ?",
                        [(file, entry) for entry in prompt.left_out.get(file, ())],
                    )
        except (sqlite3.Error, OSError) as exc:
            log.warning("retrieval counters not saved in %s: %s", self.stats.path, exc)

    @staticmethod
    def _note_present(conn: sqlite3.Connection, file: str, present: frozenset[str], number: int) -> None:
        """Rows for entries new to the file; rows of entries no longer in it go (their text changed or left)."""
        conn.executemany(
            "INSERT OR IGNORE INTO entries (file, id, first_seen) VALUES (?, ?, ?)",
            [(file, entry, number) for entry in present],
        )
        known = {entry for (entry,) in conn.execute("SELECT id FROM entries WHERE file = ?", (file,))}
        conn.executemany("DELETE FROM entries WHERE file = ? AND id = ?", [(file, entry) for entry in known - present])

    def prompts(self) -> int:
        """Prompts counted so far in this scope."""
        try:
            with self.stats.reading() as conn:
                return _count(conn) if conn is not None else 0
        except sqlite3.Error:
            return 0

    def figures(self, file: str, ids: Iterable[str] | None = None) -> dict[str, EntryFigures]:
        """Counters of the entries of one file (``"rules"`` or ``"lessons"``) by id (those in `ids`, if given)."""
        wanted = None if ids is None else set(ids)
        found: dict[str, EntryFigures] = {}
        try:
            with self.stats.reading() as conn:
                if conn is None:
                    return {}
                number = _count(conn)
                rows = conn.execute(
                    "SELECT id, candidate, loaded, left_out, last_loaded_at, first_seen, last_loaded FROM entries "
                    "WHERE file = ?",
                    (file,),
                )
                for entry, candidate, loaded, left_out, at, first_seen, last_loaded in rows:
                    if wanted is None or entry in wanted:
                        idle = number - (last_loaded if last_loaded is not None else first_seen)
                        found[entry] = EntryFigures(candidate, loaded, left_out, at, idle)
        except sqlite3.Error as exc:
            log.warning("retrieval counters not read from %s: %s", self.stats.path, exc)
        return found
