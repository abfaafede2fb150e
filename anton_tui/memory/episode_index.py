"""A search index over the episode files, so recall is ranked and stays fast across years of sessions.

The index is a SQLite database beside the JSONL files (``.recall-index.sqlite3``). It holds a copy of every
recallable line plus two FTS5 indexes: one of stemmed words (so "prices" finds "price", ranked by BM25) and one of
trigrams (so "gecko" finds "CoinGecko", exactly like a plain substring search). It is derived data: each file's
indexed byte offset, size, mtime and inode are remembered, new lines are added as they appear, a rewritten file is
indexed again, and a missing, outdated or damaged database is rebuilt from the files. Readers hold a shared lock
and the one process updating it an exclusive one; a process that cannot get the lock it needs within a moment
raises `IndexUnavailable`, and the caller scans the files instead.

Brain analogy: hippocampal indexing — a compact set of pointers that lets a cue reactivate a whole episode without
replaying every stored memory.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from anton_tui.memory.episodes import (
    MEMORY_ROLES,
    SESSION_FORMAT,
    SUFFIX,
    Episode,
    decode_line,
    reading,
    session_start,
    split_lines,
)

logger = logging.getLogger(__name__)

INDEX_NAME = ".recall-index.sqlite3"
LOCK_NAME = ".recall-index.lock"
SCHEMA_VERSION = 1
TAIL_BYTES = 64
SLOT_BITS = 20  # a line's rowid is (turn key << SLOT_BITS) | its position in the turn
WINDOW = 2000  # each match list is ranked over its newest WINDOW lines, so common words stay fast
BATCH = 5000
EXACT_SCORE = -1.0  # what a line containing the query's exact text adds (BM25 scores are negative: lower is better)
_WORD = re.compile(r"[^\W_]+")

_SCHEMA = """
CREATE TABLE files(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, started TEXT,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    indexed_bytes INTEGER NOT NULL, line_count INTEGER NOT NULL, tail_hash BLOB NOT NULL);
CREATE TABLE turns(
    key INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, turn INTEGER NOT NULL, lines INTEGER NOT NULL,
    UNIQUE(file_id, turn));
CREATE TABLE lines(
    id INTEGER PRIMARY KEY, ts TEXT NOT NULL, session TEXT NOT NULL, turn INTEGER NOT NULL, role TEXT NOT NULL,
    content TEXT NOT NULL, meta TEXT NOT NULL);
