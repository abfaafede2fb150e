"""Recall ranks a fixed corpus exactly as it did when the index held a full copy of every line.

The expected answers in `fixtures/recall/ranking.json` were recorded from that earlier index (see the README there);
the index is derived data, so a fresh build, a rebuild after it was deleted or damaged, and a search while it is
only partly built must all agree with them where they say they do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anton_tui.memory.episode_index import INDEX_NAME
from anton_tui.memory.episodes import EpisodicMemory
from tests.recall_corpus import QUERIES, ranking, write_corpus

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
