"""Reading recall's answers back from the index: turn keys and line ids, the lines of a turn read from their files,
and the lines that hold a query's exact text.

The index keeps no copy of the text. The exact-text lines come from an index of the unstemmed words: the query's
words narrow the lines down (a word at either end of the query may be part of a longer word, found through a
trigram index of the distinct words), and when that alone cannot prove a line holds the text, the line is read back
from its JSONL file and checked. A query made only of punctuation is looked for by reading the files, newest first.
The newest `WINDOW` such lines are found; ranking is `recall_rank`'s.
"""

from __future__ import annotations

import os
import re
import sqlite3
import unicodedata
from collections.abc import Callable
from pathlib import Path

from anton_tui.memory.episodes.index_store import SPAN_INDEX
from anton_tui.memory.episodes.record import (
    MEMORY_ROLES,
    SUFFIX,
    Episode,
    many_line_fields,
    quick_parse,
    quick_parse_many,
)
from anton_tui.memory.episodes.scan import bytes_prefilter, matching_offsets, read_bytes, text_pattern
from anton_tui.memory.episodes.turn_index import SPAN_BITS, SPAN_TOP, pack_span

WINDOW = 2000  # at most this many of the newest lines holding a query's exact text are found
MAX_TERMS = 400  # a word of the query that is part of more distinct words than this does not narrow anything
CHECK_BUDGET = 20_000  # lines read back at most to confirm the exact text
# A line's id is (file id << FILE_SHIFT) | (turn part << SLOT_BITS) | slot, counted so that a smaller id is newer:
# file ids go down as sessions get newer, and within a file turns and lines count down from the top of their range.
# The id of a turn (its "key") is the line id without the slot. A turn with more lines than slots goes on in more
# parts, each of which names its turn's first part in the `spill` table.
SLOT_BITS = 6
TURN_BITS = 18
FILE_SHIFT = SLOT_BITS + TURN_BITS
SLOT_TOP = (1 << SLOT_BITS) - 1
TURN_TOP = (1 << TURN_BITS) - 1
READ_AHEAD = 4096  # bytes read at once when reading a line back
SPAN_READ = 256 << 10  # a turn's lines less than this far apart are read back at once
_WORD = re.compile(r"[^\W_]+")


class IndexFlags:
    """Whether any rows are dead, a big build is under way, and any turn goes on in more parts: looked up once, when
    first asked (a search that ranks by BM25 and reads its turns through their spans never asks)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._flags: tuple[bool, bool, bool, bool] | None = None

    def _read(self) -> tuple[bool, bool, bool, bool]:
        if self._flags is None:
            row = self._conn.execute(_FLAGS).fetchone()
            self._flags = (row[0] == 1, row[1] == 1, row[2] == 1, row[3] == 1)
        return self._flags

    @property
    def dead(self) -> bool:
        return self._read()[0]

    @property
    def bulk(self) -> bool:
        return self._read()[1]

    @property
    def spill(self) -> bool:
        return self._read()[2]

    @property
    def spans(self) -> bool:
        """Whether the turns table has its index by key, which gives a turn's span (`turn_spans`)."""
        return self._read()[3]


_FLAGS = (
    "SELECT EXISTS(SELECT 1 FROM dead), EXISTS(SELECT 1 FROM meta WHERE k = 'bulk'), EXISTS(SELECT 1 FROM spill),"
    f" EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = '{SPAN_INDEX}')"
)


def not_dead(rowid: str, dead: bool) -> str:
    """The SQL condition that leaves out the dead rows (of removed or rewritten files), when there are any."""
    return f" AND {rowid} NOT IN (SELECT id FROM dead)" if dead else ""


def phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def turn_key(file_id: int, part: int) -> int:
    return (file_id << TURN_BITS) | (TURN_TOP - part)


def turn_bounds(key: int) -> tuple[int, int]:
    return key << SLOT_BITS, ((key + 1) << SLOT_BITS) - 1


def file_bounds(file_id: int) -> tuple[int, int]:
    return file_id << FILE_SHIFT, ((file_id + 1) << FILE_SHIFT) - 1


def _each_line(block: bytes) -> list[Episode]:
    """The lines of `block` Anton's reader keeps, each decoded on its own; none when the first is not one of them."""
    first, *rest = block.split(b"\n")
    head = quick_parse(first)
    if head is None:
        return []
    return [head, *(episode for episode in map(quick_parse, rest) if episode is not None)]


