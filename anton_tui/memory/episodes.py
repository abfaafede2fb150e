"""Episodic memory: a timestamped log of every conversation, one JSONL file per session, and search over it.

Each line of ``<episodes>/<session>.jsonl`` is one `Episode` in exactly the shape Anton writes, so both programs
can share a workspace. `recall` answers with whole exchanges (the question plus everything said and run to answer
it), best match first; a derived SQLite index (`episode_index`) keeps that ranked and fast, and plain scanning of
the files takes over whenever the index cannot be used. The JSONL files are the only source of truth.

Brain analogy: the medial temporal lobe's episodic store — every experience kept with its time and place, and
retrieved whole from a partial cue.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.memory.locking import atomic_write

if TYPE_CHECKING:
    from anton_tui.memory.episode_index import RecallIndex

logger = logging.getLogger(__name__)

SESSION_FORMAT = "%Y%m%d_%H%M%S"
SUFFIX = ".jsonl"
MEMORY_ROLES = frozenset({"memory_read", "memory_write"})
LONG_ROLES = frozenset({"assistant", "scratchpad", "tool_result", "tool_call"})
FIELDS = ("ts", "session", "turn", "role", "content", "meta")
_SAFE_SESSION = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


@dataclass
class Episode:
    ts: str
    session: str
    turn: int
    role: str
    content: str
    meta: dict[str, Any] = field(default_factory=dict)


def parse_episode(text: str) -> Episode:
    """One JSONL line to an `Episode`; `ValueError` (with the reason) for anything Anton's reader would reject."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    extra = sorted(set(obj) - set(FIELDS))
    if extra:
        raise ValueError(f"unexpected keys {extra}")
    missing = [key for key in FIELDS[:5] if key not in obj]
    if missing:
        raise ValueError(f"missing keys {missing}")
    turn = obj["turn"]
    if not isinstance(turn, int) or isinstance(turn, bool):
        raise ValueError("'turn' is not an integer")
    for key in ("ts", "session", "role", "content"):
        if not isinstance(obj[key], str):
            raise ValueError(f"{key!r} is not a string")
    if not isinstance(obj.get("meta", {}), dict):
        raise ValueError("'meta' is not an object")
    return Episode(**obj)


def format_episode_line(episode: Episode) -> bytes:
    """The bytes Anton appends for `episode` (``default=str`` only matters for values JSON cannot hold)."""
    text = json.dumps(asdict(episode), ensure_ascii=False, default=str) + "\n"
    return text.encode("utf-8", errors="backslashreplace")


def split_lines(data: bytes, base: int = 0) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(offset, line, ends_with_newline)`` for every line of `data`, offsets counted from `base`."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            yield base + start, data[start:], False
            return
        yield base + start, data[start:end], True
        start = end + 1


_warned: set[tuple[str, int, int]] = set()


def warn_skipped(path: Path, line_no: int, offset: int, reason: str) -> None:
    """Log a skipped line once per process (files are re-read often; the warning need not repeat)."""
    key = (str(path), offset, hash(reason))
    if key in _warned:
        return
    if len(_warned) > 10_000:
        _warned.clear()
    _warned.add(key)
    logger.warning("Skipping line %d of %s (left untouched on disk): %s", line_no, path, reason)


def decode_line(path: Path, line_no: int, offset: int, raw: bytes, complete: bool) -> Episode | None:
    """Parse one raw line, warning about (and dropping) anything malformed; blank lines are ignored quietly."""
    if not raw.strip():
        return None
    try:
        return parse_episode(raw.decode("utf-8"))
    except UnicodeDecodeError:
        reason = "not valid UTF-8"
    except ValueError as exc:
        reason = str(exc)
    if not complete:
        reason = f"truncated last line, {reason}"
    warn_skipped(path, line_no, offset, reason)
    return None


