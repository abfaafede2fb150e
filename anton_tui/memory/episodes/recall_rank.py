"""Ranking recall's answers: the words of a question, the best turns for them, and the exact text as a fallback.

A query is read as a question: its stop words and the words of asking ("what did I say about", "when did we",
"remember") are left out when anything else is left, and the rest are stemmed as the index stems them. The turns
are ranked by BM25 over all of their matches (`turn_index`); turns whose scores are within `NEAR_TIE` of each other
count as tied, and the newer comes first. A word held by more than half of the turns weighs nothing under BM25's
idf: it is left out when the query has other words, and a query of only such words ties every turn holding them
all, so the newest of those come first (read from the plain-word index, newest lines first). When the words find
fewer turns than asked for (a part of a word such as "gecko" in "CoinGecko", punctuation, a word the index does not
keep), the turns whose lines hold the query's exact text in any case follow, those with more such lines first, then
the newer.
"""

from __future__ import annotations

import math
import sqlite3
from datetime import datetime
from operator import attrgetter

from anton_tui.memory.episodes.recall_query import (
    SLOT_BITS,
    TURN_BITS,
    IndexFlags,
    LineReader,
    TextCheck,
    exact_lines,
    not_dead,
    phrase,
    turn_spans,
)
from anton_tui.memory.episodes.record import SESSION_FORMAT
from anton_tui.memory.episodes.turn_index import Hit, TurnSearcher, analyzer

NEAR_TIE = 0.01  # scores closer than this share of the better one are tied (the newer turn wins)
DEPTH_EXTRA = 10  # turns fetched beyond those asked for, so that a near-tie at the edge is decided by age