class LineReader:
    """Reads indexed lines back from their JSONL files; the last `KEEP_OPEN` files opened stay open between searches.

    Files are named as `use` last gave them, and the index is asked for the name of any other (a file id always
    names the same file: a file read again gets a new id)."""

    KEEP_OPEN = 64

    def __init__(self, episodes_dir: Path, name_of: Callable[[int], str | None] = lambda file_id: None) -> None:
        self.folder = str(episodes_dir)
        self.names: dict[int, str] = {}
        self.name_of = name_of  # asked for the files `names` does not hold
        self._decode_lines = many_line_fields()
        self._fds: dict[int, int | None] = {}  # oldest first

    def use(self, names: dict[int, str]) -> None:
        """Read from the files as the index now names them (file id to session name)."""
        if names is not self.names:
            self.close()
            self.names = names

    def _fd(self, file_id: int) -> int | None:
        fds = self._fds
        fd = fds.get(file_id, -1)  # (None: a file that could not be opened)
        if fd != -1:
            return fd
        name = self.names.get(file_id) or self.name_of(file_id)
        try:
            fd = None if name is None else os.open(f"{self.folder}/{name}{SUFFIX}", os.O_RDONLY)
        except OSError:
            fd = None
        fds[file_id] = fd
        if len(fds) > self.KEEP_OPEN:
            old = fds.pop(next(iter(fds)))
            if old is not None:
                os.close(old)
        return fd

    def raw(self, line_id: int, offset: int) -> bytes | None:
        """The line starting at `offset` in its file, without its newline."""
        fd = self._fd(line_id >> FILE_SHIFT)
        if fd is None:
            return None
        parts = []
        try:
            while True:
                block = os.pread(fd, READ_AHEAD, offset)
                end = block.find(b"\n")
                if end >= 0 or len(block) < READ_AHEAD:
                    parts.append(block if end < 0 else block[:end])
                    return b"".join(parts)
                parts.append(block)
                offset += len(block)
        except OSError:
            return None

    def turns(self, ranked: list[tuple[int, int]]) -> dict[int, list[Episode] | None]:
        """The episodes of each turn ``(key, span)``, read at once from its span (`turn_index`): the lines there of
        the turn its first line belongs to, memory lines left out. None for a turn whose span cannot say (not known,
        too long to read at once, or not starting with a whole line any more): then its lines are looked up.
        (One loop for all of them: a recall reads twenty, and a call each cost more than the reading around it.)"""
        found: dict[int, list[Episode] | None] = {}
        fd_of, pread, decode, memory = self._fd, os.pread, self._decode_lines, MEMORY_ROLES
        for key, span in ranked:
            length = span & SPAN_TOP
            if not length or length > SPAN_READ:
                found[key] = None
                continue
            fd = fd_of(key >> TURN_BITS)
            if fd is None:
                found[key] = []
                continue
            try:
                block = pread(fd, length, span >> SPAN_BITS)
            except OSError:
                found[key] = []
                continue
            if len(block) < length:
                found[key] = None
                continue
            try:
                lines = decode(block)
            except ValueError:  # a line Anton's reader would drop lies within the turn: each line on its own
                lines = _each_line(block)
            if not lines:
                found[key] = None
                continue
            turn = lines[0].turn
            found[key] = [line for line in lines if line.turn == turn and line.role not in memory]
        return found

    def episode(self, line_id: int, offset: int) -> Episode | None:
        raw = self.raw(line_id, offset)
        return None if raw is None else quick_parse(raw)

    def episodes(self, rows: list[tuple[int, int]]) -> list[Episode | None]:
        """The episodes at ``(line id, offset)`` of one file, in order; lines close together are read at once."""
        if len(rows) < 2 or rows[-1][1] - rows[0][1] > SPAN_READ or rows[-1][1] < rows[0][1]:
            return [self.episode(line_id, offset) for line_id, offset in rows]
        fd = self._fd(rows[0][0] >> FILE_SHIFT)
        if fd is None:
            return [None] * len(rows)
        first, last = rows[0][1], rows[-1][1]
        try:
            block = os.pread(fd, last - first + READ_AHEAD, first)
        except OSError:
            return [None] * len(rows)
        whole = block.find(b"\n", last - first)
        if whole > 0:  # the turn's lines one after the other, as they mostly are: decoded at once
            together = _decode_together(block[:whole], len(rows))
            if together is not None:
                return together
        raws: list[bytes] = []
        for line_id, offset in rows:
            start = offset - first
            end = block.find(b"\n", start)
            if end < 0:  # the last line is longer than what was read
                return quick_parse_many(raws) + [self.episode(line_id, offset) for line_id, offset in rows[len(raws) :]]
            raws.append(block[start:end])
        return quick_parse_many(raws)

    def close(self) -> None:
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)
        self._fds.clear()


# ---- scores -------------------------------------------------------------------------------------------------------


