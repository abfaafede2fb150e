"""Building the recall index from the episode files: newest files first, in steps of one large transaction each.

A step indexes what it can in about `STEP_SECONDS`: lines appended to a file since it was indexed, a rewritten file
again under a new id (its old rows are marked dead), files that are new; a removed file's rows are marked dead. It
runs with no journal and no syncing, as suits a file that can always be rebuilt, and marks the database half
written (`user_version=0`) until it is over, so a step cut short is noticed and the index built afresh. Each file a
step reads has its turn documents written again in the turn index (`turn_index`), committed just before the step's
transaction. A build of more than `BULK_WORK` bytes defers FTS5's merging and the list of distinct words to its end.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from anton_tui.memory.episodes.files import FolderView
from anton_tui.memory.episodes.index_store import (
    ADD_SPAN_INDEX,
    SCHEMA,
    SCHEMA_VERSION,
    SPAN_INDEX,
    Database,
    IndexUnavailable,
    Known,
    appended_to,
    pending_bytes,
    tail_hash,
)
from anton_tui.memory.episodes.recall_query import (
    FILE_SHIFT,
    SLOT_BITS,
    SLOT_TOP,
    TURN_BITS,
    TURN_TOP,
    file_bounds,
    turn_key,
)
from anton_tui.memory.episodes.record import (
    MEMORY_ROLES,
    SUFFIX,
    Episode,
    decode_line,
    line_fields,
    many_line_fields,
    reading,
    session_start,
    split_lines,
)
from anton_tui.memory.episodes.turn_index import (
    TURNS_NAME,
    TurnIndexBusy,
    TurnIndexDamaged,
    TurnWriter,
    pack_span,
    turn_documents,
)

logger = logging.getLogger(__name__)

FIRST_FILE_ID = 1 << 17  # a first build numbers files from here up, newest first; later files count down from it
STEP_SECONDS = 0.3  # one build step (one transaction) lasts about this long; readers get their turn in between
BATCH = 5000  # lines handed to SQLite at once
CHUNK = 1 << 20  # bytes of a file read at once while indexing it
BULK_WORK = 8 << 20  # more unindexed data than this is built as one big build (segments merged at its end)
BULK_SEGMENTS = 256  # segments a big build lets pile up before merging some (a million lines make about 120)
DEAD_LIMIT = 10_000  # dead rows tolerated before a rebuild, or this share of the live rows if that is more:
DEAD_SHARE = 0.125  # until then BM25's statistics still count them, a little off
FTS_TABLES = ("tokens",)


@dataclass
class RefreshStats:
    files_checked: int = 0
    lines_added: int = 0
    files_reindexed: list[str] = field(default_factory=list)
    files_removed: int = 0
    rebuilt: bool = False
    steps: int = 0


class IndexBuilder:
    """Runs build steps on the writer connection of one index."""

    def __init__(
        self,
        episodes_dir: Path,
        db: Database,
        stop: threading.Event,
        remove_database: Callable[[], None],
        step_aside: Callable[[], None] = lambda: None,
    ) -> None:
        self.episodes_dir = episodes_dir
        self.path = db.path
        self.db = db
        self.stop = stop
        self.remove_database = remove_database
        self._step_aside = step_aside  # called between files and chunks: waits while searches run elsewhere
        self.folder = FolderView(episodes_dir)
        self._turn_writer: TurnWriter | None = None  # kept from step to step of one refresh (merges go on between)
        self._span_index_seen = False

    def begin(self) -> None:
        """A refresh starts: look at every file again (between its steps only the newest are looked at again)."""
        self.folder.forget()

    def finish(self) -> None:
        """A refresh is over: the turn index's writer finishes its merges and lets the index go, and the newest
        files the builder looked at are let go too."""
        writer, self._turn_writer = self._turn_writer, None
        if writer is not None:
            writer.close()
        self.folder.close()

    def _remove_all(self) -> None:
        self.finish()
        self.remove_database()

    def _turns(self, *, create: bool) -> TurnWriter:
        if self._turn_writer is None or create:
            self.finish()
            self._turn_writer = TurnWriter(self.episodes_dir / TURNS_NAME, create=create)
        return self._turn_writer

    def step(self, stats: RefreshStats) -> bool:
        """One transaction's worth of indexing, newest files first; True when there was nothing left to do."""
        db = self.db
        known = db.known() if self.path.exists() else None
        created = known is None
        if known is None:
            stats.rebuilt = True
            known = self._create_schema()
        conn = db.connect()
        if not created:
            self._add_span_index(conn)
        disk = self.folder.files()
        stale, pending = pending_bytes(disk, known)
        removed = [name for name in known if name not in disk]
        if not stale and not removed and not self.folder.fresh:  # make sure with a full look before stopping
            self.folder.forget()
            disk = self.folder.files()
            stale, pending = pending_bytes(disk, known)
            removed = [name for name in known if name not in disk]
        stats.files_checked = len(disk)
        bulk = in_bulk(conn)
        if not stale and not removed:
            if bulk:
                self._finish_bulk(conn)
            self._note_folder(conn)
            return True
        if pending > BULK_WORK and not bulk:
            # A big build: segments are merged once at the end, not all along, and the word list made then too.
            bulk = True
            for table in FTS_TABLES:
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 0)")
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('crisismerge', {BULK_SEGMENTS})")
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('bulk', 1)")
        try:
            turn_writer = self._turns(create=created or not known)
        except TurnIndexBusy as exc:
            raise IndexUnavailable(str(exc)) from exc
        except TurnIndexDamaged as exc:  # (an index whose turn part is gone is built afresh)
            if created:
                raise IndexUnavailable(str(exc)) from exc
            logger.warning("Recall index %s is damaged (%s); building it afresh", self.path, exc)
            self._remove_all()
            stats.rebuilt = True
            return False
        conn.execute("PRAGMA user_version=0")  # half written until the step is over
        deadline = time.monotonic() + STEP_SECONDS
        conn.execute("BEGIN")
        try:
            writer = _LineWriter(conn, word_list=not bulk)
            for name in removed:
                file_id = known.pop(name).id
                _forget(conn, file_id, drop=True)
                turn_writer.drop_file(file_id)
                stats.files_removed += 1
            new = sorted((name for name in stale if name not in known), reverse=True)
            ids = _new_file_ids(conn, len(new))
            conn.executemany(
                "INSERT INTO files(id, name, started, size, mtime_ns, inode, indexed_bytes, line_count,"
                " tail_hash, turns) VALUES (?, ?, ?, -1, 0, 0, 0, 0, x'', 0)",
                [
                    (file_id, name, name if session_start(name) else None)
                    for name, file_id in zip(new, ids, strict=False)
                ],
            )
            for name, file_id in zip(new, ids, strict=False):
                known[name] = Known(file_id, -1, 0, 0, 0, 0, b"", 0)
            for name in sorted(stale, reverse=True):
                self._step_aside()
                stats.lines_added += self._index_file(conn, writer, turn_writer, name, known, stats)
                if time.monotonic() >= deadline or self.stop.is_set():
                    break
            writer.flush()
            turn_writer.commit()  # (first: a step cut short between the two leaves user_version at 0)
            conn.execute("COMMIT")
        except BaseException:
            self.db.close()  # no journal to roll back with: user_version stays 0, so the index is rebuilt
            self.finish()
            raise
        if self._too_many_dead(conn):
            logger.info("Recall index %s has many dead rows; building it afresh", self.path)
            self._remove_all()
            stats.rebuilt = True
            return False
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return False

    def _add_span_index(self, conn: sqlite3.Connection) -> None:
        """An index built before the turns table had its index by key gets it, once (marked half written meanwhile,
        as the writer keeps no journal)."""
        if self._span_index_seen:
            return
        if (
            conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (SPAN_INDEX,)).fetchone()
            is None
        ):
            conn.execute("PRAGMA user_version=0")
            conn.execute(ADD_SPAN_INDEX)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        self._span_index_seen = True

    def _note_folder(self, conn: sqlite3.Connection) -> None:
        """Remember the folder's mtime as of the full look that found the index up to date: a new process whose
        folder still has it starts from the index's list of files instead of looking at every file."""
        mtime = self.folder.last_mtime
        if mtime is None or self.folder_stamp(conn) == mtime:
            return
        conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('folder_mtime', ?)", (mtime,))

    @staticmethod
    def folder_stamp(conn: sqlite3.Connection) -> int | None:
        row = conn.execute("SELECT v FROM meta WHERE k = 'folder_mtime'").fetchone()
        return None if row is None else int(row[0])

    def _create_schema(self) -> dict[str, Known]:
        self._remove_all()  # (the turn index too: it is made afresh by the step's writer)
        conn = self.db.connect()
        try:
            conn.executescript(
                "PRAGMA page_size=8192; PRAGMA auto_vacuum=INCREMENTAL;"
                + SCHEMA
                + f"PRAGMA user_version={SCHEMA_VERSION};"
            )
        except sqlite3.OperationalError as exc:
            raise IndexUnavailable(f"cannot create {self.path}: {exc}") from exc
        return {}

    def _finish_bulk(self, conn: sqlite3.Connection) -> None:
        """After a big build: merge each full-text index into one segment (quicker to search), list the distinct
        words, and go back to merging as usual."""
        conn.execute("PRAGMA user_version=0")
        for table in FTS_TABLES:
            if self.stop.is_set():
                return
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        conn.execute("BEGIN")
        last = conn.execute("SELECT max(id) FROM terms").fetchone()[0] or 0
        conn.execute("INSERT OR IGNORE INTO terms(term) SELECT term FROM tokens_vocab")
        conn.execute("INSERT INTO term_grams(rowid, term) SELECT id, term FROM terms WHERE id > ?", (last,))
        for table in FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 4)")
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('crisismerge', 16)")
        conn.execute("DELETE FROM meta WHERE k = 'bulk'")
        conn.execute("COMMIT")
        conn.executescript("PRAGMA incremental_vacuum;")  # (stepped to the end: one step frees one page)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @staticmethod
    def _too_many_dead(conn: sqlite3.Connection) -> bool:
        dead = conn.execute("SELECT count(*) FROM dead").fetchone()[0]
        if dead <= DEAD_LIMIT:
            return False
        return dead > conn.execute("SELECT count(*) FROM lines").fetchone()[0] * DEAD_SHARE

    def _index_file(
        self,
        conn: sqlite3.Connection,
        writer: _LineWriter,
        turn_writer: TurnWriter,
        name: str,
        known: dict[str, Known],
        stats: RefreshStats,
    ) -> int:
        """Index the part of one file not indexed yet (all of it if the file was rewritten); returns lines added.

        What the index now knows of the file is put in `known` (and in the database when the writer flushes); the
        file's turn documents are all written again (a turn that goes on, or a new turn after it, changes them)."""
        old = known[name]
        path = self.episodes_dir / f"{name}{SUFFIX}"
        try:
            handle = open(path, "rb")  # noqa: SIM115 (closed by the `with handle:` below, once the missing file is ruled out)
        except FileNotFoundError:
            _forget(conn, old.id, drop=True)
            turn_writer.drop_file(old.id)
            del known[name]
            return 0
        except OSError as exc:
            logger.warning("Cannot read %s for the recall index: %s", path, exc)
            return 0
        with handle, reading(handle.fileno()):
            fd = handle.fileno()
            st = os.fstat(fd)
            file_id = old.id
            if appended_to(fd, st, old):
                start, line_no, part_count = old.indexed_bytes, old.line_count, old.turns
            else:
                if old.size >= 0:  # it was indexed before: its rows die, and it is read again under a new id
                    _forget(conn, file_id, drop=False)
                    turn_writer.drop_file(file_id)
                    file_id = _new_file_ids(conn, 1)[0]
                    conn.execute("UPDATE files SET id = ? WHERE id = ?", (file_id, old.id))
                    stats.files_reindexed.append(name)
                start, line_no, part_count = 0, 0, 0
            # each turn's first part, its current part, the lines in that part, and where its lines begin and end
            turns = {turn: [first, part, used, begin, end] for turn, first, part, used, begin, end in conn.execute(
                "SELECT turn, first, part, lines, start, end FROM turns WHERE file_id = ?", (file_id,)
            )} if start else {}  # fmt: skip
            fields, decode_many = line_fields(), many_line_fields()
            texts = _turn_texts(path, fd, start) if start else {}  # each turn's lines, in the order turns began
            first_id = file_id << FILE_SHIFT
            ids: list[int] = []
            contents: list[str] = []
            offsets: list[int] = []
            added, indexed_bytes, position, carry = 0, start, start, b""
            too_many = False
            while position < st.st_size and not too_many:
                if position > start:
                    self._step_aside()
                block = os.pread(fd, min(CHUNK, st.st_size - position), position)
                if not block:
                    break
                data, base = carry + block, position - len(carry)
                position += len(block)
                last = position >= st.st_size
                cut = len(data) if last else data.rfind(b"\n") + 1
                carry = data[cut:]
                raws = data[:cut].split(b"\n")
                if raws[-1] == b"":
                    raws.pop()  # the chunk ends with a newline
                starts = list(accumulate((len(raw) + 1 for raw in raws), initial=base))
                ends_torn = last and not data.endswith(b"\n")
                episodes: list[Episode | None]
                try:  # well-formed lines, read all at once; any other line makes the chunk read line by line
                    episodes = list(decode_many(data[:cut]))
                    if len(episodes) != len(raws):
                        raise ValueError("blank lines")
                except ValueError:
                    episodes = []
                    for number, raw in enumerate(raws):
                        complete = not (ends_torn and number == len(raws) - 1)
                        try:
                            episodes.append(fields(raw))
                        except ValueError:
                            episodes.append(decode_line(path, line_no + number + 1, starts[number], raw, complete))
                for number, episode in enumerate(episodes):
                    if episode is None and ends_torn and number == len(raws) - 1:
                        break  # a torn last line stays unindexed; it is looked at again when the file changes
                    line_no += 1
                    indexed_bytes = starts[number + 1] - (ends_torn and number == len(raws) - 1)
                    if episode is None or episode.role in MEMORY_ROLES:
                        continue
                    slot = turns.get(episode.turn)
                    if slot is None:
                        slot = turns[episode.turn] = [part_count, part_count, 0, starts[number], 0]
                        part_count += 1
                    elif slot[2] > SLOT_TOP:  # the turn goes on in a new part
                        slot[1:3] = [part_count, 0]
                        writer.spills.append((turn_key(file_id, part_count), turn_key(file_id, slot[0])))
                        part_count += 1
                    if part_count > TURN_TOP + 1:
                        logger.warning("%s has too many turns to index; recall skips the rest", path)
                        too_many = True
                        break
                    ids.append(first_id | ((TURN_TOP - slot[1]) << SLOT_BITS) | (SLOT_TOP - slot[2]))
                    contents.append(episode.content)
                    said = texts.get(episode.turn)
                    if said is None:
                        texts[episode.turn] = [episode.content]
                    else:
                        said.append(episode.content)
                    offsets.append(starts[number])
                    slot[2] += 1
                    slot[4] = starts[number + 1] - 1
                    added += 1
                if len(ids) >= 4 * BATCH:
                    writer.add(ids, contents, offsets)
                    ids, contents, offsets = [], [], []
            writer.add(ids, contents, offsets)
            tail = tail_hash(fd, indexed_bytes)
        began = [turn for turn in texts if turn in turns]  # (a turn past the last one indexable has no slot)
        turn_writer.replace_file(
            file_id,
            turn_documents(
                [turn_key(file_id, turns[turn][0]) for turn in began],
                ["\n".join(texts[turn]) for turn in began],
                [pack_span(turns[turn][3], turns[turn][4]) for turn in began],
            ),
        )
        writer.turns += [(file_id, turn, *slot) for turn, slot in turns.items()]
        writer.files.append((st.st_size, st.st_mtime_ns, st.st_ino, indexed_bytes, line_no, tail, part_count, file_id))
        known[name] = Known(file_id, st.st_size, st.st_mtime_ns, st.st_ino, indexed_bytes, line_no, tail, part_count)
        return added


