"""Recall ranks a fixed corpus as recorded, finds the turn that answers a question, and ranks every match.

The expected answers in `fixtures/recall/ranking.json` were recorded from the turn index (see the README there). The
index is derived data, so a fresh build and a rebuild after it was deleted or damaged must agree with them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anton_tui.memory.episodes.index import INDEX_NAME
from anton_tui.memory.episodes.store import EpisodicMemory
from tests.recall_corpus import QUERIES, ranking, write_corpus
from tests.test_episodes import write_session

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "recall" / "ranking.json").read_text(encoding="utf-8"))


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
def test_recall_ranks_as_recorded(memory: EpisodicMemory, query: str) -> None:
    expected = EXPECTED[query]
    assert ranking(memory.recall(query)) == expected["20"]
    assert ranking(memory.recall(query, max_results=5)) == expected["5"]
    assert [[e.session, e.turn, e.role, e.content] for e in memory.recall(query, max_results=3)] == expected["lines"]


@pytest.mark.parametrize("damage", ["delete", "garbage", "turns gone"])
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
    elif damage == "garbage":
        index.write_bytes(b"not a database at all " * 4000)
    else:
        for part in (folder / ".recall-index.turns").iterdir():
            part.unlink()

    memory = EpisodicMemory(folder)
    for query in ("the", "invoices", "gecko", "rate limit", "%", "über"):
        assert ranking(memory.recall(query)) == EXPECTED[query]["20"], query
    memory.close()


def test_an_old_turn_that_says_a_word_most_comes_first_however_many_newer_turns_say_it_once(tmp_path: Path) -> None:
    """Every match is ranked: no window of the newest matches leaves the old turn out."""
    folder = tmp_path / "episodes"
    old_turn = [("user", "deploy deploy"), *[("assistant", "deploy deploy deploy")] * 8]
    write_session(folder, "20250101_090000", [old_turn])
    newer = [[("user", f"check step {n}" if n % 3 else f"deploy step {n}"), ("assistant", "ok")] for n in range(600)]
    write_session(folder, "20250601_090000", newer)
    memory = EpisodicMemory(folder)
    try:
        assert ranking(memory.recall("deploy", max_results=1)) == [["20250101_090000", 1]]
        assert ranking(memory.recall("when did we deploy?", max_results=1)) == [["20250101_090000", 1]]
    finally:
        memory.close()


def test_a_word_held_by_most_turns_ties_them_and_the_newest_come_first(tmp_path: Path) -> None:
    """Under BM25's idf a word in more than half of the turns tells none apart; with other words it is left out."""
    folder = tmp_path / "episodes"
    write_session(folder, "20250101_090000", [[("user", "report report report on the zebra"), ("assistant", "ok")]])
    write_session(folder, "20250601_090000", [[("user", f"report {n}"), ("assistant", "ok")] for n in range(1, 40)])
    memory = EpisodicMemory(folder)
    try:
        assert ranking(memory.recall("report", max_results=3)) == [["20250601_090000", n] for n in (39, 38, 37)]
        assert ranking(memory.recall("zebra report", max_results=3)) == [["20250101_090000", 1]]
    finally:
        memory.close()


def test_a_word_that_comes_to_be_held_by_most_turns_ties_them_from_the_next_recall_on(tmp_path: Path) -> None:
    """Whether a word weighs anything is known per state of the index: new turns that say it change the answer."""
    folder = tmp_path / "episodes"
    write_session(folder, "20250101_090000", [[("user", "report report report"), ("assistant", "ok")]])
    write_session(folder, "20250201_090000", [[("user", f"note {n}"), ("assistant", "ok")] for n in range(1, 6)])
    memory = EpisodicMemory(folder)
    try:
        assert ranking(memory.recall("report", max_results=1)) == [["20250101_090000", 1]], "a rare word: by BM25"
        write_session(folder, "20250601_090000", [[("user", f"report {n}"), ("assistant", "ok")] for n in range(1, 40)])
        memory.index.refresh()
        assert ranking(memory.recall("report", max_results=2)) == [["20250601_090000", n] for n in (39, 38)]
    finally:
        memory.close()


def test_a_question_whose_words_are_spread_over_a_turn_and_the_next_finds_the_second(tmp_path: Path) -> None:
    folder = tmp_path / "episodes"
    turns = [
        [("user", "Let's look at the Lisbon office for a bit."), ("assistant", "Loaded the office data.")],
        [("user", "The monthly rent went up to 4,200 euros."), ("assistant", "Noted.")],
        *[[("user", f"The monthly rent of the Oslo office is {n} euros"), ("assistant", "ok")] for n in range(30)],
        *[[("user", f"The Lisbon office has {n} desks"), ("assistant", "ok")] for n in range(30)],
    ]
    write_session(folder, "20250101_090000", turns)
    memory = EpisodicMemory(folder)
    try:
        found = ranking(memory.recall("what did I say about the rent of the Lisbon office?", max_results=3))
    finally:
        memory.close()
    assert ["20250101_090000", 2] in found


def test_a_turn_that_only_neighbours_a_match_is_not_an_answer(tmp_path: Path) -> None:
    folder = tmp_path / "episodes"
    write_session(folder, "20250101_090000", [
        [("user", "What was the price yesterday?"), ("assistant", "42 dollars.")],
        [("user", "Keep running the job"), ("assistant", "ok")],
    ])  # fmt: skip
    memory = EpisodicMemory(folder)
    try:
        assert ranking(memory.recall("price")) == [["20250101_090000", 1]]
    finally:
        memory.close()


def test_near_ties_go_newest_first_whatever_order_the_hits_come_in() -> None:
    """Scores within one share of each other tie, and the newer turn (the smaller key) wins: the same order when the
    index hands the hits over best first (as it does; the quick walk) as when they come in any other order."""
    import math
    import random

    from anton_tui.memory.episodes.recall_rank import NEAR_TIE, best_first
    from anton_tui.memory.episodes.turn_index import Hit

    def expected(hits: list[Hit]) -> list[Hit]:
        bucket = lambda hit: math.floor(math.log(max(hit.score, 1e-9)) / math.log1p(NEAR_TIE))  # noqa: E731
        return sorted(hits, key=lambda hit: (-bucket(hit), hit.key))

    rng = random.Random(5)
    for _ in range(500):
        scores = [rng.choice([12.0, 11.95, 11.0, 7.5, 7.47, 3.0, 0.0]) * rng.choice([1, 1, 1.004]) for _ in range(30)]
        keys = rng.sample(range(10_000), 30)
        hits = [Hit(key, score, None) for key, score in zip(keys, sorted(scores, reverse=True), strict=True)]
        assert best_first(hits) == expected(hits)
        rng.shuffle(hits)
        assert best_first(hits) == expected(hits)