class TextCheck:
    """Confirms that a line holds the query's exact text (any case) by reading it back from its file."""

    def __init__(self, query: str, reader: LineReader) -> None:
        self.pattern = text_pattern(query)
        self.prefilter = bytes_prefilter(query)
        self.reader = reader

    def holds(self, line_id: int, offset: int) -> bool:
        raw = self.reader.raw(line_id, offset)
        if raw is None or (self.prefilter is not None and self.prefilter.search(raw) is None):
            return False
        episode = quick_parse(raw)
        return episode is not None and self.pattern.search(episode.content) is not None


def turn_spans(conn: sqlite3.Connection, keys: list[int]) -> list[tuple[int, int]]:
    """``(key, span)`` of each turn, its span read from the turns table (0 for a turn not there), so that it is read
    back at once, as a turn found through the turn index is (the table needs its index by key: `IndexFlags.spans`)."""
    spans: dict[int, int] = {}
    for start in range(0, len(keys), 100):  # one statement for many turns (SQLite takes up to 999 parameters)
        chunk = keys[start : start + 100]
        sql = " UNION ALL ".join([_SPAN_OF] * len(chunk))
        bounds = [part for key in chunk for part in (key >> TURN_BITS, TURN_TOP - (key & TURN_TOP))]
        for file_id, first, begin, end in conn.execute(sql, bounds):
            spans[turn_key(file_id, first)] = pack_span(begin, end)
    return [(key, spans.get(key, 0)) for key in keys]


_SPAN_OF = f"SELECT file_id, first, start, end FROM turns INDEXED BY {SPAN_INDEX} WHERE file_id = ? AND first = ?"


def load_ranked(
    conn: sqlite3.Connection, reader: LineReader, ranked: list[tuple[int, int]], spill: Callable[[], bool]
) -> list[list[Episode]]:
    """The episodes of each ``(turn key, span)`` in file order, in the order given: each turn read at once through
    its span where it has one, the others line by line (`load_turns`); turns that read back empty are left out.
    `spill` says whether any turn goes on in more parts (asked only when a turn is read line by line)."""
    found = reader.turns(ranked)
    unknown = [key for key, episodes in found.items() if episodes is None]
    if unknown:
        found.update(turn_lines(conn, reader, unknown, spill()))
    return [episodes for key, _span in ranked if (episodes := found[key])]


def load_turns(
    conn: sqlite3.Connection, reader: LineReader, keys: list[int], spill: bool | None = None
) -> list[list[Episode]]:
    """The episodes of each turn in file order, read back from its file (a turn's lines at one read when they
    are close together); turns that read back empty are left out. `spill`: whether any turn goes on in more parts
    (looked up when not given)."""
    found = turn_lines(conn, reader, keys, spill)
    return [episodes for key in keys if (episodes := found[key])]


def turn_lines(
    conn: sqlite3.Connection, reader: LineReader, keys: list[int], spill: bool | None = None
) -> dict[int, list[Episode]]:
    """The episodes of each turn, its lines looked up in the index and read back from its file."""
    parts: dict[int, list[int]] = {key: [key] for key in keys}
    if spill is None:
        spill = conn.execute("SELECT EXISTS(SELECT 1 FROM spill)").fetchone()[0] == 1
    if keys and spill:
        marks = ",".join("?" * len(keys))
        for part, base in conn.execute(f"SELECT key, base FROM spill WHERE base IN ({marks})", keys):
            parts[base].append(part)
    every = [part for key in keys for part in parts[key]]
    rows_of: dict[int, list[tuple[int, int]]] = {key: [] for key in keys}
    base_of = {part: key for key in keys for part in parts[key]}
    for start in range(0, len(every), 100):  # one statement for many turns (SQLite takes up to 999 parameters)
        chunk = every[start : start + 100]
        sql = " UNION ALL ".join(["SELECT id, offset FROM lines WHERE id BETWEEN ? AND ?"] * len(chunk))
        for line_id, offset in conn.execute(sql, [bound for part in chunk for bound in turn_bounds(part)]):
            rows_of[base_of[line_id >> SLOT_BITS]].append((line_id, offset))
    turns = {}
    for key in keys:
        rows = sorted(rows_of[key], reverse=True)
        turns[key] = [e for e in reader.episodes(rows) if e is not None and e.role not in MEMORY_ROLES]
    return turns


def _decode_together(block: bytes, count: int) -> list[Episode | None] | None:
    """The `count` well-formed lines that make up `block`, or None when it holds other lines or a bad one."""
    try:
        lines = many_line_fields()(block)
    except ValueError:
        return None
    if len(lines) != count:
        return None
    return list(lines)


# ---- the exact text -----------------------------------------------------------------------------------------------


def _is_word_char(ch: str) -> bool:
    """Whether FTS5's unicode61 tokenizer keeps `ch` inside a word (letters, numbers and private-use characters)."""
    return ch.isalnum() or unicodedata.category(ch) == "Co"


