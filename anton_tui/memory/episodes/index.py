"""A search index over the episode files, so recall is ranked and stays fast across years of sessions.

The index holds no copy of the text. It is a SQLite database beside the JSONL files (``.recall-index.sqlite3``):
for each recallable line only where it is (its file and byte offset), an FTS5 index without content of the plain
words (row ids only), and the distinct plain words with a trigram index of their own, which together find the exact
text (so "gecko" finds "CoinGecko", as Anton's substring search does); and beside it the turn index
(`turn_index`, ``.recall-index.turns/``), one document of stemmed words per turn, which ranks the turns by BM25 (so
"prices" finds "price"; `recall_rank` says how). Matching turns are read back from the JSONL files.

It is derived data, built from the files and rebuilt whenever it is missing, outdated, damaged or was left half
written. Each file's indexed byte offset, size, mtime and inode are remembered: new lines are added as they appear,
a rewritten file is read again, and a removed one forgotten (its rows are marked dead, and once dead rows pile up
the index is built afresh). Building goes newest session first, in steps of large transactions with the settings
suited to a file that can always be rebuilt; between steps the lock is let go, and recall meanwhile answers from
what is indexed plus a scan of the files not reached yet (see `scan`). Readers hold a shared lock and the
one process updating the index an exclusive one; whoever cannot get the lock it needs in time raises
`IndexUnavailable`, and the caller scans the files instead.

Brain analogy: hippocampal indexing — a compact set of pointers that lets a cue reactivate a whole episode without
replaying every stored memory.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from anton_tui import gc_policy
from anton_tui.memory.episodes.build import IndexBuilder, RefreshStats
from anton_tui.memory.episodes.files import RECENT, FileStamp, FolderView, folder_mtime
from anton_tui.memory.episodes.index_store import (
    SCHEMA_VERSION,
    Database,
    IndexUnavailable,
    Known,
    UpdateLock,
    is_corruption,
    newest_known,
    pending_bytes,
)
from anton_tui.memory.episodes.recall_query import IndexFlags, LineReader, load_ranked
from anton_tui.memory.episodes.recall_rank import query_words, rank_turns
from anton_tui.memory.episodes.record import SUFFIX, Episode, many_line_fields
from anton_tui.memory.episodes.scan import scan_turns
from anton_tui.memory.episodes.turn_index import TURNS_NAME, TurnIndexDamaged, TurnSearcher, analyzer, remove

__all__ = [
    "INDEX_NAME", "LOCK_NAME", "SCHEMA_VERSION", "IndexUnavailable", "RecallIndex", "RefreshStats", "preload",
]  # fmt: skip

logger = logging.getLogger(__name__)

T = TypeVar("T")

INDEX_NAME = ".recall-index.sqlite3"
LOCK_NAME = ".recall-index.lock"
SMALL_WORK = 4 << 20  # less unindexed data than this is indexed before answering; more is built in the background
PAUSE_LIMIT = 2.0  # the longest a build waits for searches to end before it goes on anyway
BUSY_WAIT = 0.02  # how long a search waits for the lock while this process is building (then it reads the files)
GIVE_BACK_AFTER = 10_000  # lines indexed in one refresh from which the memory its buffers held is given back


@dataclass
class _View:
    """How the index stands against the files, worked out once per change of either."""

    known: dict[str, Known] | None
    version: int
    stale: list[str]
    removed: bool
    pending: int
    skip: set[int]
    names: dict[int, str]

    @classmethod
    def of(cls, known: dict[str, Known] | None, disk: dict[str, FileStamp], version: int) -> _View:
        stale, pending = pending_bytes(disk, known)
        held = known or {}
        skip = {held[name].id for name in stale if name in held}
        gone = {entry.id for name, entry in held.items() if name not in disk}
        names = {entry.id: name for name, entry in held.items()}
        return cls(known, version, stale, bool(gone), pending, skip | gone, names)


def preload() -> None:
    """Import and set up what a search needs (the JSON decoder, tantivy and its word analysers), so that the first
    recall does not pay for it (the app does it when the user starts typing: `ChatSession.warm_up_recall`)."""
    many_line_fields()
    query_words("")
    analyzer()


class _Searching:
    """`RecallIndex.searching()`: this thread counts among those answering a recall while inside. (A class, not a
    generator: a recall takes a fifth of a millisecond, and a generator's way in and out cost a noticeable part.)"""

    __slots__ = ("_changed", "_me", "_searchers")

    def __init__(self, searchers: dict[int, int], changed: threading.Condition) -> None:
        self._searchers, self._changed, self._me = searchers, changed, threading.get_ident()

    def __enter__(self) -> None:
        with self._changed:
            self._searchers[self._me] = self._searchers.get(self._me, 0) + 1

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self._searchers[self._me] -= 1
            if not self._searchers[self._me]:
                del self._searchers[self._me]
            self._changed.notify_all()


class _Held:
    """`lock` taken in `mode` while inside (waiting up to `wait` seconds for it)."""

    __slots__ = ("_lock", "_mode", "_wait")

    def __init__(self, lock: UpdateLock, mode: int, wait: float) -> None:
        self._lock, self._mode, self._wait = lock, mode, wait

    def __enter__(self) -> None:
        self._lock.take(self._mode, self._wait)

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class RecallIndex:
    """The derived search index of one episodes folder."""

    def __init__(self, episodes_dir: Path, *, lock_wait: float = 0.5) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.path = self.episodes_dir / INDEX_NAME
        self.lock_wait = lock_wait
        self.last_refresh: RefreshStats | None = None
        self._reader = Database(self.path, writer=False)
        self._writer = Database(self.path, writer=True)
        self._read_guard = threading.Lock()
        self._search_lock: UpdateLock | None = None
        self._write_guard = threading.Lock()
        self._builder: threading.Thread | None = None
        self._stop = threading.Event()
        self._refreshing = threading.Event()
        self._folder = FolderView(self.episodes_dir)
        self._view: _View | None = None
        self._newest: dict[str, Known] = {}  # the index's rows of the newest files, while the folder view is partial
        self._newest_version = 0
        self._lines = LineReader(self.episodes_dir, self._reader.name_of)
        self._turns = TurnSearcher(self.episodes_dir / TURNS_NAME)
        self._searchers: dict[int, int] = {}  # threads answering a recall now, and how deep
        self._searches_changed = threading.Condition()
        self._builder_steps = IndexBuilder(
            self.episodes_dir, self._writer, self._stop, self._remove_database, self._step_aside
        )

    # ---- public ------------------------------------------------------------------------------------------

    def search(self, query: str, *, max_results: int, since: datetime | None = None) -> list[list[Episode]]:
        """The best `max_results` turns for `query`, each as its episodes in file order.

        A little new data is indexed first; a lot (a first build) is indexed in the background, and meanwhile the
        files not indexed yet are scanned and their turns follow the indexed ones.
        """
        answer = self._retrying(lambda: self._search(query, max_results, since, may_refresh=True))
        if answer is not None:
            return answer
        if self._write_guard.acquire(blocking=False):  # (else a build has just started here: scan what it lacks)
            try:
                self._stop.clear()
                self._refresh(self.lock_wait)
            except IndexUnavailable as exc:
                logger.info("Recall index not updated before answering: %s", exc)
            finally:
                self._write_guard.release()
        answer = self._retrying(lambda: self._search(query, max_results, since, may_refresh=False))
        assert answer is not None
        return answer

    def refresh(
        self, *, wait: float | None = None, max_steps: int | None = None, ready_to_search: bool = True
    ) -> RefreshStats:
        """Bring the index up to date with the files now, in steps (readers get in between them); `max_steps`
        stops after that many, newest files first. `ready_to_search` also loads what a search needs (`preload`);
        without it an index already up to date is checked through its SQLite file alone.

        `IndexUnavailable` if another process holds the lock for longer than `wait` seconds.
        """
        if ready_to_search:
            preload()
        with self._write_guard:
            self._stop.clear()
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

    def searching(self) -> AbstractContextManager[None]:
        """Hold while answering a recall in any way (through the index or by scanning the files): a build in this
        process waits between files until no search runs, so the answer does not share the CPU with it."""
        return _Searching(self._searchers, self._searches_changed)

    def _step_aside(self) -> None:
        """The builder's pause: wait (up to `PAUSE_LIMIT`) while a search runs on another thread. A search that
        indexes a little before answering does it on its own thread, so it never waits for itself."""
        me = threading.get_ident()
        deadline = time.monotonic() + PAUSE_LIMIT
        with self._searches_changed:
            while any(thread != me for thread in self._searchers):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._searches_changed.wait(left)

    @property
    def building(self) -> bool:
        """True while this process is updating the index (in the background or in a `refresh` call)."""
        return self._refreshing.is_set() or (self._builder is not None and self._builder.is_alive())

    def close(self) -> None:
        """Stop a background build at its next step and close the database."""
        self._stop.set()
        if self._builder is not None:
            self._builder.join(timeout=5)
        with self._read_guard:
            self._reader.close()
            self._lines.close()
            self._turns.close()
            self._folder.close()
            if self._search_lock is not None:
                self._search_lock.__exit__()
                self._search_lock = None
        if self._write_guard.acquire(timeout=5):
            try:
                self._writer.close()
            finally:
                self._write_guard.release()

    def _retrying(self, action: Callable[[], T]) -> T:
        """Run `action`; a damaged index is deleted and rebuilt once, any other database error is reported."""
        try:
            return action()
        except TurnIndexDamaged as exc:
            logger.warning("Recall index %s is damaged (%s); rebuilding it from the episode files", self.path, exc)
        except sqlite3.DatabaseError as exc:
            if not is_corruption(exc):
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
        except (sqlite3.DatabaseError, TurnIndexDamaged) as exc:
            raise IndexUnavailable(f"{self.path}: {exc}") from exc

    def _shared(self, wait: float) -> AbstractContextManager[None]:
        """Hold the lock shared while searching (under `_read_guard`), through a lock file kept open for searches."""
        lock = self._search_lock
        if lock is None or not lock.linked:
            if lock is not None:
                lock.__exit__()
            lock = self._search_lock = UpdateLock(self.episodes_dir / LOCK_NAME)
        return _Held(lock, fcntl.LOCK_SH, wait)

    def _locked(self, mode: int, wait: float) -> UpdateLock:
        lock = UpdateLock(self.episodes_dir / LOCK_NAME)
        try:
            lock.take(mode, wait)
        except BaseException:
            lock.__exit__()
            raise
        return lock

    def _remove_database(self) -> None:
        """Delete the database, its journal and the turn index (only ever under the exclusive lock, so no reader is
        inside)."""
        with self._read_guard:
            self._reader.close()
            self._lines.close()
            self._turns.close()
        self._writer.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        remove(self.episodes_dir / TURNS_NAME)

    # ---- searching -----------------------------------------------------------------------------------------

    def _search(
        self, query: str, max_results: int, since: datetime | None, *, may_refresh: bool
    ) -> list[list[Episode]] | None:
        """The answer, or None when the index is a little behind and should catch up first (`may_refresh`)."""
        # While this process builds, a step holds the lock for a moment: rather than wait, read the files.
        wait = BUSY_WAIT if self.building else self.lock_wait
        with self._read_guard, self._shared(wait):
            try:  # (under the shared lock the file is neither replaced nor removed: one look serves the search)
                inode: int | None = os.stat(self._reader.where).st_ino
            except FileNotFoundError:
                inode = None
            exists = inode is not None
            if exists and not self._folder.seen:
                self._seed_folder()
            disk = self._folder.files()
            known = self._newest if self._folder.partial else self._reader.known(inode) if exists else None
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
                turns = self._indexed_turns(query, max_results, since, view, inode)
        if stale and (view.pending > SMALL_WORK or self.building):
            self.build_in_background()
        return (turns + scanned)[:max_results] if scanned else turns

    def _seed_folder(self) -> None:
        """A first search: when the folder's mtime is the one the index noted when it was last up to date, no file
        was added, removed or replaced since, so the index's rows of its newest files stand for a look at the folder
        (appends go to the newest sessions) until the first full look, `FULL_EVERY` seconds on; another process's
        commit to the index has them read again."""
        conn = self._reader.connect()
        noted = IndexBuilder.folder_stamp(conn)
        if noted is None or noted != folder_mtime(self.episodes_dir):
            return
        newest = newest_known(conn, RECENT)
        if newest is None:
            return
        self._newest, self._newest_version = newest, self._reader.version()
        make = tuple.__new__
        self._folder.seed({name: make(FileStamp, k[1:4]) for name, k in newest.items()}, noted, partial=True)

    def _indexed_turns(
        self, query: str, max_results: int, since: datetime | None, view: _View, inode: int | None
    ) -> list[list[Episode]]:
        """The best turns of the indexed files (under the shared lock, which keeps writers out: no transaction);
        `inode`: the index file's, as `_search` just saw it."""
        conn = self._reader.connect(inode)
        if self._folder.partial and self._reader.version(inode) != self._newest_version:
            self._folder.forget()  # another process changed the index: the next search reads its rows again
        reader = self._lines
        reader.use(view.names)
        flags = IndexFlags(conn)
        ranked = rank_turns(
            conn,
            self._turns,
            (self._reader.inode, self._reader.data_version),
            query,
            max_results,
            since=since,
            skip_files=view.skip,
            reader=reader,
            flags=flags,
        )
        return load_ranked(conn, reader, ranked, lambda: flags.spill)

    # ---- keeping up with the files ---------------------------------------------------------------------

    def _refresh(self, wait: float, *, patient: bool = False, max_steps: int | None = None) -> RefreshStats:
        """Index what changed in the files, step by step (the caller holds `_write_guard`)."""
        self._refreshing.set()
        try:
            stats = self._steps(wait, patient=patient, max_steps=max_steps)
        finally:
            self._refreshing.clear()
        if stats.lines_added >= GIVE_BACK_AFTER:
            gc_policy.give_back_free_memory()  # what the build's buffers held stays with its thread's heap otherwise
        return stats

    def _steps(self, wait: float, *, patient: bool, max_steps: int | None) -> RefreshStats:
        stats = RefreshStats()
        self._builder_steps.begin()
        try:
            self._run_steps(stats, wait, patient=patient, max_steps=max_steps)
        finally:
            self._builder_steps.finish()
        self.last_refresh = stats
        return stats

    def _run_steps(self, stats: RefreshStats, wait: float, *, patient: bool, max_steps: int | None) -> None:
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
                    done = self._builder_steps.step(stats)
                except sqlite3.DatabaseError as exc:
                    if repaired or not is_corruption(exc):
                        raise IndexUnavailable(f"{self.path}: {exc}") from exc
                    logger.warning(
                        "Recall index %s is damaged (%s); rebuilding it from the episode files", self.path, exc
                    )
                    self._builder_steps.finish()
                    self._remove_database()
                    repaired, done = True, False
            stats.steps += 1
            if done or (max_steps is not None and stats.steps >= max_steps):
                break
            time.sleep(0.01)  # let readers in