CREATE VIRTUAL TABLE words USING fts5(
    content, content='lines', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE grams USING fts5(content, content='lines', content_rowid='id', tokenize='trigram');
"""


class IndexUnavailable(Exception):
    """The index cannot answer right now (busy, unwritable or unreadable); scan the files instead."""


@dataclass
class RefreshStats:
    files_checked: int = 0
    lines_added: int = 0
    files_reindexed: list[str] = field(default_factory=list)
    files_removed: int = 0
    rebuilt: bool = False


@dataclass
class _Known:
    id: int
    size: int
    mtime_ns: int
    inode: int
    indexed_bytes: int
    line_count: int
    tail_hash: bytes


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return not isinstance(exc, sqlite3.OperationalError)


def _tail_hash(fd: int, end: int) -> bytes:
    """A fingerprint of the bytes just before `end`, to tell an append from a rewrite in place."""
    start = max(end - TAIL_BYTES, 0)
    return hashlib.sha1(os.pread(fd, end - start, start)).digest()


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


class _UpdateLock:
    """The index's lock file: held shared while reading the index, exclusive while changing or replacing it."""

    def __init__(self, path: Path) -> None:
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise IndexUnavailable(f"cannot open the index lock: {exc}") from exc

    def take(self, mode: int, wait: float) -> None:
        """Hold the lock in `mode` (polling up to `wait` seconds); `IndexUnavailable` when it stays taken."""
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self.fd, mode | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexUnavailable("another process is updating the recall index") from None
                time.sleep(0.005)

    def __enter__(self) -> _UpdateLock:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class RecallIndex:
    """The derived search index of one episodes folder."""

    def __init__(self, episodes_dir: Path, *, lock_wait: float = 0.25) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.path = self.episodes_dir / INDEX_NAME
        self.lock_wait = lock_wait
        self.last_refresh: RefreshStats | None = None
        self._conn: sqlite3.Connection | None = None
        self._conn_inode: int | None = None
        self._known_cache: tuple[int, dict[str, _Known] | None] | None = None
        self._guard = threading.RLock()

    # ---- public ------------------------------------------------------------------------------------------

    def search(self, query: str, *, max_results: int, since: datetime | None = None) -> list[list[Episode]]:
        """The best `max_results` turns for `query`, each as its episodes in file order."""
        return self._retrying(lambda: self._search(query, max_results, since))

    def refresh(self, *, wait: float | None = None) -> RefreshStats:
        """Bring the index up to date with the files now; `IndexUnavailable` if another process holds the lock."""

        def run() -> RefreshStats:
            with self._locked(fcntl.LOCK_EX, wait):
                return self._refresh()

        return self._retrying(run)

    def close(self) -> None:
        with self._guard:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._conn_inode = None
            self._known_cache = None

    def _retrying(self, action):
        """Run `action`; a damaged database is deleted and rebuilt once, any other database error is reported."""
        with self._guard:
            try:
                return action()
            except sqlite3.DatabaseError as exc:
                if not _is_corruption(exc):
                    raise IndexUnavailable(f"{self.path}: {exc}") from exc
                logger.warning("Recall index %s is damaged (%s); rebuilding it from the episode files", self.path, exc)
            with self._locked(fcntl.LOCK_EX):
                self._remove_database()
            try:
                return action()
            except sqlite3.DatabaseError as exc:
                raise IndexUnavailable(f"{self.path}: {exc}") from exc

    # ---- connection and lock -----------------------------------------------------------------------------

    def _locked(self, mode: int, wait: float | None = None) -> _UpdateLock:
        lock = _UpdateLock(self.episodes_dir / LOCK_NAME)
        try:
            lock.take(mode, self.lock_wait if wait is None else wait)
        except BaseException:
            lock.__exit__()
            raise
        return lock

    def _connection(self) -> sqlite3.Connection:
        """The open database, reopened when the file was replaced (rebuilt by another process)."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            inode = None
        if self._conn is not None and inode == self._conn_inode:
            return self._conn
        self.close()
        try:
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-32768")
            self._conn_inode = os.stat(self.path).st_ino
        except (sqlite3.OperationalError, FileNotFoundError) as exc:
            raise IndexUnavailable(f"cannot open {self.path}: {exc}") from exc
        self._conn = conn
        return conn

    def _remove_database(self) -> None:
        """Delete the database and its journal (only ever under the exclusive lock, so no reader is inside)."""
        self.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _create_schema(self) -> sqlite3.Connection:
        self._remove_database()
        conn = self._connection()
        try:
            conn.executescript(_SCHEMA + f"PRAGMA user_version={SCHEMA_VERSION};")
        except sqlite3.OperationalError as exc:
            raise IndexUnavailable(f"cannot create {self.path}: {exc}") from exc
        return conn

    # ---- keeping up with the files ---------------------------------------------------------------------

    def _disk_files(self) -> dict[str, os.stat_result]:
        found = {}
        try:
            with os.scandir(self.episodes_dir) as entries:
                for entry in entries:
                    if entry.name.endswith(SUFFIX) and not entry.name.startswith(".") and entry.is_file():
                        found[entry.name[: -len(SUFFIX)]] = entry.stat()
        except FileNotFoundError:
            pass
        return found

    def _known(self, conn: sqlite3.Connection) -> dict[str, _Known] | None:
        """What the index holds per file, or None when the database has no (current) schema.

        Cached until another connection commits (`data_version` moves) or this one refreshes.
        """
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if self._known_cache is not None and self._known_cache[0] == version:
            return self._known_cache[1]
        known = None
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            rows = conn.execute(
                "SELECT name, id, size, mtime_ns, inode, indexed_bytes, line_count, tail_hash FROM files"
            )
            known = {row[0]: _Known(*row[1:]) for row in rows}
        self._known_cache = (version, known)
        return known

    @staticmethod
    def _unchanged(st: os.stat_result, known: _Known | None) -> bool:
        if known is None:
            return False
        return (st.st_size, st.st_mtime_ns, st.st_ino) == (known.size, known.mtime_ns, known.inode)

    def _is_current(self, known: dict[str, _Known] | None, disk: dict[str, os.stat_result]) -> bool:
        if known is None or known.keys() != disk.keys():
            return False
        return all(self._unchanged(st, known[name]) for name, st in disk.items())

    def _refresh(self) -> RefreshStats:
        """Index what changed in the files since the last update (the caller holds the exclusive lock)."""
        stats = RefreshStats()
        known = self._known(self._connection()) if self.path.exists() else None
        if known is None:
            known, stats.rebuilt = {}, True
            self._create_schema()
        conn = self._connection()
        disk = self._disk_files()
        stats.files_checked = len(disk)
        self._known_cache = None
        conn.execute("BEGIN IMMEDIATE")
        try:
            writer = _LineWriter(conn)
            for name in known.keys() - disk.keys():
                _forget(conn, known[name].id)
                stats.files_removed += 1
            for name, st in sorted(disk.items()):
                if not self._unchanged(st, known.get(name)):
                    stats.lines_added += self._index_file(conn, writer, name, known.get(name), stats)
            writer.flush()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            self._known_cache = None
        self.last_refresh = stats
        return stats

    def _index_file(
        self, conn: sqlite3.Connection, writer: _LineWriter, name: str, old: _Known | None, stats: RefreshStats
    ) -> int:
        """Index the part of one file not indexed yet (all of it if the file was rewritten); returns lines added."""
        path = self.episodes_dir / f"{name}{SUFFIX}"
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            if old is not None:
                _forget(conn, old.id)
            return 0
        except OSError as exc:
            logger.warning("Cannot read %s for the recall index: %s", path, exc)
            return 0
        with handle, reading(handle.fileno()):
            st = os.fstat(handle.fileno())
            start, line_no = 0, 0
            if old is not None and _appended_to(handle.fileno(), st, old):
                start, line_no = old.indexed_bytes, old.line_count
            elif old is not None:
                _forget(conn, old.id, keep_turns=True)
                stats.files_reindexed.append(name)
                start, line_no = 0, 0
            data = os.pread(handle.fileno(), max(st.st_size - start, 0), start)
            episodes, indexed_bytes = [], start
            for offset, raw, complete in split_lines(data, base=start):
                episode = decode_line(path, line_no + 1, offset, raw, complete)
                if not complete and episode is None:
                    break  # a torn last line stays unindexed; it is looked at again when the file changes
                line_no += 1
                indexed_bytes = offset + len(raw) + complete
                if episode is not None and episode.role not in MEMORY_ROLES:
                    episodes.append(episode)
            tail_hash = _tail_hash(handle.fileno(), indexed_bytes)
        state = (st.st_size, st.st_mtime_ns, st.st_ino, indexed_bytes, line_no, tail_hash)
        if old is not None:
            file_id = old.id
            conn.execute(
                "UPDATE files SET size=?, mtime_ns=?, inode=?, indexed_bytes=?, line_count=?, tail_hash=? WHERE id=?",
                (*state, file_id),
            )
        else:
            file_id = conn.execute(
                "INSERT INTO files(size, mtime_ns, inode, indexed_bytes, line_count, tail_hash, name, started)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*state, name, name if session_start(name) else None),
            ).lastrowid
        return writer.add_file(file_id, path, episodes)

    # ---- searching -----------------------------------------------------------------------------------------

    def _search(self, query: str, max_results: int, since: datetime | None) -> list[list[Episode]]:
        with self._locked(fcntl.LOCK_SH) as lock:
            current = self.path.exists() and self._is_current(self._known(self._connection()), self._disk_files())
            if not current:
                lock.take(fcntl.LOCK_EX, self.lock_wait)
                self._refresh()
            conn = self._connection()
            conn.execute("BEGIN")
            try:
                keys = self._best_turns(conn, self._line_scores(conn, query), max_results, since)
                return [self._load_turn(conn, key) for key in keys]
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    @staticmethod
    def _line_scores(conn: sqlite3.Connection, query: str) -> dict[int, float]:
        """Matching line ids with their scores: BM25 of the stemmed words, plus a fixed bonus for the exact text.

        (FTS5 would count every match of the whole trigram phrase to weigh it, which is what makes BM25 on the
        substring index slow for common text; the word index carries the ranking.)
        """
        scores: dict[int, float] = {}

        def collect(sql: str, *params: str) -> None:
            for rowid, score in conn.execute(sql + " ORDER BY rowid DESC LIMIT ?", (*params, WINDOW)):
                scores[rowid] = scores.get(rowid, 0.0) + score

        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
        words_sql = "SELECT rowid, bm25(words) FROM words WHERE words MATCH ?"
        if words:
            collect(words_sql, " ".join(_phrase(w) for w in words))
        if not query.isascii():  # SQLite folds a few non-ASCII letters differently from Python: check each hit
            pattern = re.compile(re.escape(query), re.IGNORECASE)
            conn.create_function("same_text", 1, lambda text: pattern.search(text) is not None, deterministic=True)
        if len(query) >= 3:
            check = "" if query.isascii() else " AND same_text(content)"
            collect(f"SELECT rowid, {EXACT_SCORE} FROM grams WHERE grams MATCH ?" + check, _phrase(query))
        elif query.isascii():
            like = "%" + re.sub(r"([\\%_])", r"\\\1", query) + "%"
            collect(f"SELECT id AS rowid, {EXACT_SCORE} FROM lines WHERE content LIKE ? ESCAPE '\\'", like)
        else:
            collect(f"SELECT id AS rowid, {EXACT_SCORE} FROM lines WHERE same_text(content)")
        if not scores and len(words) > 1:  # nothing has every word: rank lines by any of them
            for word in words:
                collect(words_sql, _phrase(word))
        return scores

    @staticmethod
    def _best_turns(
        conn: sqlite3.Connection, scores: dict[int, float], limit: int, since: datetime | None
    ) -> list[int]:
        """Keys of the best `limit` turns: summed line scores (lower is better), ties newest first.

        Turn keys grow in the order turns were recorded (a build takes files oldest first), so the larger key is
        the newer turn.
        """
        totals: dict[int, float] = {}
        for rowid, score in scores.items():
            key = rowid >> SLOT_BITS
            totals[key] = totals.get(key, 0.0) + score
        if since is not None and totals:
            rows = conn.execute(
                "SELECT t.key FROM turns t JOIN files f ON f.id = t.file_id"
                " WHERE t.key IN (SELECT value FROM json_each(?)) AND f.started >= ?",
                (json.dumps(list(totals)), since.strftime(SESSION_FORMAT)),
            )
            totals = {key: totals[key] for (key,) in rows}
        return sorted(totals, key=lambda key: (round(totals[key], 6), -key))[:limit]

    @staticmethod
    def _load_turn(conn: sqlite3.Connection, key: int) -> list[Episode]:
        rows = conn.execute(
            "SELECT ts, session, turn, role, content, meta FROM lines WHERE id BETWEEN ? AND ? ORDER BY id",
            (key << SLOT_BITS, ((key + 1) << SLOT_BITS) - 1),
        )
        return [Episode(*row[:5], json.loads(row[5])) for row in rows]


class _LineWriter:
    """Adds episodes to the index in large batches (much faster than row by row)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pending: list[tuple[int, str, str, int, str, str, str]] = []

    def add_file(self, file_id: int, path: Path, episodes: list[Episode]) -> int:
        slots = {turn: [key, used] for turn, key, used in self.conn.execute(
            "SELECT turn, key, lines FROM turns WHERE file_id = ?", (file_id,)
        )}
        touched = set()
        added = 0
        for ep in episodes:
            slot = slots.get(ep.turn)
            if slot is None:
                key = self.conn.execute(
                    "INSERT INTO turns(file_id, turn, lines) VALUES (?, ?, 0)", (file_id, ep.turn)
                ).lastrowid
                slot = slots[ep.turn] = [key, 0]
            key, used = slot
            if used >> SLOT_BITS:
                logger.warning("Turn %d of %s has too many lines to index; recall skips the rest", ep.turn, path)
                continue
            meta = json.dumps(ep.meta, ensure_ascii=False)
            self.pending.append(((key << SLOT_BITS) | used, ep.ts, ep.session, ep.turn, ep.role, ep.content, meta))
            slot[1] = used + 1
            touched.add(ep.turn)
            added += 1
        self.conn.executemany(
            "UPDATE turns SET lines = ? WHERE key = ?", [(slots[t][1], slots[t][0]) for t in touched]
        )
        if len(self.pending) >= BATCH:
            self.flush()
        return added

    def flush(self) -> None:
        rows = self.pending
        if not rows:
            return
        self.conn.executemany(
            "INSERT INTO lines(id, ts, session, turn, role, content, meta) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
        )
        text = [(row[0], row[5]) for row in rows]
        self.conn.executemany("INSERT INTO words(rowid, content) VALUES (?, ?)", text)
        self.conn.executemany("INSERT INTO grams(rowid, content) VALUES (?, ?)", text)
        self.pending = []


def _forget(conn: sqlite3.Connection, file_id: int, *, keep_turns: bool = False) -> None:
    """Remove one file's lines from the index (keeping its turn keys, and so their age, when it is re-read)."""
    keys = [key for (key,) in conn.execute("SELECT key FROM turns WHERE file_id = ?", (file_id,))]
    for key in keys:
        bounds = (key << SLOT_BITS, ((key + 1) << SLOT_BITS) - 1)
        for table in ("words", "grams"):
            conn.execute(
                f"INSERT INTO {table}({table}, rowid, content)"
                " SELECT 'delete', id, content FROM lines WHERE id BETWEEN ? AND ?",
                bounds,
            )
        conn.execute("DELETE FROM lines WHERE id BETWEEN ? AND ?", bounds)
    if keep_turns:
        conn.execute("UPDATE turns SET lines = 0 WHERE file_id = ?", (file_id,))
        return
    conn.execute("DELETE FROM turns WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _appended_to(fd: int, st: os.stat_result, old: _Known) -> bool:
    """True when the file only grew since it was indexed (same inode, same bytes where indexing stopped)."""
    if st.st_ino != old.inode or st.st_size < old.indexed_bytes:
        return False
    if st.st_size == old.size and st.st_mtime_ns != old.mtime_ns:
        return False  # rewritten in place at the same length
    return _tail_hash(fd, old.indexed_bytes) == old.tail_hash
