"""Episodic memory: a timestamped log of every conversation, one JSONL file per session, and search over it.

Each line of ``<episodes>/<session>.jsonl`` is one `Episode` in exactly the shape Anton writes, so both programs
can share a workspace. `recall` answers with whole exchanges (the question plus everything said and run to answer
it), best match first; a derived index (`index`) keeps that ranked and fast, and plain scanning of
the files takes over whenever the index cannot be used. The JSONL files are the only source of truth.

Brain analogy: the medial temporal lobe's episodic store — every experience kept with its time and place, and
retrieved whole from a partial cue.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import chain
from pathlib import Path
from typing import Any

from anton_tui.memory.episodes.documents import DocumentRecall
from anton_tui.memory.episodes.index import IndexUnavailable, RecallIndex
from anton_tui.memory.episodes.record import (
    FIELDS,
    LONG_ROLES,
    MEMORY_ROLES,
    SESSION_FORMAT,
    SUFFIX,
    Episode,
    format_episode_line,
    format_recall,
    parse_episode,
    quick_parse,
    read_episodes,
    session_start,
    split_lines,
)
from anton_tui.memory.episodes.scan import scan_turns
from anton_tui.memory.files.locking import atomic_write

__all__ = [
    "FIELDS", "LONG_ROLES", "MEMORY_ROLES", "SESSION_FORMAT", "SUFFIX", "Episode", "EpisodicMemory",
    "format_episode_line", "format_recall", "parse_episode", "read_episodes", "session_start",
]  # fmt: skip

logger = logging.getLogger(__name__)

DOCUMENTS_PER_RECALL = 5

_SAFE_SESSION = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


class EpisodicMemory:
    """The episode log of one workspace (``<project>/.anton/episodes``)."""

    def __init__(self, episodes_dir: Path | str, enabled: bool = True, documents: DocumentRecall | None = None) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.enabled = enabled
        self.documents = documents  # the conversation summaries and reflections, recalled beside the turns
        self.session_id: str | None = None
        self.error_count = 0
        self.last_error: str | None = None
        self._index: RecallIndex | None = None
        self._index_guard = threading.Lock()

    # ---- writing -------------------------------------------------------------------------------------------

    def start_session(self, session_id: str | None = None) -> str:
        """Begin a session and make the episodes folder (when enabled); the default id is the current UTC time,
        moved on a second while that id is taken."""
        if session_id is None:
            moment = datetime.now(UTC).replace(microsecond=0)
            while self._taken(moment.strftime(SESSION_FORMAT)):
                moment += timedelta(seconds=1)
            session_id = moment.strftime(SESSION_FORMAT)
        self.session_path(session_id)  # validates the id
        self.session_id = session_id
        if self.enabled:  # the folder now, as Anton makes it; the file with its first line
            try:
                self.episodes_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # logging will report it; starting must not fail
                logger.debug("Could not create %s: %s", self.episodes_dir, exc)
        return session_id

    def resume_session(self, session_id: str) -> str:
        """Continue an earlier session: later lines append to its file, under its id."""
        self.session_path(session_id)  # validates the id
        self.session_id = session_id
        return session_id

    def _taken(self, session_id: str) -> bool:
        """An id already used by a session file or by a saved conversation (``{id}_history.json``)."""
        return self.session_path(session_id).exists() or (self.episodes_dir / f"{session_id}_history.json").exists()

    def session_path(self, session_id: str) -> Path:
        if not _SAFE_SESSION.fullmatch(session_id):
            raise ValueError(f"Invalid session id {session_id!r}")
        return self.episodes_dir / f"{session_id}{SUFFIX}"

    def log(self, episode: Episode) -> None:
        """Append `episode` to its session's file. Never raises: failures are counted in `error_count`."""
        if not self.enabled:
            return
        try:
            if not episode.session:
                episode = replace(episode, session=self.session_id or self.start_session())
            path = self.session_path(episode.session)
            self.episodes_dir.mkdir(parents=True, exist_ok=True)
            _append_line(path, format_episode_line(episode))
        except Exception as exc:  # logging must never break the conversation
            self.error_count += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            logger.debug("Could not log episode: %s", self.last_error)

    def log_turn(self, turn: int, role: str, content: str, **meta: Any) -> None:
        if not self.enabled:
            return
        session = self.session_id or self.start_session()
        now = datetime.now(UTC).isoformat()
        self.log(Episode(ts=now, session=session, turn=turn, role=role, content=content, meta=meta))

    def delete_turn(self, session_id: str, turn: int) -> int:
        """Remove every line of one turn from a session file; returns how many lines went.

        The rewrite holds the file's own lock (the one appenders take) and replaces the file in one step, so a
        concurrent logger's line lands in the new file and a reader sees the old file or the new one. Malformed
        lines are kept byte for byte.
        """
        path = self.session_path(session_id)
        while True:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                return 0
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if not _still_at(fd, path):
                    continue
                with open(fd, "rb", closefd=False) as handle:
                    data = handle.read()
                kept, removed = [], 0
                for _offset, raw, complete in split_lines(data):
                    episode = quick_parse(raw)
                    if episode is not None and episode.turn == turn:
                        removed += 1
                    else:
                        kept.append(raw + b"\n" if complete else raw)
                if removed:
                    atomic_write(path, b"".join(kept))
                return removed
            finally:
                os.close(fd)

    # ---- reading -------------------------------------------------------------------------------------------

    def session_files(self) -> list[Path]:
        """Session files, newest first."""
        try:
            entries = [p for p in self.episodes_dir.iterdir() if p.suffix == SUFFIX and not p.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(entries, key=lambda p: p.name, reverse=True)

    def sessions(self) -> list[str]:
        return [path.stem for path in self.session_files()]

    def session_count(self) -> int:
        return len(self.session_files())

    def read_session(self, session_id: str) -> list[Episode]:
        return read_episodes(self.session_path(session_id))

    def recall(self, query: str, *, max_results: int = 20, days_back: int | None = None) -> list[Episode]:
        """Past exchanges whose lines contain `query` (any case) or its word forms, best first.

        Each hit brings its whole turn (question and answer lines, in order); at most `max_results` turns. With
        `documents`, the best conversation summaries and reflections come first (at most `DOCUMENTS_PER_RECALL`,
        each one episode whose role is "summary" or "reflection").
        """
        if not self.enabled or max_results <= 0:
            return []
        since = None if days_back is None else datetime.now(UTC) - timedelta(days=days_back)
        found: list[Episode] = []
        if self.documents is not None:
            try:
                found = self.documents.search(query, min(max_results, DOCUMENTS_PER_RECALL), since)
            except (OSError, ValueError) as exc:
                logger.warning("Cannot search the summaries and reflections: %s", exc)
        if not os.path.isdir(self.episodes_dir):
            return found
        return found + self._recall_turns(query, max_results, since)

    def _recall_turns(self, query: str, max_results: int, since: datetime | None) -> list[Episode]:
        index = self.index
        with index.searching():
            try:
                turns = index.search(query, max_results=max_results, since=since)
            except (IndexUnavailable, OSError) as exc:
                logger.info("Recall is scanning the episode files directly: %s", exc)
                try:
                    turns = scan_turns(self.session_files(), query, max_results=max_results, since=since)
                except OSError as scan_exc:
                    logger.warning("Cannot search %s: %s", self.episodes_dir, scan_exc)
                    return []
        return list(chain.from_iterable(turns))

    def recall_formatted(self, query: str, *, max_results: int = 20, days_back: int | None = None) -> str:
        return format_recall(self.recall(query, max_results=max_results, days_back=days_back), query)

    @property
    def index(self) -> RecallIndex:
        with self._index_guard:
            if self._index is None:
                self._index = RecallIndex(self.episodes_dir)
            return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()


def _still_at(fd: int, path: Path) -> bool:
    """True when `fd` is still the file at `path` (it may have been replaced while we waited for its lock)."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_ino, opened.st_dev) == (current.st_ino, current.st_dev)


def _append_line(path: Path, line: bytes) -> None:
    """Append one line under the file's own lock, starting a fresh line if the file ends mid-line."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not _still_at(fd, path):
                continue
            size = os.fstat(fd).st_size
            data = line
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + line
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            return
        finally:
            os.close(fd)