def _turn_texts(path: Path, fd: int, end: int) -> dict[int, list[str]]:
    """The lines of each turn in the first `end` bytes of a file (indexed before), turns in the order they began."""
    data = os.pread(fd, end, 0)
    try:
        lines = many_line_fields()(data)
    except ValueError:
        decoded = (decode_line(path, number, offset, raw, complete)
                   for number, (offset, raw, complete) in enumerate(split_lines(data), start=1))  # fmt: skip
        lines = [line for line in decoded if line is not None]
    texts: dict[int, list[str]] = {}
    for line in lines:
        if line.role not in MEMORY_ROLES:
            texts.setdefault(line.turn, []).append(line.content)
    return texts


class _LineWriter:
    """Adds lines to the index in large batches (in id order, so the tables grow at their end), and their new
    distinct words to the word list; and, when it flushes, what the index now knows of each file read."""

    def __init__(self, conn: sqlite3.Connection, *, word_list: bool) -> None:
        self.conn = conn
        self.word_list = word_list
        self.ids: list[int] = []
        self.texts: list[str] = []
        self.offsets: list[int] = []
        self.spills: list[tuple[int, int]] = []
        self.turns: list[tuple[int, ...]] = []
        self.files: list[tuple[object, ...]] = []

    def add(self, ids: list[int], texts: list[str], offsets: list[int]) -> None:
        # a file's lines count down: reversed, they go in id order
        self.ids += reversed(ids)
        self.texts += reversed(texts)
        self.offsets += reversed(offsets)
        if len(self.ids) >= BATCH:
            self.flush_lines()

    def flush_lines(self) -> None:
        ids, texts, offsets = self.ids, self.texts, self.offsets
        self.ids, self.texts, self.offsets = [], [], []
        if not ids:
            return
        conn = self.conn
        conn.executemany("INSERT INTO lines(id, offset) VALUES (?, ?)", zip(ids, offsets, strict=False))
        conn.executemany("INSERT INTO tokens(rowid, content) VALUES (?, ?)", zip(ids, texts, strict=False))
        if not self.word_list:
            return
        conn.executemany("INSERT INTO temp.batch_tokens(rowid, content) VALUES (?, ?)", zip(ids, texts, strict=False))
        last = conn.execute("SELECT max(id) FROM terms").fetchone()[0] or 0
        conn.execute("INSERT OR IGNORE INTO terms(term) SELECT term FROM temp.batch_terms")
        conn.execute("INSERT INTO term_grams(rowid, term) SELECT id, term FROM terms WHERE id > ?", (last,))
        conn.execute("INSERT INTO temp.batch_tokens(batch_tokens) VALUES ('delete-all')")

    def flush(self) -> None:
        self.flush_lines()
        conn = self.conn
        conn.executemany("INSERT INTO spill(key, base) VALUES (?, ?)", self.spills)
        conn.executemany(
            "INSERT OR REPLACE INTO turns(file_id, turn, first, part, lines, start, end) VALUES (?, ?, ?, ?, ?, ?, ?)",
            self.turns,
        )
        conn.executemany(
            "UPDATE files SET size=?, mtime_ns=?, inode=?, indexed_bytes=?, line_count=?, tail_hash=?, turns=?"
            " WHERE id=?",
            self.files,
        )
        self.spills, self.turns, self.files = [], [], []