def word_runs(query: str) -> list[tuple[str, bool, bool]]:
    """The query's runs of word characters, lowercased, each with whether it may go on past its left and right end."""
    runs: list[tuple[str, bool, bool]] = []
    start = None
    for position, ch in enumerate(query + " "):
        inside = position < len(query) and _is_word_char(ch)
        if inside and start is None:
            start = position
        elif not inside and start is not None:
            runs.append((query[start:position].lower(), start == 0, position == len(query)))
            start = None
    return runs


def _terms_containing(conn: sqlite3.Connection, text: str, *, suffix: bool, word_list: bool) -> list[str] | None:
    """Distinct indexed words holding `text` (ending with it when `suffix`); None when there are too many."""
    if not word_list:  # slower: every distinct word of the index is looked at
        rows = conn.execute("SELECT term FROM tokens_vocab WHERE instr(term, ?) > 0", (text,))
    elif len(text) >= 3:
        rows = conn.execute(
            "SELECT t.term FROM term_grams g JOIN terms t ON t.id = g.rowid WHERE term_grams MATCH ?", (phrase(text),)
        )
    else:
        rows = conn.execute("SELECT term FROM terms WHERE instr(term, ?) > 0", (text,))
    found = []
    for (term,) in rows:
        if term.endswith(text) if suffix else text in term:
            found.append(term)
            if len(found) > MAX_TERMS:
                return None
    return found


def _narrowing(conn: sqlite3.Connection, query: str, word_list: bool) -> tuple[str | None, bool] | None:
    """An FTS query over the unstemmed words that every line holding `query` matches, and whether matching it
    proves the line holds the text; ``(None, False)`` when nothing can hold it, None when words cannot narrow it."""
    runs = word_runs(query)
    groups = []
    for text, open_left, open_right in runs:
        if not open_left and not open_right:
            groups.append(phrase(text))
        elif not open_left:
            groups.append(phrase(text) + "*")
        else:
            terms = _terms_containing(conn, text, suffix=not open_right, word_list=word_list)
            if terms is None:
                continue
            if not terms:
                return None, False
            groups.append("(" + " OR ".join(phrase(term) for term in terms) + ")")
    if not groups:
        return None
    proven = len(runs) == 1 and len(groups) == 1 and query.isascii() and runs[0][1] and runs[0][2]
    return " AND ".join(groups), proven


def exact_lines(
    conn: sqlite3.Connection, query: str, check: TextCheck, skip_dead: str, word_list: bool, window: int = WINDOW
) -> tuple[list[int], dict[int, int]]:
    """Ids of the newest `window` lines whose content contains `query` in any case, and of those the ones that may
    not (to be confirmed), with their byte offsets."""
    narrowing = _narrowing(conn, query, word_list)
    if narrowing is None:
        return _scan_for_lines(conn, check, window), {}
    match, proven = narrowing
    if match is None:
        return [], {}
    if proven:
        sql = f"SELECT rowid FROM tokens WHERE tokens MATCH ?{skip_dead} ORDER BY rowid LIMIT ?"
        return [rowid for (rowid,) in conn.execute(sql, (match, window))], {}
    candidates = (
        "SELECT l.id, l.offset FROM tokens t JOIN lines l ON l.id = t.rowid WHERE tokens MATCH ? ORDER BY t.rowid"
    )
    rows = conn.execute(candidates + " LIMIT ?", (match, window + 1)).fetchall()
    if len(rows) <= window:  # all of them are in the window if they hold the text: confirm only those that matter
        return [line_id for line_id, _offset in rows], dict(rows)
    found: list[int] = []
    for line_id, offset in conn.execute(candidates + " LIMIT ?", (match, CHECK_BUDGET)):
        if check.holds(line_id, offset):
            found.append(line_id)
            if len(found) >= window:
                break
    return found, {}


def _scan_for_lines(conn: sqlite3.Connection, check: TextCheck, window: int) -> list[int]:
    """Exact-text lines found by reading the indexed files newest first, until `window` are found."""
    found: list[int] = []
    for file_id, name in conn.execute("SELECT id, name FROM files WHERE indexed_bytes > 0 ORDER BY id").fetchall():
        data = read_bytes(Path(check.reader.folder) / f"{name}{SUFFIX}")
        if not data:
            continue
        offsets = set(matching_offsets(data, check.pattern, check.prefilter))
        if not offsets:
            continue
        ids = conn.execute("SELECT id, offset FROM lines WHERE id BETWEEN ? AND ?", file_bounds(file_id))
        found.extend(sorted(line_id for line_id, offset in ids if offset in offsets))
        if len(found) >= window:
            break
    return found[:window]
