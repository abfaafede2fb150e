"""Recall ranks a fixed corpus exactly as it did when the index held a full copy of every line.

The expected answers in `fixtures/recall/ranking.json` were recorded from that earlier index (see the README there),
which ranked every list of matches over its newest 2,000 lines; these tests rank over as many, and the rule that
sizes the window by the number of turns asked for is tested on its own. The index is derived data, so a fresh
build, a rebuild after it was deleted or damaged, and a search while it is only partly built must all agree with
them where they say they do.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from anton_tui.memory.episodes import recall_bm25

from anton_tui.memory.episodes import recall_query
from anton_tui.memory.episodes.index import INDEX_NAME
from anton_tui.memory.episodes.store import EpisodicMemory
from tests.recall_corpus import QUERIES, ranking, write_corpus
from tests.test_episodes import write_session

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "recall" / "ranking.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def recorded_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank over the newest 2,000 matches, as when the fixture was recorded."""
    monkeypatch.setattr(recall_query, "WINDOW_MIN", recall_query.WINDOW)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus") / "episodes"
    write_corpus(folder)
    return folder


@pytest.fixture(scope="module")
def memory(corpus: Path) -> EpisodicMemory:
    memory = EpisodicMemory(corpus)
    yield memory
    memory.close()


def test_the_fixture_covers_every_query() -> None:
    assert list(EXPECTED) == QUERIES


@pytest.mark.parametrize("query", QUERIES)
def test_recall_ranks_as_before(memory: EpisodicMemory, query: str) -> None:
    expected = EXPECTED[query]
    assert ranking(memory.recall(query)) == expected["20"]
    assert ranking(memory.recall(query, max_results=5)) == expected["5"]
    assert [[e.session, e.turn, e.role, e.content] for e in memory.recall(query, max_results=3)] == expected["lines"]


@pytest.mark.parametrize("damage", ["delete", "garbage"])
def test_a_rebuilt_index_ranks_the_same(corpus: Path, tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "episodes"
    folder.mkdir()
    for path in corpus.glob("*.jsonl"):
        (folder / path.name).write_bytes(path.read_bytes())
    first = EpisodicMemory(folder)
    first.recall("zebra")
    first.close()
    index = folder / INDEX_NAME
    if damage == "delete":
        index.unlink()
    else:
        index.write_bytes(b"not a database at all " * 4000)

    memory = EpisodicMemory(folder)
    for query in ("the", "invoices", "gecko", "rate limit", "%", "über"):
        assert ranking(memory.recall(query)) == EXPECTED[query]["20"], query
    memory.close()


WORD_LISTS = [["the"], ["data"], ["data", "report"], ["invoice"], ["invoices"], ["running"], ["the", "value"],
              ["über"], ["cafe"], ["zebra"], ["the", "zebra"], ["price"], ["query", "the", "table"]]


@pytest.mark.parametrize("limit", [300, 40])
def test_scores_from_the_index_figures_are_fts5s_bm25_to_the_last_bit(
    memory: EpisodicMemory, corpus: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """Common words are scored from the figures the index keeps (FTS5 would count every line holding them on every
    query); the scores must be exactly what FTS5's bm25() gives."""
    monkeypatch.setattr(recall_bm25, "WORTH_IT", 0)
    memory.recall("warm")  # the index is built
    own = []
    frequencies = recall_bm25._frequencies
    monkeypatch.setattr(recall_bm25, "_frequencies", lambda *a: own.append(a) or frequencies(*a))
    conn = sqlite3.connect(corpus / INDEX_NAME, isolation_level=None)
    scorer = recall_bm25.Bm25()
    sql = "SELECT rowid, bm25(words) FROM words WHERE words MATCH ? ORDER BY rowid LIMIT ?"
    for words in WORD_LISTS:
        expected = conn.execute(sql, (" ".join(f'"{word}"' for word in words), limit)).fetchall()
        assert scorer.window(conn, words, limit) == expected, words
        assert scorer.window(conn, words, limit) == expected, words  # with the counts kept from the first call
    conn.close()
    assert len(own) >= {300: 4, 40: 8}[limit]  # scored from the index figures, not handed to bm25()


def test_recall_ranks_as_before_with_scores_from_the_index_figures(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_bm25, "WORTH_IT", 0)
    monkeypatch.setattr(recall_query, "WINDOW", 300)  # so that more word lists fill their window
    fresh = EpisodicMemory(corpus)
    try:
        for query in QUERIES:
            got = ranking(fresh.recall(query))
            monkeypatch.setattr(recall_bm25, "WORTH_IT", 10**12)  # FTS5's bm25() throughout
            reference = ranking(fresh.recall(query))
            monkeypatch.setattr(recall_bm25, "WORTH_IT", 0)
            assert got == reference, query
    finally:
        fresh.close()


def test_a_common_word_is_ranked_over_its_newest_matches_more_of_them_when_more_turns_are_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_query, "WINDOW_MIN", 200)
    folder = tmp_path / "episodes"
    # An old turn that says "deploy" in many lines, then 300 newer turns that say it once each.
    old_turn = [("user", "deploy deploy"), *[("assistant", "deploy deploy deploy")] * 8]
    write_session(folder, "20250101_090000", [old_turn])
    write_session(folder, "20250601_090000", [[("user", f"deploy step {n}"), ("assistant", "ok")] for n in range(300)])
    memory = EpisodicMemory(folder)
    try:
        few = ranking(memory.recall("deploy", max_results=5))  # ranked over the newest 200 matching lines
        many = ranking(memory.recall("deploy", max_results=100))  # over the newest 1,000: the old turn is in reach
    finally:
        memory.close()
    assert len(few) == 5 and ["20250101_090000", 1] not in few
    assert many[0] == ["20250101_090000", 1]
