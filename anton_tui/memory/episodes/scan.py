"""Searching episode files directly, without the index: Anton's case-insensitive substring match over every line.

Recall uses it when the index cannot answer (another process holds it, or it cannot be written), and for the files
the index has not reached yet while it is being built. It finds the same lines as Anton's own scan, only quicker:
a whole file is first searched as bytes, and only a file with a possible hit has its lines decoded.

Files are read newest first, and only until enough turns have matched (as Anton does); the turns found rank by
their number of matching lines, then newest first, and each comes back whole.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from anton_tui.memory.episodes.record import (
    MEMORY_ROLES,
    Episode,
    decode_line,
    many_line_fields,
    quick_parse,
    reading,
    session_start,
    split_lines,
)

logger = logging.getLogger(__name__)

TurnKey = tuple[str, int]

# Characters other than ASCII letters that Python's case-insensitive matching takes for an ASCII letter.
_ASCII_FOLDS = {"k": "\u212a", "s": "\u017f"}


def text_pattern(query: str) -> re.Pattern[str]:
    """What a line's content must contain: the query's exact text, in any case (Anton's rule)."""
    return re.compile(re.escape(query), re.IGNORECASE)


def bytes_prefilter(query: str) -> re.Pattern[bytes] | None:
    """A pattern that finds, in a file's raw bytes, every line whose content may contain `query`.

    JSON writes most text as it is; where it may not (a quote, a backslash or a control character in the query, or
    a ``\\u`` escape in the line) the pattern still stops on the line, so it is decoded and checked. None for a
    query with non-ASCII letters: then every line is decoded.
    """
    if not query or not query.isascii() or any(ch in '"\\' or ord(ch) < 0x20 for ch in query):
        return None
    parts = []
    for ch in query:
        folded = _ASCII_FOLDS.get(ch.lower())
        if folded is not None:
            parts.append(f"(?:{re.escape(ch)}|{re.escape(folded.encode().decode('latin-1'))})")
        else:
            parts.append(re.escape(ch))
    return re.compile(("|".join(["".join(parts), r"\\u"])).encode("latin-1"), re.IGNORECASE)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes read under its shared lock, or None when it is gone or unreadable (a warning is logged)."""
    try:
        with open(path, "rb") as handle, reading(handle.fileno()):
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("Cannot read episode file %s: %s", path, exc)
        return None


def scan_turns(paths: Iterable[Path], query: str, *, max_results: int, since: datetime | None) -> list[list[Episode]]:
    """Turns of these files (given newest first) whose lines contain `query`, at most `max_results`.

    Like Anton, files are read newest first until `max_results` turns have matched; those found rank by their
    number of matching lines, then newest first.
    """
    if max_results <= 0:
        return []
    pattern = text_pattern(query)
    prefilter = bytes_prefilter(query)
    found: dict[TurnKey, list[Episode]] = {}
    hits: dict[TurnKey, int] = {}
    for path in paths:
        started = session_start(path.stem)
        if since is not None and (started is None or started < since):
            continue
        data = read_bytes(path)
        if not data or (prefilter is not None and prefilter.search(data) is None):
            continue
        turns, matched = _matching_turns(path, data, pattern)
        for turn, count in matched.items():
            found[(path.stem, turn)] = turns[turn]
            hits[(path.stem, turn)] = count
        if len(found) >= max_results:
            break
    best = sorted(hits, key=lambda key: (hits[key], key), reverse=True)[:max_results]
    return [found[key] for key in best]


def _matching_turns(
    path: Path, data: bytes, pattern: re.Pattern[str]
) -> tuple[dict[int, list[Episode]], dict[int, int]]:
    """Every turn of one file's lines (memory lines left out), in file order, and how many lines of each match.

    A file of well-formed lines is decoded at once (msgspec, in C); one with any other line is read line by line,
    each bad line reported and skipped."""
    turns: dict[int, list[Episode]] = {}
    matched: dict[int, int] = {}
    try:
        lines: Iterable[Episode] = many_line_fields()(data)
    except ValueError:
        decoded = (decode_line(path, number, offset, raw, complete)
                   for number, (offset, raw, complete) in enumerate(split_lines(data), start=1))  # fmt: skip
        lines = (episode for episode in decoded if episode is not None)
    search = pattern.search
    for line in lines:
        if line.role in MEMORY_ROLES:
            continue
        turn = line.turn
        held = turns.get(turn)
        if held is None:
            turns[turn] = [line]
        else:
            held.append(line)
        if search(line.content):
            matched[turn] = matched.get(turn, 0) + 1
    return turns, matched


def matching_offsets(data: bytes, pattern: re.Pattern[str], prefilter: re.Pattern[bytes] | None) -> list[int]:
    """Byte offsets of the lines in `data` whose content contains the pattern (memory lines and bad lines left out)."""
    offsets = []
    candidates: Iterable[int]
    if prefilter is None:
        candidates = (offset for offset, _raw, _complete in split_lines(data))
    else:
        candidates = _line_starts(data, prefilter)
    for offset in candidates:
        end = data.find(b"\n", offset)
        episode = quick_parse(data[offset : len(data) if end < 0 else end])
        if episode is not None and episode.role not in MEMORY_ROLES and pattern.search(episode.content):
            offsets.append(offset)
    return offsets


def _line_starts(data: bytes, prefilter: re.Pattern[bytes]) -> list[int]:
    """Start offsets of the lines holding a prefilter match, each once, in file order."""
    starts: list[int] = []
    position = 0
    while True:
        match = prefilter.search(data, position)
        if match is None:
            return starts
        start = data.rfind(b"\n", 0, match.start()) + 1
        starts.append(start)
        end = data.find(b"\n", match.end())
        if end < 0:
            return starts
        position = end + 1