STOP_WORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between both but by can
    could did do does doing down during each few for from further had has have having he her here hers him his how i
    if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their theirs them then there these they this those through
    to too under until up very was we were what when where which while who whom why will with would you your yours
    yourself s t don ll ve re d m""".split()  # noqa: SIM905 (a list of words reads better as text)
)
ASKING_WORDS = frozenset(
    """say said says tell told talk talked talking discuss discussed mention mentioned remember remind recall
    recalled know knew think thought look find found ask asked earlier before previously ago again last time
    please hey ok okay let lets""".split()  # noqa: SIM905 (a list of words reads better as text)
)


def query_words(query: str) -> list[str]:
    """The words of `query` that say what is looked for: without stop words and the words of asking, unless
    nothing else is left (then all of them)."""
    words = list(dict.fromkeys(analyzer(stem=False).analyze(query)))
    kept = [word for word in words if word not in STOP_WORDS and word not in ASKING_WORDS]
    if kept:
        return kept
    kept = [word for word in words if word not in ASKING_WORDS]
    return kept or words


def allowed_files(conn: sqlite3.Connection, since: datetime | None) -> set[int] | None:
    if since is None:
        return None
    rows = conn.execute("SELECT id FROM files WHERE started >= ?", (since.strftime(SESSION_FORMAT),))
    return {file_id for (file_id,) in rows}


def rank_turns(
    conn: sqlite3.Connection,
    searcher: TurnSearcher,
    version: tuple[object, int],
    query: str,
    limit: int,
    *,
    since: datetime | None,
    skip_files: set[int],
    reader: LineReader,
    flags: IndexFlags,
) -> list[tuple[int, int]]:
    """``(key, span)`` of the best `limit` turns for `query` (a span of 0 where it is not known): by BM25 of its
    words, then by its exact text (read back through `reader` where the index cannot prove it)."""
    allowed = allowed_files(conn, since)
    words = query_words(query)
    stems = searcher.stems(words)
    weightless = searcher.held_by_most(version, stems)
    ranked: list[tuple[int, int]]
    if weightless and len(weightless) == len(set(stems)):
        keys = newest_turns(conn, words, limit, allowed, skip_files, flags.dead, flags.spill)
        ranked = turn_spans(conn, keys) if flags.spans else [(key, 0) for key in keys]
    else:
        stems = [stem for stem in stems if stem not in weightless]
        hits = searcher.search(version, stems, limit + DEPTH_EXTRA, only_files=allowed, skip_files=skip_files)
        best = best_first(hits)[:limit]
        ranked = list(zip([hit.key for hit in best], searcher.spans([hit.address for hit in best]), strict=True))
    if len(ranked) < limit:
        seen = {key for key, _span in ranked}
        check = TextCheck(query, reader)
        exact = exact_turns(conn, query, check, allowed, skip_files, flags.dead, not flags.bulk, flags.spill)
        ranked += [(key, 0) for key in exact if key not in seen][: limit - len(ranked)]
    return ranked


_LOG_TIE = math.log1p(NEAR_TIE)


def best_first(hits: list[Hit]) -> list[Hit]:
    """The hits best first: scores within `NEAR_TIE` of each other share a bucket (a higher bucket is better); within
    one, the newer turn (the smaller key) comes first.

    The index hands hits over best first, so the buckets are found walking down the scores, a score met again (ties
    are common) not worked out again; hits in any other order are sorted as a whole (`by_bucket`), which gives the
    same order."""
    log, floor, tie, key = math.log, math.floor, _LOG_TIE, _KEY
    ordered: list[Hit] = []
    group: list[Hit] = []
    last: float | None = None
    bucket: int | None = None
    for hit in hits:
        score = hit.score
        if score != last:
            if last is not None and score > last:
                return by_bucket(hits)
            last = score
            here = floor(log(max(score, 1e-9)) / tie)
            if here != bucket:
                group.sort(key=key)
                ordered += group
                group, bucket = [], here
        group.append(hit)
    group.sort(key=key)
    ordered += group
    return ordered


def by_bucket(hits: list[Hit]) -> list[Hit]:
    """`best_first` for hits in any order."""
    log, floor, tie = math.log, math.floor, _LOG_TIE
    order = sorted([(-floor(log(max(hit.score, 1e-9)) / tie), hit.key, at) for at, hit in enumerate(hits)])
    return [hits[at] for _bucket, _key, at in order]


_KEY = attrgetter("key")


def newest_turns(
    conn: sqlite3.Connection,
    words: list[str],
    limit: int,
    allowed: set[int] | None,
    skip_files: set[int],
    dead: bool,
    spill: bool,
) -> list[int]:
    """Keys of the newest `limit` turns with a line holding all of `words` (plain words, any case)."""
    match = " ".join(phrase(word) for word in words)
    sql = f"SELECT rowid FROM tokens WHERE tokens MATCH ?{not_dead('rowid', dead)} ORDER BY rowid"
    spilled = dict(conn.execute("SELECT key, base FROM spill")) if spill else {}
    keys: dict[int, None] = {}
    for (line_id,) in conn.execute(sql, (match,)):
        key = line_id >> SLOT_BITS
        key = spilled.get(key, key)
        file_id = key >> TURN_BITS
        if file_id in skip_files or (allowed is not None and file_id not in allowed):
            continue
        keys[key] = None
        if len(keys) >= limit:
            break
    return sorted(keys)


def exact_turns(
    conn: sqlite3.Connection,
    query: str,
    check: TextCheck,
    allowed: set[int] | None,
    skip_files: set[int],
    dead: bool,
    word_list: bool,
    spill: bool,
) -> list[int]:
    """Keys of the turns with lines holding the query's exact text (of the newest such lines), more lines first,
    then newer first."""
    found, unconfirmed = exact_lines(conn, query, check, not_dead("rowid", dead), word_list)
    lines = [line_id for line_id in found if line_id not in unconfirmed or check.holds(line_id, unconfirmed[line_id])]
    spilled = dict(conn.execute("SELECT key, base FROM spill")) if spill and lines else {}
    counts: dict[int, int] = {}
    for line_id in lines:
        key = line_id >> SLOT_BITS
        key = spilled.get(key, key)
        file_id = key >> TURN_BITS
        if file_id in skip_files or (allowed is not None and file_id not in allowed):
            continue
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts, key=lambda key: (-counts[key], key))
