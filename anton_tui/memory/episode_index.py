"""A search index over the episode files, so recall is ranked and stays fast across years of sessions.

The index is a SQLite database beside the JSONL files (``.recall-index.sqlite3``) and holds no copy of their text:
for each recallable line only where it is (its file, byte offset and length), and two FTS5 indexes without content:
one of stemmed words ranked with BM25 (so "prices" finds "price") and one of the plain words with row ids only,
plus the distinct plain words with a trigram index of their own, which together find the exact text (so "gecko"
finds "CoinGecko", as Anton's substring search does). Matching lines are read back from the JSONL files.

It is derived data, built from the files and rebuilt whenever it is missing, outdated, damaged or was left half
written. Each file's indexed byte offset, size, mtime and inode are remembered: new lines are added as they appear,
a rewritten file is read again, and a removed one forgotten (its rows are marked dead, and once dead rows pile up
the index is built afresh). Building goes newest session first, in steps of large transactions with the settings
suited to a file that can always be rebuilt; between steps the lock is let go, and recall meanwhile answers from
what is indexed plus a scan of the files not reached yet (see `episode_scan`). Readers hold a shared lock and the
one process updating the index an exclusive one; whoever cannot get the lock it needs in time raises
`IndexUnavailable`, and the caller scans the files instead.

Brain analogy: hippocampal indexing — a compact set of pointers that lets a cue reactivate a whole episode without
replaying every stored memory.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from anton_tui.memory.episode_record import MEMORY_ROLES, SUFFIX, Episode, decode_line, reading, session_start
from anton_tui.memory.episode_files import FolderView, disk_files
from anton_tui.memory.episode_scan import scan_turns
from anton_tui.memory.recall_query import (
    SLOT_TOP,
    TURN_BITS,
    TURN_TOP,
    LineReader,
    TextCheck,
    file_bounds,
    line_id,
    line_scores,
    load_turn,
    rank_turns,
    turn_key,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

INDEX_NAME = ".recall-index.sqlite3"
LOCK_NAME = ".recall-index.lock"
SCHEMA_VERSION = 2
FIRST_FILE_ID = 1 << 17  # a first build numbers files from here up, newest first; later files count down from it
TAIL_BYTES = 64
STEP_SECONDS = 0.3  # one build step (one transaction) lasts about this long; readers get their turn in between
BATCH = 5000  # lines handed to SQLite at once
CHUNK = 1 << 20  # bytes of a file read at once while indexing it
SMALL_WORK = 4 << 20  # less unindexed data than this is indexed before answering; more is built in the background
BULK_WORK = 8 << 20  # more unindexed data than this is built as one big build (segments merged at its end)
DEAD_LIMIT = 10_000  # dead rows tolerated before a rebuild, or this share of the live rows if that is more:
DEAD_SHARE = 0.125  # until then BM25's statistics still count them, a little off

_SCHEMA = """
CREATE TABLE files(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, started TEXT,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    indexed_bytes INTEGER NOT NULL, line_count INTEGER NOT NULL, tail_hash BLOB NOT NULL, turns INTEGER NOT NULL);
CREATE TABLE turns(
    file_id INTEGER NOT NULL, turn INTEGER NOT NULL, first INTEGER NOT NULL, part INTEGER NOT NULL,
    lines INTEGER NOT NULL, PRIMARY KEY(file_id, turn)) WITHOUT ROWID;
