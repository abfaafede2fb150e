"""BM25 scores of the newest lines matching a query, worked out without FTS5 counting every match each time.

FTS5's own `bm25()` weighs each word by how many lines of the whole index hold it, and counts them afresh on every
query: for a common word that is a walk over most of the index, the larger part of a warm recall at a million
lines. Here the same score is computed from the same figures, read from the index: the line count and total length
(the index's "averages" record), how many lines hold each word (kept until the index changes, `data_version`), how
often each of the candidate lines holds the word (its instance list, read only as far as the last candidate) and
each candidate's length (`docsize`). The arithmetic is FTS5's own, in the same order, so the scores are the same
numbers. Anything this cannot do exactly (a word that is not one token once stemmed) is left to `bm25()`.
"""

from __future__ import annotations

import math
import sqlite3

from anton_tui.memory.episodes.index_store import WORDS_TOKENIZE

K1 = 1.2  # FTS5's bm25() constants
B = 0.75
WORTH_IT = 10_000  # below this many lines holding the query's words, FTS5's own counting is quicker
READ_LIMIT = 64  # instances read per candidate line at most, else FTS5's bm25() is left to it
_INSTANCES = "SELECT doc FROM temp.words_instances WHERE term = ? LIMIT ?"
# The candidate lines with their lengths in tokens as FTS5 keeps them (a varint per column, one column here), left
# encoded: lines share few lengths, each decoded once (`window`'s `part`).
_WITH_SIZES = "SELECT w.rowid, d.sz FROM words AS w JOIN words_docsize AS d ON d.id = w.rowid WHERE words MATCH ?"
_IN_ORDER = " ORDER BY w.rowid LIMIT ?"
STEM_CACHE = 4096

_TEMP_TABLES = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_rows USING fts5vocab(main, words, row);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_instances USING fts5vocab(main, words, instance);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer USING fts5(word, tokenize='{WORDS_TOKENIZE}');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer_instances USING fts5vocab(temp, stemmer, instance);
"""


def varint(data: bytes, at: int = 0) -> tuple[int, int]:
    """SQLite's variable-length integer at `at` in `data`, and where the next one starts."""
    value = 0
    for n in range(8):
        byte = data[at + n]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + n + 1
    return (value << 8) | data[at + 8], at + 9