@contextmanager
def reading(fd: int, wait: float = 2.0) -> Iterator[None]:
    """Hold a shared lock on a session file while reading it, so a line being appended is never seen half-written.

    Appenders hold the exclusive lock only for one write; if the lock stays taken longer, read anyway.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                yield
                return
            time.sleep(0.002)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def read_episodes(path: Path) -> list[Episode]:
    """Every well-formed episode in one JSONL file, in file order (malformed lines are reported and skipped)."""
    try:
        with open(path, "rb") as handle, reading(handle.fileno()):
            data = handle.read()
    except FileNotFoundError:
        return []
    except OSError as exc:
        logger.warning("Cannot read episode file %s: %s", path, exc)
        return []
    episodes = []
    for line_no, (offset, raw, complete) in enumerate(split_lines(data), start=1):
        episode = decode_line(path, line_no, offset, raw, complete)
        if episode is not None:
            episodes.append(episode)
    return episodes


def session_start(session_id: str) -> datetime | None:
    """When a session began (UTC), read from its id; None for names that are not ``YYYYMMDD_HHMMSS``."""
    try:
        return datetime.strptime(session_id, SESSION_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def format_recall(episodes: list[Episode], query: str) -> str:
    if not episodes:
        return f"No episodes found matching '{query}'."
    lines = []
    for ep in episodes:
        limit = 2000 if ep.role in LONG_ROLES else 500
        lines.append(f"[{ep.ts}] ({ep.role}) {ep.content[:limit]}")
    return "\n".join(lines)


class EpisodicMemory:
    """The episode log of one workspace (``<project>/.anton/episodes``)."""

    def __init__(self, episodes_dir: Path | str, enabled: bool = True) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.enabled = enabled
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
            moment = datetime.now(timezone.utc).replace(microsecond=0)
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
        now = datetime.now(timezone.utc).isoformat()
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
                    episode = _quiet_parse(raw)
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

        Each hit brings its whole turn (question and answer lines, in order); at most `max_results` turns.
        """
        if not self.enabled or max_results <= 0 or not self.episodes_dir.is_dir():
            return []
        since = None if days_back is None else datetime.now(timezone.utc) - timedelta(days=days_back)
        from anton_tui.memory.episode_index import IndexUnavailable

        try:
            turns = self.index.search(query, max_results=max_results, since=since)
        except (IndexUnavailable, OSError) as exc:
            logger.info("Recall is scanning the episode files directly: %s", exc)
            try:
                turns = self._scan(query, max_results=max_results, since=since)
            except OSError as scan_exc:
                logger.warning("Cannot search %s: %s", self.episodes_dir, scan_exc)
                return []
        return [episode for turn in turns for episode in turn]

    def recall_formatted(self, query: str, *, max_results: int = 20, days_back: int | None = None) -> str:
        return format_recall(self.recall(query, max_results=max_results, days_back=days_back), query)

    @property
    def index(self) -> RecallIndex:
        with self._index_guard:
            if self._index is None:
                from anton_tui.memory.episode_index import RecallIndex

                self._index = RecallIndex(self.episodes_dir)
            return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def _scan(self, query: str, *, max_results: int, since: datetime | None) -> list[list[Episode]]:
        """Anton's plain substring search over the files, used when the index is unavailable."""
        pattern = re.compile(re.escape(query), re.IGNORECASE)
        turns: dict[tuple[str, int], list[Episode]] = {}
        hits: dict[tuple[str, int], int] = {}
        for path in self.session_files():
            started = session_start(path.stem)
            if since is not None and (started is None or started < since):
                continue
            for episode in read_episodes(path):
                if episode.role in MEMORY_ROLES:
                    continue
                key = (path.stem, episode.turn)
                turns.setdefault(key, []).append(episode)
                if pattern.search(episode.content):
                    hits[key] = hits.get(key, 0) + 1
        best = sorted(hits, key=lambda key: (hits[key], key), reverse=True)[:max_results]
        return [turns[key] for key in best]


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


def _quiet_parse(raw: bytes) -> Episode | None:
    try:
        return parse_episode(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