CREATE TABLE lines(id INTEGER PRIMARY KEY, offset INTEGER NOT NULL);
CREATE TABLE spill(key INTEGER PRIMARY KEY, base INTEGER NOT NULL);
CREATE INDEX spill_base ON spill(base);
CREATE TABLE dead(id INTEGER PRIMARY KEY);
CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE terms(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE words USING fts5(content, content='', tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE tokens USING fts5(
    content, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE term_grams USING fts5(term, content='terms', content_rowid='id', tokenize='trigram');
CREATE VIRTUAL TABLE tokens_vocab USING fts5vocab(tokens, row);
"""
_BATCH_TABLES = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.batch_tokens USING fts5(
    content, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.batch_terms USING fts5vocab(temp, batch_tokens, row);
"""
_FTS_TABLES = ("words", "tokens")


class IndexUnavailable(Exception):
    """The index cannot answer right now (busy, unwritable or unreadable); scan the files instead."""


@dataclass
class RefreshStats:
    files_checked: int = 0
    lines_added: int = 0
    files_reindexed: list[str] = field(default_factory=list)
    files_removed: int = 0
    rebuilt: bool = False
    steps: int = 0


@dataclass
class _Known:
    id: int
    size: int
    mtime_ns: int
    inode: int
    indexed_bytes: int
    line_count: int
    tail_hash: bytes
    turns: int


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return not isinstance(exc, sqlite3.OperationalError)


def _tail_hash(fd: int, end: int) -> bytes:
    """A fingerprint of the bytes just before `end`, to tell an append from a rewrite in place."""
    start = max(end - TAIL_BYTES, 0)
    return hashlib.sha1(os.pread(fd, end - start, start)).digest()


def _unchanged(st: os.stat_result, known: _Known | None) -> bool:
    return known is not None and (st.st_size, st.st_mtime_ns, st.st_ino) == (known.size, known.mtime_ns, known.inode)


def _appended_to(fd: int, st: os.stat_result, old: _Known) -> bool:
    """True when the file only grew since it was indexed (same inode, same bytes where indexing stopped)."""
    if old.size < 0:
        return False  # registered, never read
    if st.st_ino != old.inode or st.st_size < old.indexed_bytes:
        return False
    if st.st_size == old.size and st.st_mtime_ns != old.mtime_ns:
        return False  # rewritten in place at the same length
    return _tail_hash(fd, old.indexed_bytes) == old.tail_hash


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


class _Database:
    """One connection to the index file, reopened when the file was replaced; `writer` ones are tuned for bulk work."""

    def __init__(self, path: Path, *, writer: bool) -> None:
        self.path = path
        self.writer = writer
        self.conn: sqlite3.Connection | None = None
        self.inode: int | None = None
        self._known: tuple[int, dict[str, _Known] | None] | None = None

    def connect(self) -> sqlite3.Connection:
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            inode = None
        if self.conn is not None and inode == self.inode:
            return self.conn
        self.close()
        try:
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            if self.writer:
                # Derived data: no durability needed, a half-written file is noticed (user_version) and rebuilt.
                conn.executescript(
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-8192;"
                    " PRAGMA temp_store=MEMORY;" + _BATCH_TABLES
                )
            else:  # pages are read through a memory map: no copy of them in the heap
                conn.executescript("PRAGMA cache_size=-2048; PRAGMA mmap_size=1073741824;")
            self.inode = os.stat(self.path).st_ino
        except (sqlite3.OperationalError, FileNotFoundError) as exc:
            raise IndexUnavailable(f"cannot open {self.path}: {exc}") from exc
        self.conn = conn
        return conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        self.inode = None
        self._known = None

    def known(self) -> dict[str, _Known] | None:
        """What the index holds per file, or None when the database has no current, whole schema.

        A reader keeps it until another connection commits (`data_version` moves); a writer reads it afresh.
        """
        conn = self.connect()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if not self.writer and self._known is not None and self._known[0] == version:
            return self._known[1]
        known = None
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            rows = conn.execute(
                "SELECT name, id, size, mtime_ns, inode, indexed_bytes, line_count, tail_hash, turns FROM files"
            )
            known = {row[0]: _Known(*row[1:]) for row in rows}
        self._known = (version, known)
        return known


def _pending_bytes(disk: dict[str, os.stat_result], known: dict[str, _Known] | None) -> tuple[list[str], int]:
    """Files the index is behind on, and about how many bytes it still has to read for them."""
    stale, pending = [], 0
    for name, st in disk.items():
        old = None if known is None else known.get(name)
        if _unchanged(st, old):
            continue
        stale.append(name)
        appended = old is not None and old.size >= 0 and st.st_ino == old.inode and st.st_size > old.size
        pending += st.st_size - old.indexed_bytes if appended else st.st_size
    return stale, pending


@dataclass
class _View:
    """How the index stands against the files, worked out once per change of either."""

    known: dict[str, _Known] | None
    version: int
    stale: list[str]
    removed: bool
    pending: int
    skip: set[int]
    names: dict[int, str]

    @classmethod
    def of(cls, known: dict[str, _Known] | None, disk: dict[str, os.stat_result], version: int) -> _View:
        stale, pending = _pending_bytes(disk, known)
        held = known or {}
        skip = {held[name].id for name in stale if name in held}
        gone = {entry.id for name, entry in held.items() if name not in disk}
        names = {entry.id: name for name, entry in held.items()}
        return cls(known, version, stale, bool(gone), pending, skip | gone, names)


class RecallIndex:
    """The derived search index of one episodes folder."""

    def __init__(self, episodes_dir: Path, *, lock_wait: float = 1.0) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.path = self.episodes_dir / INDEX_NAME
        self.lock_wait = lock_wait
        self.last_refresh: RefreshStats | None = None
        self._reader = _Database(self.path, writer=False)
        self._writer = _Database(self.path, writer=True)
        self._read_guard = threading.Lock()
        self._write_guard = threading.Lock()
        self._builder: threading.Thread | None = None
        self._stop = threading.Event()
        self._folder = FolderView(self.episodes_dir)
        self._view: _View | None = None
        self._lines = LineReader(self.episodes_dir)

    # ---- public ------------------------------------------------------------------------------------------

    def search(self, query: str, *, max_results: int, since: datetime | None = None) -> list[list[Episode]]:
        """The best `max_results` turns for `query`, each as its episodes in file order.

        A little new data is indexed first; a lot (a first build) is indexed in the background, and meanwhile the
        files not indexed yet are scanned and their turns follow the indexed ones.
        """
        answer = self._retrying(lambda: self._search(query, max_results, since, may_refresh=True))
        if answer is not None:
            return answer
        try:
            self.refresh(wait=self.lock_wait)
        except IndexUnavailable as exc:
            logger.info("Recall index not updated before answering: %s", exc)
        answer = self._retrying(lambda: self._search(query, max_results, since, may_refresh=False))
        assert answer is not None
        return answer

    def refresh(self, *, wait: float | None = None, max_steps: int | None = None) -> RefreshStats:
        """Bring the index up to date with the files now, in steps (readers get in between them); `max_steps`
        stops after that many, newest files first.

        `IndexUnavailable` if another process holds the lock for longer than `wait` seconds.
        """
        with self._write_guard:
            return self._refresh(self.lock_wait if wait is None else wait, max_steps=max_steps)

    def build_in_background(self) -> bool:
        """Start bringing the index up to date in a thread of its own; False when a build is already running."""
        if self.building or not self._write_guard.acquire(blocking=False):
            return False
        self._stop.clear()

        def run() -> None:
            try:
                self._refresh(self.lock_wait, patient=True)
            except IndexUnavailable as exc:
                logger.info("Recall index build stopped: %s", exc)
            except Exception:
                logger.exception("Recall index build failed; recall scans the files instead")
            finally:
                self._write_guard.release()

        self._builder = threading.Thread(target=run, name="recall-index-build", daemon=True)
        self._builder.start()
        return True

    @property
    def building(self) -> bool:
        return self._builder is not None and self._builder.is_alive()

    def close(self) -> None:
        """Stop a background build at its next step and close the database."""
        self._stop.set()
        if self._builder is not None:
            self._builder.join(timeout=5)
        with self._read_guard:
            self._reader.close()
            self._lines.close()
        if self._write_guard.acquire(timeout=5):
            try:
                self._writer.close()
            finally:
                self._write_guard.release()

    def _retrying(self, action: Callable[[], T]) -> T:
        """Run `action`; a damaged database is deleted and rebuilt once, any other database error is reported."""
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise IndexUnavailable(f"{self.path}: {exc}") from exc
            logger.warning("Recall index %s is damaged (%s); rebuilding it from the episode files", self.path, exc)
        if not self._write_guard.acquire(timeout=self.lock_wait):
            raise IndexUnavailable("the recall index is being rebuilt")
        try:
            with self._locked(fcntl.LOCK_EX, self.lock_wait):
                self._remove_database()
        finally:
            self._write_guard.release()
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def _locked(self, mode: int, wait: float) -> _UpdateLock:
        lock = _UpdateLock(self.episodes_dir / LOCK_NAME)
        try:
            lock.take(mode, wait)
        except BaseException:
            lock.__exit__()
            raise
        return lock

    def _remove_database(self) -> None:
        """Delete the database and its journal (only ever under the exclusive lock, so no reader is inside)."""
        with self._read_guard:
            self._reader.close()
            self._lines.close()
        self._writer.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    # ---- searching -----------------------------------------------------------------------------------------

    def _search(
        self, query: str, max_results: int, since: datetime | None, *, may_refresh: bool
    ) -> list[list[Episode]] | None:
        """The answer, or None when the index is a little behind and should catch up first (`may_refresh`)."""
        with self._read_guard, self._locked(fcntl.LOCK_SH, self.lock_wait):
            known = self._reader.known() if self.path.exists() else None
            disk = self._folder.files()
            view = self._view
            if view is None or view.known is not known or view.version != self._folder.version:
                view = self._view = _View.of(known, disk, self._folder.version)
            stale = view.stale
            behind = stale or view.removed
            if behind and may_refresh and view.pending <= SMALL_WORK and not self.building:
                return None
            scanned: list[list[Episode]] = []
            if stale:  # the files not indexed yet are read the way Anton reads them, newest first
                paths = [self.episodes_dir / f"{name}{SUFFIX}" for name in sorted(stale, reverse=True)]
                scanned = scan_turns(paths, query, max_results=max_results, since=since)
            turns: list[list[Episode]] = []
            if known:
                turns = self._indexed_turns(query, max_results, since, view, any_word=not scanned)
        if stale and (view.pending > SMALL_WORK or self.building):
            self.build_in_background()
        return (turns + scanned)[:max_results]

    def _indexed_turns(
        self, query: str, max_results: int, since: datetime | None, view: _View, *, any_word: bool
    ) -> list[list[Episode]]:
        """The best turns of the indexed files; `any_word` allows ranking by any of the query's words when no
        line has them all (not when the files not indexed yet already hold the exact text)."""
        conn = self._reader.connect()
        reader = self._lines
        reader.use(view.names)
        conn.execute("BEGIN")
        try:
            dead = conn.execute("SELECT EXISTS(SELECT 1 FROM dead)").fetchone()[0] == 1
            check = TextCheck(query, reader)
            scores = line_scores(conn, query, check, dead=dead, word_list=not _in_bulk(conn), any_word=any_word)
            keys = rank_turns(conn, scores, check, max_results, since, view.skip)
            turns = [load_turn(conn, reader, key) for key in keys]
            return [turn for turn in turns if turn]
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    # ---- keeping up with the files ---------------------------------------------------------------------

    def _refresh(self, wait: float, *, patient: bool = False, max_steps: int | None = None) -> RefreshStats:
        """Index what changed in the files, step by step (the caller holds `_write_guard`)."""
        stats = RefreshStats()
        repaired = False
        while not self._stop.is_set():
            try:
                lock = self._locked(fcntl.LOCK_EX, wait)
            except IndexUnavailable:
                if not patient:
                    raise
                time.sleep(wait)
                continue
            with lock:
                try:
                    self._folder.forget()
                    done = self._step(stats)
                except sqlite3.DatabaseError as exc:
                    if repaired or not _is_corruption(exc):
                        raise IndexUnavailable(f"{self.path}: {exc}") from exc
                    logger.warning("Recall index %s is damaged (%s); rebuilding it from the episode files", self.path, exc)
                    self._remove_database()
                    repaired, done = True, False
            stats.steps += 1
            if done or (max_steps is not None and stats.steps >= max_steps):
                break
            time.sleep(0.01)  # let readers in
        self.last_refresh = stats
        return stats

    def _step(self, stats: RefreshStats) -> bool:
        """One transaction's worth of indexing, newest files first; True when there was nothing left to do."""
        db = self._writer
        known = db.known() if self.path.exists() else None
        if known is None:
            stats.rebuilt = True
            known = self._create_schema()
        conn = db.connect()
        disk = disk_files(self.episodes_dir)
        stats.files_checked = len(disk)
        stale, pending = _pending_bytes(disk, known)
        removed = [name for name in known if name not in disk]
        bulk = _in_bulk(conn)
        if not stale and not removed:
            if bulk:
                self._finish_bulk(conn)
            return True
        if pending > BULK_WORK and not bulk:
            # A big build: segments are merged once at the end, not all along, and the word list made then too.
            bulk = True
            for table in _FTS_TABLES:
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 0)")
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('crisismerge', 64)")
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('bulk', 1)")
        conn.execute("PRAGMA user_version=0")  # half written until the step is over
        deadline = time.monotonic() + STEP_SECONDS
        conn.execute("BEGIN")
        try:
            writer = _LineWriter(conn, word_list=not bulk)
            for name in removed:
                _forget(conn, known.pop(name).id, drop=True)
                stats.files_removed += 1
            new = sorted((name for name in stale if name not in known), reverse=True)
            for name, file_id in zip(new, _new_file_ids(conn, len(new))):
                conn.execute(
                    "INSERT INTO files(id, name, started, size, mtime_ns, inode, indexed_bytes, line_count,"
                    " tail_hash, turns) VALUES (?, ?, ?, -1, 0, 0, 0, 0, x'', 0)",
                    (file_id, name, name if session_start(name) else None),
                )
                known[name] = _Known(file_id, -1, 0, 0, 0, 0, b"", 0)
            for name in sorted(stale, reverse=True):
                stats.lines_added += self._index_file(conn, writer, name, known[name], stats)
                if time.monotonic() >= deadline or self._stop.is_set():
                    break
            writer.flush()
            conn.execute("COMMIT")
        except BaseException:
            self._writer.close()  # no journal to roll back with: user_version stays 0, so the index is rebuilt
            raise
        if self._too_many_dead(conn):
            logger.info("Recall index %s has many dead rows; building it afresh", self.path)
            self._remove_database()
            stats.rebuilt = True
            return False
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return False

    def _create_schema(self) -> dict[str, _Known]:
        self._remove_database()
        conn = self._writer.connect()
        try:
            conn.executescript("PRAGMA page_size=8192; PRAGMA auto_vacuum=INCREMENTAL;" + _SCHEMA + f"PRAGMA user_version={SCHEMA_VERSION};")
        except sqlite3.OperationalError as exc:
            raise IndexUnavailable(f"cannot create {self.path}: {exc}") from exc
        return {}

    def _finish_bulk(self, conn: sqlite3.Connection) -> None:
        """After a big build: merge each full-text index into one segment (quicker to search), list the distinct
        words, and go back to merging as usual."""
        conn.execute("PRAGMA user_version=0")
        for table in _FTS_TABLES:
            if self._stop.is_set():
                return
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        conn.execute("BEGIN")
        last = conn.execute("SELECT max(id) FROM terms").fetchone()[0] or 0
        conn.execute("INSERT OR IGNORE INTO terms(term) SELECT term FROM tokens_vocab")
        conn.execute("INSERT INTO term_grams(rowid, term) SELECT id, term FROM terms WHERE id > ?", (last,))
        for table in _FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 4)")
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('crisismerge', 16)")
        conn.execute("DELETE FROM meta WHERE k = 'bulk'")
        conn.execute("COMMIT")
        conn.execute("PRAGMA incremental_vacuum").fetchall()
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @staticmethod
    def _too_many_dead(conn: sqlite3.Connection) -> bool:
        dead = conn.execute("SELECT count(*) FROM dead").fetchone()[0]
        if dead <= DEAD_LIMIT:
            return False
        return dead > conn.execute("SELECT count(*) FROM lines").fetchone()[0] * DEAD_SHARE

    def _index_file(
        self, conn: sqlite3.Connection, writer: _LineWriter, name: str, old: _Known, stats: RefreshStats
    ) -> int:
        """Index the part of one file not indexed yet (all of it if the file was rewritten); returns lines added."""
        path = self.episodes_dir / f"{name}{SUFFIX}"
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            _forget(conn, old.id, drop=True)
            return 0
        except OSError as exc:
            logger.warning("Cannot read %s for the recall index: %s", path, exc)
            return 0
        with handle, reading(handle.fileno()):
            fd = handle.fileno()
            st = os.fstat(fd)
            file_id = old.id
            if _appended_to(fd, st, old):
                start, line_no, part_count = old.indexed_bytes, old.line_count, old.turns
            else:
                if old.size >= 0:  # it was indexed before: its rows die, and it is read again under a new id
                    _forget(conn, file_id, drop=False)
                    file_id = _new_file_ids(conn, 1)[0]
                    conn.execute("UPDATE files SET id = ? WHERE id = ?", (file_id, old.id))
                    stats.files_reindexed.append(name)
                start, line_no, part_count = 0, 0, 0
            turns = {turn: [first, part, used] for turn, first, part, used in conn.execute(
                "SELECT turn, first, part, lines FROM turns WHERE file_id = ?", (file_id,)
            )} if start else {}  # fmt: skip
            rows: list[tuple[int, str, int, int]] = []
            spills: list[tuple[int, int]] = []
            added, indexed_bytes, position, carry = 0, start, start, b""
            while position < st.st_size:
                block = os.pread(fd, min(CHUNK, st.st_size - position), position)
                if not block:
                    break
                data, base = carry + block, position - len(carry)
                position += len(block)
                cut = len(data) if position >= st.st_size else data.rfind(b"\n") + 1
                carry = data[cut:]
                line_start = 0
                while line_start < cut:
                    end = data.find(b"\n", line_start, cut)
                    complete = end >= 0
                    end = end if complete else cut
                    raw = data[line_start:end]
                    offset = base + line_start
                    episode = decode_line(path, line_no + 1, offset, raw, complete)
                    if not complete and episode is None:
                        break  # a torn last line stays unindexed; it is looked at again when the file changes
                    line_no += 1
                    indexed_bytes = offset + len(raw) + complete
                    line_start = end + 1
                    if episode is None or episode.role in MEMORY_ROLES:
                        continue
                    slot = turns.get(episode.turn)
                    if slot is None:
                        slot = turns[episode.turn] = [part_count, part_count, 0]
                        part_count += 1
                    elif slot[2] > SLOT_TOP:  # the turn goes on in a new part
                        slot[1:] = [part_count, 0]
                        spills.append((turn_key(file_id, part_count), turn_key(file_id, slot[0])))
                        part_count += 1
                    if part_count > TURN_TOP + 1:
                        logger.warning("%s has too many turns to index; recall skips the rest", path)
                        break
                    rows.append((line_id(file_id, slot[1], slot[2]), episode.content, offset, len(raw)))
                    slot[2] += 1
                    added += 1
                if len(rows) >= 4 * BATCH:
                    writer.add(rows)
                    rows = []
            writer.add(rows)
            tail_hash = _tail_hash(fd, indexed_bytes)
        conn.executemany("INSERT INTO spill(key, base) VALUES (?, ?)", spills)
        conn.executemany(
            "INSERT OR REPLACE INTO turns(file_id, turn, first, part, lines) VALUES (?, ?, ?, ?, ?)",
            [(file_id, turn, first, part, used) for turn, (first, part, used) in turns.items()],
        )
        conn.execute(
            "UPDATE files SET size=?, mtime_ns=?, inode=?, indexed_bytes=?, line_count=?, tail_hash=?, turns=?"
            " WHERE id=?",
            (st.st_size, st.st_mtime_ns, st.st_ino, indexed_bytes, line_no, tail_hash, part_count, file_id),
        )
        return added


class _LineWriter:
    """Adds lines to the index in large batches (in id order, so the tables grow at their end), and their new
    distinct words to the word list."""

    def __init__(self, conn: sqlite3.Connection, *, word_list: bool) -> None:
        self.conn = conn
        self.word_list = word_list
        self.pending: list[tuple[int, str, int, int]] = []

    def add(self, rows: list[tuple[int, str, int, int]]) -> None:
        rows.reverse()  # a file's lines count down
        self.pending += rows
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        rows, self.pending = self.pending, []
        if not rows:
            return
        conn = self.conn
        conn.executemany("INSERT INTO lines(id, offset) VALUES (?, ?)", [(r[0], r[2]) for r in rows])
        text = [(r[0], r[1]) for r in rows]
        conn.executemany("INSERT INTO words(rowid, content) VALUES (?, ?)", text)
        conn.executemany("INSERT INTO tokens(rowid, content) VALUES (?, ?)", text)
        if not self.word_list:
            return
        conn.executemany("INSERT INTO temp.batch_tokens(rowid, content) VALUES (?, ?)", text)
        last = conn.execute("SELECT max(id) FROM terms").fetchone()[0] or 0
        conn.execute("INSERT OR IGNORE INTO terms(term) SELECT term FROM temp.batch_terms")
        conn.execute("INSERT INTO term_grams(rowid, term) SELECT id, term FROM terms WHERE id > ?", (last,))
        conn.execute("INSERT INTO temp.batch_tokens(batch_tokens) VALUES ('delete-all')")


def _in_bulk(conn: sqlite3.Connection) -> bool:
    """True while a big build is under way (its segments unmerged and its distinct words not listed yet)."""
    return conn.execute("SELECT EXISTS(SELECT 1 FROM meta WHERE k = 'bulk')").fetchone()[0] == 1


def _new_file_ids(conn: sqlite3.Connection, count: int) -> list[int]:
    """Ids for `count` files, newest first, never used before (a dead row keeps its id for good).

    The first files of an index count up from `FIRST_FILE_ID`, so a first build (newest first) only ever appends
    to the tables; any file after that is taken as newer than all before it and counts down.
    """
    row = conn.execute("SELECT v FROM meta WHERE k = 'lowest'").fetchone()
    if row is None:
        ids = [FIRST_FILE_ID + n for n in range(count)]
    else:
        ids = [row[0] - count + n for n in range(count)]
    if ids:
        conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('lowest', ?)", (min(ids),))
    return ids


def _forget(conn: sqlite3.Connection, file_id: int, *, drop: bool) -> None:
    """Mark one file's rows dead (full-text rows without their text cannot be taken out) and drop its turns."""
    low, high = file_bounds(file_id)
    conn.execute("INSERT OR IGNORE INTO dead(id) SELECT id FROM lines WHERE id BETWEEN ? AND ?", (low, high))
    conn.execute("DELETE FROM lines WHERE id BETWEEN ? AND ?", (low, high))
    conn.execute("DELETE FROM turns WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM spill WHERE key BETWEEN ? AND ?", (file_id << TURN_BITS, ((file_id + 1) << TURN_BITS) - 1))
    if drop:
        conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