class Bm25:
    """Scores lines of one index the way FTS5's `bm25(words)` does; one per reading connection."""

    def __init__(self) -> None:
        self.conn: sqlite3.Connection | None = None
        self.version: int | None = None
        self.averages: tuple[int, int] | None = None
        self.hits: dict[str, int] = {}
        self.stems: dict[str, str | None] = {}

    def window(
        self, conn: sqlite3.Connection, words: list[str], limit: int, *, dead: bool = False
    ) -> list[tuple[int, float]]:
        """``(rowid, score)`` of the first `limit` lines (by rowid) matching every one of `words` (leaving out the
        dead ones when `dead`), as ``SELECT rowid, bm25(words) FROM words WHERE words MATCH <the words as phrases>
        ORDER BY rowid`` would give them."""
        match = " ".join(_phrase(word) for word in words)
        stems = self._stems(conn, words)
        found = None  # (rowid, size) of the candidate lines, when the figures are worth using
        if stems is not None and sum(self._hits(conn, stem) for stem in set(stems)) >= WORTH_IT:
            found = conn.execute(_WITH_SIZES + not_dead("w.rowid", dead) + _IN_ORDER, (match, limit)).fetchall()
            if not found:
                return []
        freqs = None
        if stems is not None and found is not None and len(found) == limit:  # (else the lines are spread out thinly)
            freqs = {}
            for stem in set(stems):
                freqs[stem] = _frequencies(conn, stem, found[-1][0], len(found))
                if freqs[stem] is None:
                    freqs = None
                    break
        if freqs is None or found is None:
            sql = f"SELECT rowid, bm25(words) FROM words WHERE words MATCH ?{not_dead('rowid', dead)} ORDER BY rowid LIMIT ?"
            return conn.execute(sql, (match, limit)).fetchall()
        assert stems is not None
        rows, total = self._averages(conn)
        avgdl = float(total) / float(rows)
        idfs = [_idf(self.hits[stem], rows) for stem in stems]
        columns = [freqs[stem] for stem in stems]
        factor = K1 + 1.0
        parts: dict[tuple[int, bytes], float] = {}  # one term's share, by its count in the line and the line's size

        def part(count: int, size: bytes) -> float:
            freq, length = float(count), size[0] if size[0] < 0x80 else varint(size)[0]
            share = parts[count, size] = (freq * factor) / (freq + K1 * (1 - B + B * float(length) / avgdl))
            return share

        if len(stems) == 1:  # (0.0 + x is x: the same numbers as the loop below)
            idf, counts = idfs[0], columns[0]
            get = parts.get
            return [
                (rowid, -1.0 * (idf * (get((counts[rowid], size)) or part(counts[rowid], size))))
                for rowid, size in found
            ]
        out = []
        for rowid, length in found:
            score = 0.0
            for idf, counts in zip(idfs, columns, strict=False):
                count = counts[rowid]
                share = parts.get((count, length))
                score += idf * (part(count, length) if share is None else share)
            out.append((rowid, -1.0 * score))
        return out

    def _fresh(self, conn: sqlite3.Connection) -> None:
        """Forget the figures when the connection is new or the index changed since they were read."""
        if conn is not self.conn:
            for statement in _TEMP_TABLES.strip().split(";\n"):
                conn.execute(statement.rstrip(";"))
            self.conn, self.version, self.stems = conn, None, {}
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self.version:
            self.version, self.averages, self.hits = version, None, {}

    def _averages(self, conn: sqlite3.Connection) -> tuple[int, int]:
        if self.averages is None:
            (block,) = conn.execute("SELECT block FROM words_data WHERE id = 1").fetchone()
            rows, at = varint(block)
            total, _ = varint(block, at)  # one column
            self.averages = (rows, total)
        return self.averages

    def _hits(self, conn: sqlite3.Connection, stem: str) -> int:
        """How many lines of the index hold `stem` (as FTS5 counts them for its IDF: dead lines too)."""
        hits = self.hits.get(stem)
        if hits is None:
            found = conn.execute("SELECT doc FROM temp.words_rows WHERE term = ?", (stem,)).fetchone()
            hits = self.hits[stem] = found[0] if found else 0
        return hits

    def _stems(self, conn: sqlite3.Connection, words: list[str]) -> list[str] | None:
        """Each word as the index's one stemmed token; None if any word is not exactly one token."""
        self._fresh(conn)
        missing = [word for word in dict.fromkeys(words) if word not in self.stems]
        if missing:
            if len(self.stems) > STEM_CACHE:
                self.stems.clear()
            conn.executemany("INSERT INTO temp.stemmer(rowid, word) VALUES (?, ?)", enumerate(missing))
            tokens: dict[int, list[str]] = {}
            for term, doc in conn.execute("SELECT term, doc FROM temp.stemmer_instances ORDER BY doc, offset"):
                tokens.setdefault(doc, []).append(term)
            conn.execute("DELETE FROM temp.stemmer")
            for n, word in enumerate(missing):
                found = tokens.get(n, [])
                self.stems[word] = found[0] if len(found) == 1 else None
        stems = [self.stems[word] for word in words]
        return None if None in stems else stems  # type: ignore[return-value]


def _idf(hits: int, rows: int) -> float:
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return 1e-6 if idf <= 0.0 else idf


def _frequencies(conn: sqlite3.Connection, stem: str, last: int, lines: int) -> dict[int, int] | None:
    """How many times each line up to `last` holds `stem`, or None when that means reading more than
    `READ_LIMIT` times `lines` of its instances (they come in rowid order, and are read until one goes past `last`)."""
    limit = READ_LIMIT * lines
    counts: dict[int, int] = {}
    get = counts.get
    cursor = conn.execute(_INSTANCES, (stem, limit))
    try:
        for (doc,) in cursor:
            if doc > last:
                return counts
            counts[doc] = get(doc, 0) + 1
    finally:
        cursor.close()
    return None if sum(counts.values()) >= limit else counts


def not_dead(rowid: str, dead: bool) -> str:
    """The SQL condition that leaves out the dead rows (of removed or rewritten files), when there are any."""
    return f" AND {rowid} NOT IN (SELECT id FROM dead)" if dead else ""


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'