def in_bulk(conn: sqlite3.Connection) -> bool:
    """True while a big build is under way (its segments unmerged and its distinct words not listed yet)."""
    return conn.execute("SELECT EXISTS(SELECT 1 FROM meta WHERE k = 'bulk')").fetchone()[0] == 1


def _new_file_ids(conn: sqlite3.Connection, count: int) -> list[int]:
    """Ids for `count` files, newest first, never used before (a dead row keeps its id for good).

    The first files of an index count up from `FIRST_FILE_ID`, so a first build (newest first) only ever appends
    to the tables; any file after that is taken as newer than all before it and counts down.
    """
    row = conn.execute("SELECT v FROM meta WHERE k = 'lowest'").fetchone()
    ids = [FIRST_FILE_ID + n for n in range(count)] if row is None else [row[0] - count + n for n in range(count)]
    if ids:
        conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('lowest', ?)", (min(ids),))
    return ids


def _forget(conn: sqlite3.Connection, file_id: int, *, drop: bool) -> None:
    """Mark one file's rows dead (full-text rows without their text cannot be taken out) and drop its turns."""
    low, high = file_bounds(file_id)
    conn.execute("INSERT OR IGNORE INTO dead(id) SELECT id FROM lines WHERE id BETWEEN ? AND ?", (low, high))
    conn.execute("DELETE FROM lines WHERE id BETWEEN ? AND ?", (low, high))
    conn.execute("DELETE FROM turns WHERE file_id = ?", (file_id,))
    conn.execute(
        "DELETE FROM spill WHERE key BETWEEN ? AND ?", (file_id << TURN_BITS, ((file_id + 1) << TURN_BITS) - 1)
    )
    if drop:
        conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
