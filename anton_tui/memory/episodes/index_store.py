"""The recall index's database file: its schema, its lock, its connections, and what it knows of each file.

Shared by the part that searches the index (`index`) and the part that builds it (`build`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

from anton_tui.memory.episodes.files import FileStamp

SCHEMA_VERSION = 4
TAIL_BYTES = 64

SCHEMA = """
CREATE TABLE files(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, started TEXT,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    indexed_bytes INTEGER NOT NULL, line_count INTEGER NOT NULL, tail_hash BLOB NOT NULL, turns INTEGER NOT NULL);
CREATE TABLE turns(
    file_id INTEGER NOT NULL, turn INTEGER NOT NULL, first INTEGER NOT NULL, part INTEGER NOT NULL,
    lines INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, PRIMARY KEY(file_id, turn)) WITHOUT ROWID;
CREATE INDEX turns_first ON turns(file_id, first, start, end);
CREATE TABLE lines(id INTEGER PRIMARY KEY, offset INTEGER NOT NULL);
CREATE TABLE spill(key INTEGER PRIMARY KEY, base INTEGER NOT NULL);
CREATE INDEX spill_base ON spill(base);
CREATE TABLE dead(id INTEGER PRIMARY KEY);
CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE terms(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE tokens USING fts5(
    content, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE term_grams USING fts5(term, content='terms', content_rowid='id', tokenize='trigram');
CREATE VIRTUAL TABLE tokens_vocab USING fts5vocab(tokens, row);
"""
SPAN_INDEX = "turns_first"
"""The turns by their key (file and first part) with their spans; an index made before it came has it added."""
ADD_SPAN_INDEX = f"CREATE INDEX IF NOT EXISTS {SPAN_INDEX} ON turns(file_id, first, start, end)"
BATCH_TABLES = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.batch_tokens USING fts5(
    content, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.batch_terms USING fts5vocab(temp, batch_tokens, row);
"""


class IndexUnavailable(Exception):
    """The index cannot answer right now (busy, unwritable or unreadable); scan the files instead."""


class Known(NamedTuple):
    """What the index holds of one file: its id, its size, mtime and inode when read, how far it was indexed."""

    id: int
    size: int
    mtime_ns: int
    inode: int
    indexed_bytes: int
    line_count: int
    tail_hash: bytes
    turns: int


def is_corruption(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return not isinstance(exc, sqlite3.OperationalError)


def tail_hash(fd: int, end: int) -> bytes:
    """A fingerprint of the bytes just before `end`, to tell an append from a rewrite in place."""
    start = max(end - TAIL_BYTES, 0)
    return hashlib.sha1(os.pread(fd, end - start, start)).digest()


def unchanged(st: FileStamp | os.stat_result, known: Known | None) -> bool:
    return known is not None and (st.st_size, st.st_mtime_ns, st.st_ino) == (known.size, known.mtime_ns, known.inode)


def appended_to(fd: int, st: os.stat_result, old: Known) -> bool:
    """True when the file only grew since it was indexed (same inode, same bytes where indexing stopped)."""
    if old.size < 0:
        return False  # registered, never read
    if st.st_ino != old.inode or st.st_size < old.indexed_bytes:
        return False
    if st.st_size == old.size and st.st_mtime_ns != old.mtime_ns:
        return False  # rewritten in place at the same length
    return tail_hash(fd, old.indexed_bytes) == old.tail_hash


class UpdateLock:
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

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)

    @property
    def linked(self) -> bool:
        """Whether the lock file is still in a folder (one removed with its folder locks nothing any more)."""
        return os.fstat(self.fd).st_nlink > 0

    def __enter__(self) -> UpdateLock:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


CHANGE_COUNTER_AT = 24
"""Where SQLite's database header keeps its file change counter: four bytes, big-endian, moved by every commit in a
rollback-journal mode (this index never uses WAL), documented for readers to notice other processes' changes."""


class Database:
    """One connection to the index file, reopened when the file was replaced; `writer` ones are tuned for bulk work.

    A reader tells whether another connection committed by the header's change counter, read with one `pread`: the
    same number `PRAGMA data_version` follows, without the read transaction (four locks and three looks at the
    journal's names) that the statement costs, which was the biggest share of a warm recall outside the query."""

    def __init__(self, path: Path, *, writer: bool) -> None:
        self.path = path
        self.where = str(path)
        self.writer = writer
        self.conn: sqlite3.Connection | None = None
        self.inode: int | None = None
        self.data_version = 0  # as `known` last read it: moves when another connection commits
        self._known: tuple[int, dict[str, Known] | None] | None = None
        self._header: int | None = None  # a reader's descriptor of the file, for its change counter

    def connect(self, inode: int | None = -1) -> sqlite3.Connection:
        """The connection to the file as it is now. `inode`: the file's (None: there is none), as the caller has just
        looked under the index's lock, so that it cannot have been replaced since; left at -1, it is looked at here."""
        if inode == -1:
            try:
                inode = os.stat(self.where).st_ino
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
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-2048;"
                    " PRAGMA temp_store=MEMORY;" + BATCH_TABLES
                )
            else:  # pages are read through a memory map: no copy of them in the heap
                conn.executescript("PRAGMA cache_size=-2048; PRAGMA mmap_size=1073741824;")
                self._header = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            self.inode = os.stat(self.path).st_ino
        except (sqlite3.OperationalError, FileNotFoundError) as exc:
            raise IndexUnavailable(f"cannot open {self.path}: {exc}") from exc
        self.conn = conn
        return conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self._header is not None:
            os.close(self._header)
        self.conn = None
        self._header = None
        self.inode = None
        self._known = None

    def version(self, inode: int | None = -1) -> int:
        """The database's data version now (it moves when another connection commits); `inode` as for `connect`."""
        self.data_version = self._version(self.connect(inode))
        return self.data_version

    def _version(self, conn: sqlite3.Connection) -> int:
        if self._header is not None:
            return int.from_bytes(os.pread(self._header, 4, CHANGE_COUNTER_AT), "big")
        return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def name_of(self, file_id: int) -> str | None:
        """The name of the session file the index numbers `file_id` (None for one it does not hold)."""
        row = self.connect().execute("SELECT name FROM files WHERE id = ?", (file_id,)).fetchone()
        return None if row is None else str(row[0])

    def known(self, inode: int | None = -1) -> dict[str, Known] | None:
        """What the index holds per file, or None when the database has no current, whole schema.

        It is kept until another connection commits (`data_version` moves); a writer changes the dict it was given
        as it changes the files' rows, so that it stays true.
        """
        conn = self.connect(inode)
        version = self.data_version = self._version(conn)
        if (
            self._known is not None
            and self._known[0] == version
            and (not self.writer or conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION)
        ):
            return self._known[1]  # (a writer's step left half done is read afresh: as None)
        known = None
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            rows = conn.execute(
                "SELECT name, id, size, mtime_ns, inode, indexed_bytes, line_count, tail_hash, turns FROM files"
            )
            make = tuple.__new__  # (what `Known._make` does, without its check: the columns are the fields)
            known = {row[0]: make(Known, row[1:]) for row in rows}
        self._known = (version, known)
        return known


def newest_known(conn: sqlite3.Connection, count: int) -> dict[str, Known] | None:
    """What the index holds of its `count` newest files (by name), or None when it has no current, whole schema."""
    if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        return None
    rows = conn.execute(
        "SELECT name, id, size, mtime_ns, inode, indexed_bytes, line_count, tail_hash, turns FROM files"
        " ORDER BY name DESC LIMIT ?",
        (count,),
    )
    make = tuple.__new__
    return {row[0]: make(Known, row[1:]) for row in rows}


def pending_bytes(disk: dict[str, FileStamp], known: dict[str, Known] | None) -> tuple[list[str], int]:
    """Files the index is behind on, and about how many bytes it still has to read for them."""
    stale, pending = [], 0
    for name, st in disk.items():
        old = None if known is None else known.get(name)
        if unchanged(st, old):
            continue
        stale.append(name)
        if old is not None and old.size >= 0 and st.st_ino == old.inode and st.st_size > old.size:
            pending += st.st_size - old.indexed_bytes  # appended to
        else:
            pending += st.st_size
    return stale, pending
