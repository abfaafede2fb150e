"""The episodes of a span of time (a day, say), read without reading the whole log.

Session files are named by the moment they began (``YYYYMMDD_HHMMSS.jsonl``, UTC) and only ever appended to, so
their lines are in time order. A file that began after the span is skipped by its name, one whose last write came
before the span by a `stat`; in the others a binary search over byte offsets finds the span's first line, and reading
stops at the first line after it. Gathering a day therefore costs a look at each file's name and size plus that
day's lines, however long the log is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from anton_tui.memory.episodes.record import SUFFIX, Episode, quick_parse, reading, session_start

_TS = re.compile(rb'^\{"ts":\s*"([^"]+)"')
PROBE = 4096  # bytes read at a probed offset to find the next line's time
CHUNK = 1 << 20


def line_time(raw: bytes) -> datetime | None:
    """When a raw episode line was written (from its `ts`, which Anton writes first); None when unreadable."""
    match = _TS.match(raw)
    if match is not None:
        stamp = match.group(1).decode("ascii", "replace")
    else:
        episode = quick_parse(raw)
        if episode is None:
            return None
        stamp = episode.ts
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def files_touching(folder: Path, start: datetime, end: datetime) -> list[Path]:
    """Session files that may hold lines written in ``[start, end)``: begun before `end`, written to since `start`."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for name in sorted(names):
        if not name.endswith(SUFFIX) or name.startswith("."):
            continue
        began = session_start(name[: -len(SUFFIX)])
        if began is not None and began >= end:
            continue
        path = folder / name
        try:
            if datetime.fromtimestamp(path.stat().st_mtime, UTC) < start:
                continue
        except OSError:
            continue
        found.append(path)
    return found


def _line_start(fd: int, offset: int, size: int) -> int:
    """Where the first line starting at or after `offset` begins (`size` when none does)."""
    if offset == 0:
        return 0
    position = offset - 1
    while position < size:
        data = os.pread(fd, PROBE, position)
        if not data:
            return size
        newline = data.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(data)
    return size


def _time_at(fd: int, begin: int) -> datetime | None:
    """The time of the line that begins at `begin` (its head, unless the `ts` is not where Anton writes it)."""
    head = os.pread(fd, 256, begin)
    if _TS.match(head):
        return line_time(head)
    data, position = b"", begin
    while b"\n" not in data:
        more = os.pread(fd, PROBE, position)
        if not more:
            break
        data += more
        position += len(more)
    return line_time(data.split(b"\n", 1)[0])


def first_line_at_or_after(fd: int, size: int, start: datetime) -> int:
    """The offset of the first line written at or after `start`, by binary search over byte offsets (the lines of
    a session file are in time order; a line without a readable time counts as earlier)."""
    low, high = 0, size
    while low < high:
        middle = (low + high) // 2
        begin = _line_start(fd, middle, size)
        if begin >= size:
            high = middle
            continue
        moment = _time_at(fd, begin)
        if moment is not None and moment >= start:
            high = middle
        else:
            low = begin + 1
    return _line_start(fd, low, size)


def episodes_in(path: Path, start: datetime, end: datetime) -> Iterator[Episode]:
    """The episodes of one session file written in ``[start, end)``, in order."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (held open across the generator's steps, closed below)
    except OSError:
        return
    try:
        with reading(handle.fileno()):
            size = os.fstat(handle.fileno()).st_size
            offset = first_line_at_or_after(handle.fileno(), size, start)
            tail = b""
            while offset < size:
                data = os.pread(handle.fileno(), CHUNK, offset)
                if not data:
                    break
                offset += len(data)
                lines = (tail + data).split(b"\n")
                tail = lines.pop()
                for raw in lines:
                    if not raw.strip():
                        continue
                    moment = line_time(raw)
                    if moment is not None and moment >= end:
                        return
                    if moment is None or moment < start:
                        continue
                    episode = quick_parse(raw)
                    if episode is not None:
                        yield episode
            if tail.strip() and (moment := line_time(tail)) is not None and start <= moment < end:
                episode = quick_parse(tail)
                if episode is not None:
                    yield episode
    finally:
        handle.close()


def episodes_between(folder: Path, start: datetime, end: datetime) -> Iterator[Episode]:
    """Every episode of the folder written in ``[start, end)``, file by file (oldest session first)."""
    for path in files_touching(folder, start, end):
        yield from episodes_in(path, start, end)
