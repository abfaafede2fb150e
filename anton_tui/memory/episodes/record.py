"""One episode line: the `Episode` record, reading and writing it in Anton's JSONL shape, and reading a session file.

Anton writes each line with ``json.dumps(asdict(episode), ensure_ascii=False)`` and its reader drops any line that
is not exactly that shape; `parse_episode` applies the same rules, and a line it rejects is reported once and left
untouched on disk. Both the episode log (`episodes`) and its search index (`index`) read files through here.
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

logger = logging.getLogger("anton_tui.memory.episodes.store")

SESSION_FORMAT = "%Y%m%d_%H%M%S"
SUFFIX = ".jsonl"
MEMORY_ROLES = frozenset({"memory_read", "memory_write"})
LONG_ROLES = frozenset({"assistant", "scratchpad", "tool_result", "tool_call"})
DOCUMENT_KINDS = frozenset({"summary", "reflection"})  # recalled conversation summaries and reflections
FIELDS = ("ts", "session", "turn", "role", "content", "meta")


class Episode(msgspec.Struct, forbid_unknown_fields=True):
    """One line of a session file, its fields in the order Anton writes them. A msgspec struct: lines read back are
    decoded straight into it, with Anton's rules for a well-formed line (no other key, each value of its type)."""

    ts: str
    session: str
    turn: int
    role: str
    content: str
    meta: dict[str, Any] = {}


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
    text = json.dumps(msgspec.structs.asdict(episode), ensure_ascii=False, default=str) + "\n"
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


@functools.cache
def _fast_decoder() -> msgspec.json.Decoder[Episode]:
    """A msgspec decoder for well-formed lines (about ten times quicker than `json.loads` and the checks above)."""
    return msgspec.json.Decoder(Episode)


def line_fields() -> Callable[[bytes], Episode]:
    """Decodes a well-formed line into its `Episode`; raises `ValueError` for anything else, which `decode_line` then
    judges and reports."""
    return _fast_decoder().decode


def many_line_fields() -> Callable[[bytes], list[Episode]]:
    """Decodes newline-separated well-formed lines at once, as `line_fields` does one (blank lines are skipped);
    raises `ValueError` if any line is not well formed."""
    return _fast_decoder().decode_lines


def quick_parse(raw: bytes) -> Episode | None:
    """The episode on one raw line, or None when `parse_episode` would reject it (nothing is logged)."""
    try:
        return _fast_decoder().decode(raw)
    except ValueError:  # msgspec's errors are ValueErrors; the exact rules below decide
        pass
    try:
        return parse_episode(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def quick_parse_many(raws: list[bytes]) -> list[Episode | None]:
    """`quick_parse` of each raw line, decoded in one go while every line is well formed."""
    if len(raws) > 1:
        try:
            lines = many_line_fields()(b"\n".join(raws))
        except ValueError:
            lines = []
        if len(lines) == len(raws):
            return list(lines)
    return [quick_parse(raw) for raw in raws]


def decode_line(path: Path, line_no: int, offset: int, raw: bytes, complete: bool) -> Episode | None:
    """Parse one raw line, warning about (and dropping) anything malformed; blank lines are ignored quietly."""
    if not raw.strip():
        return None
    try:
        return _fast_decoder().decode(raw)
    except ValueError:
        pass
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
        return datetime.strptime(session_id, SESSION_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


def format_recall(episodes: list[Episode], query: str) -> str:
    if not episodes:
        return f"No episodes found matching '{query}'."
    lines = []
    for ep in episodes:
        limit = 2000 if ep.role in LONG_ROLES or ep.role in DOCUMENT_KINDS else 500
        lines.append(f"[{ep.ts}] ({ep.role}) {ep.content[:limit]}")
    return "\n".join(lines)
