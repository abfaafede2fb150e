"""The recall index is small, derived and disposable: built newest first in steps, searchable while it is built,
rebuilt when damaged or half written, and never a copy of the episode text."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from anton_tui.memory.episodes import build as episode_build

from anton_tui.memory.episodes import index as episode_index
from anton_tui.memory.episodes import recall_query as episode_query
from anton_tui.memory.episodes.index import INDEX_NAME, RecallIndex
from anton_tui.memory.episodes.store import EpisodicMemory
from tests.recall_corpus import QUERIES, SESSIONS, ranking, write_corpus
from tests.test_episodes import write_session

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "recall" / "ranking.json").read_text(encoding="utf-8"))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "episodes"
    write_corpus(folder)
    return folder


def matches(memory: EpisodicMemory, query: str, **kwargs: object) -> set[tuple[str, int]]:
    return {tuple(key) for key in ranking(memory.recall(query, **kwargs))}


def test_a_big_build_in_many_steps_ranks_as_before(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_build, "BULK_WORK", 0)  # the corpus counts as a big build: one word list at the end
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)  # one file per step
    memory = EpisodicMemory(corpus)
    stats = memory.index.refresh()
    assert stats.rebuilt and stats.steps == len(SESSIONS) + 1
    for query in QUERIES:
        assert ranking(memory.recall(query)) == EXPECTED[query]["20"], query
    memory.close()


def test_the_newest_sessions_are_indexed_first(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)
    index = RecallIndex(corpus)
    index.refresh(max_steps=2)
    with sqlite3.connect(corpus / INDEX_NAME) as conn:
        indexed = [name for (name,) in conn.execute("SELECT name FROM files WHERE indexed_bytes > 0")]
    assert sorted(indexed) == SESSIONS[-2:]
    index.close()


def exact_turns(folder: Path, query: str) -> set[tuple[str, int]]:
    """Turns with a line holding `query` in any case, found by reading the files (what Anton's recall finds)."""
    found = set()
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            episode = json.loads(line)
            if episode["role"] not in ("memory_read", "memory_write") and query.lower() in episode["content"].lower():
                found.add((episode["session"], episode["turn"]))
    return found


@pytest.mark.parametrize("query", ["zebra", "rate limit", "gecko", "dashboard export", "%", "über", "the"])
def test_recall_while_half_built_finds_the_right_lines(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)
    monkeypatch.setattr(episode_index, "SMALL_WORK", 0)  # what is left counts as a lot: answer without waiting
    monkeypatch.setattr(RecallIndex, "build_in_background", lambda self: False)  # and stay half built
    complete = EpisodicMemory(corpus)
    complete.index.refresh()
    everything = matches(complete, query, max_results=1000)
    complete.close()
    (corpus / INDEX_NAME).unlink()

    memory = EpisodicMemory(corpus)
    memory.index.refresh(max_steps=3)
    found = matches(memory, query, max_results=1000)
    assert exact_turns(corpus, query) <= found <= everything
    if " " not in query:  # the files not indexed yet are searched for the exact text, not for scattered words
        assert found == everything
    first = ranking(memory.recall(query))
    assert len(first) == min(20, len(found))
    assert {tuple(key) for key in first} <= everything
    memory.close()


def test_recall_during_a_background_build_never_waits_for_it(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)
    monkeypatch.setattr(episode_index, "SMALL_WORK", 0)
    complete = EpisodicMemory(corpus)
    complete.index.refresh()
    expected = matches(complete, "zebra", max_results=1000)
    complete.close()
    (corpus / INDEX_NAME).unlink()

    memory = EpisodicMemory(corpus)
    answers = []
    assert memory.index.build_in_background()
    while memory.index.building:
        answers.append(matches(memory, "zebra", max_results=1000))
    answers.append(matches(memory, "zebra", max_results=1000))
    assert all(answer == expected for answer in answers)
    assert ranking(memory.recall("zebra")) == EXPECTED["zebra"]["20"]
    memory.close()


def test_the_index_holds_no_copy_of_the_text_and_is_smaller_than_the_files(corpus: Path) -> None:
    write_session(corpus, "20250701_000000", [[("user", "the quartz xylophone sings"), ("assistant", "ok")]] * 50)
    memory = EpisodicMemory(corpus)
    assert ranking(memory.recall("quartz xylophone"))
    memory.close()
    data = (corpus / INDEX_NAME).read_bytes()
    assert b"quartz xylophone" not in data and b"xylophone sings" not in data
    jsonl = sum(path.stat().st_size for path in corpus.glob("*.jsonl"))
    assert len(data) < jsonl


def test_a_half_written_index_is_built_afresh(corpus: Path) -> None:
    memory = EpisodicMemory(corpus)
    memory.recall("zebra")
    memory.close()
    with sqlite3.connect(corpus / INDEX_NAME) as conn:
        conn.execute("PRAGMA user_version=0")  # what a step leaves behind when its process dies half way

    memory = EpisodicMemory(corpus)
    assert ranking(memory.recall("zebra")) == EXPECTED["zebra"]["20"]
    assert memory.index.last_refresh.rebuilt
    memory.close()


def test_many_removed_lines_make_a_fresh_index_with_fresh_statistics(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(episode_build, "DEAD_LIMIT", 0)
    monkeypatch.setattr(episode_build, "DEAD_SHARE", 0)
    memory = EpisodicMemory(corpus)
    memory.recall("zebra")
    extra = write_session(corpus, "20250701_000000", [[("user", "zebra zebra"), ("assistant", "ok")]] * 30)
    memory.recall("zebra")
    extra.unlink()

    assert ranking(memory.recall("zebra")) == EXPECTED["zebra"]["20"]
    assert memory.index.last_refresh.rebuilt
    with sqlite3.connect(corpus / INDEX_NAME) as conn:
        assert conn.execute("SELECT count(*) FROM dead").fetchone() == (0,)
    memory.close()


def test_a_long_turn_comes_back_whole_and_ranks_by_all_its_lines(tmp_path: Path) -> None:
    folder, session = tmp_path / "episodes", "20250101_000000"
    turn = [("user", "start the long job")] + [("tool_result", f"step {n} done") for n in range(150)]
    write_session(folder, session, [turn, [("user", "start the short job"), ("assistant", "ok")]])
    memory = EpisodicMemory(folder)
    assert [e.content for e in memory.recall("step 140 done", max_results=1)] == [text for _role, text in turn]
    assert ranking(memory.recall("job")) == [[session, 2], [session, 1]]  # one line each: the newer turn first

    more = [("assistant", "the long job is finished"), ("assistant", "job done"), ("assistant", "job report")]
    write_session(folder, session, [more])  # turn 1 again, appended later: its document takes in the new lines
    assert ranking(memory.recall("job finished report"))[0] == [session, 1]
    whole = [text for _role, text in turn + more]
    assert [e.content for e in memory.recall("finished", max_results=1)] == whole
    memory.close()


def test_a_turn_read_back_at_once_leaves_out_bad_lines_memory_lines_and_other_turns(tmp_path: Path) -> None:
    """A turn is read back in one piece from where its lines are; what lies between its lines and is not one of
    them (a line Anton's reader drops, a memory line, another turn's line) is not part of the answer."""
    folder, session = tmp_path / "episodes", "20250101_000000"
    write_session(folder, session, [[("user", "plot the otter census"), ("tool_call", "run plot")]])
    path = folder / f"{session}.jsonl"
    with open(path, "ab") as handle:
        handle.write(b'{"ts": "x", "session": "20250101_000000", "turn": 1, "role": "user"}\n')  # no content
        handle.write(b'{"ts": "x", "session": "20250101_000000", "turn": 0, "role": "memory_write", '
                     b'"content": "otter facts", "meta": {}}\n')  # fmt: skip
    write_session(folder, session, [[("user", "unrelated question")]], first_turn=2)
    write_session(folder, session, [[("assistant", "the otter census chart is ready")]])
    before = path.read_bytes()
    memory = EpisodicMemory(folder)
    memory.index.refresh()
    recalled = memory.recall("otter census")
    assert [(e.turn, e.content) for e in recalled] == [
        (1, "plot the otter census"), (1, "run plot"), (1, "the otter census chart is ready"),
    ]  # fmt: skip
    assert path.read_bytes() == before
    memory.close()


def test_turns_too_long_to_read_at_once_come_back_the_same_line_by_line(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = EpisodicMemory(corpus)
    memory.index.refresh()
    at_once = {query: memory.recall(query) for query in QUERIES}
    memory.close()
    monkeypatch.setattr(episode_query, "SPAN_READ", 1)  # every turn is read through its lines' offsets
    again = EpisodicMemory(corpus)
    assert {query: again.recall(query) for query in QUERIES} == at_once
    again.close()


def test_the_record_module_breaks_the_import_circle() -> None:
    code = (
        "import sys; import anton_tui.memory.episodes.index as i; "
        "print('anton_tui.memory.episodes.store' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_closing_stops_a_background_build(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)
    started = threading.Event()
    real_step = episode_build.IndexBuilder.step

    def noted_step(self: episode_build.IndexBuilder, stats: object) -> bool:
        started.set()
        return real_step(self, stats)

    monkeypatch.setattr(episode_build.IndexBuilder, "step", noted_step)
    memory = EpisodicMemory(corpus)
    memory.index.build_in_background()
    assert started.wait(5)
    memory.close()
    assert not memory.index.building
    fresh = EpisodicMemory(corpus)
    assert ranking(fresh.recall("zebra")) == EXPECTED["zebra"]["20"]
    fresh.close()


def test_closing_stops_a_refresh_running_in_another_thread(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the app's warm-up runs at start; quitting closes the memory and must not wait for the whole build."""
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)
    steps = []
    real_step = episode_build.IndexBuilder.step

    def slow_step(self: episode_build.IndexBuilder, stats: object) -> bool:
        steps.append(1)
        threading.Event().wait(0.5)
        return real_step(self, stats)

    monkeypatch.setattr(episode_build.IndexBuilder, "step", slow_step)
    memory = EpisodicMemory(corpus)
    worker = threading.Thread(target=memory.index.refresh)
    worker.start()
    while not steps:
        threading.Event().wait(0.01)
    memory.close()
    worker.join(timeout=3)
    assert not worker.is_alive()
    assert len(steps) < len(SESSIONS)  # it stopped before the end


def test_a_big_build_leaves_no_free_pages_behind(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_build, "BULK_WORK", 0)
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)  # many small segments, merged into one at the end
    for day in range(1, 25):
        turns = [[("user", f"question {n} on day {day} about {n * day % 97} things"), ("assistant", f"answer {n}")]
                 for n in range(150)]  # fmt: skip
        write_session(corpus, f"202508{day:02d}_000000", turns)
    memory = EpisodicMemory(corpus)
    memory.index.refresh()
    memory.close()
    with sqlite3.connect(corpus / INDEX_NAME) as conn:
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)


def test_a_background_build_waits_while_a_recall_runs_and_goes_on_after(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build shares the process's one CPU for Python with the recall: it steps aside between files."""
    monkeypatch.setattr(episode_build, "STEP_SECONDS", 0)
    monkeypatch.setattr(episode_index, "PAUSE_LIMIT", 60)
    files_read: list[str] = []
    index_file = episode_build.IndexBuilder._index_file

    def spy(
        self: episode_build.IndexBuilder, conn: object, writer: object, turns: object, name: str, *rest: object
    ) -> int:
        files_read.append(name)
        return index_file(self, conn, writer, turns, name, *rest)

    monkeypatch.setattr(episode_build.IndexBuilder, "_index_file", spy)
    memory = EpisodicMemory(corpus)
    index = memory.index
    with index.searching():  # a recall is under way (on this thread)
        assert index.build_in_background()
        time.sleep(0.5)
        assert index.building and files_read == []
    index._builder.join(timeout=30)
    assert not index.building and sorted(files_read) == sorted(SESSIONS)
    assert ranking(memory.recall("zebra")) == EXPECTED["zebra"]["20"]
    memory.close()


def test_a_recall_that_indexes_a_little_first_does_not_wait_for_itself(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(episode_index, "PAUSE_LIMIT", 60)
    memory = EpisodicMemory(corpus)
    answers: list[list[object]] = []
    worker = threading.Thread(target=lambda: answers.append(ranking(memory.recall("zebra"))))
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive() and answers == [EXPECTED["zebra"]["20"]]
    memory.close()


def test_a_recall_never_waits_for_a_build_that_started_just_before_it_would_index(corpus: Path) -> None:
    """A recall that finds a little left to index and then finds this process busy building answers at once from
    what is indexed plus a scan of the rest, instead of waiting for the whole build."""
    memory = EpisodicMemory(corpus)
    index = memory.index
    index._write_guard.acquire()  # a build of this process holds the index (as one just started would)
    try:
        answers: list[set[tuple[str, int]]] = []
        worker = threading.Thread(target=lambda: answers.append(matches(memory, "zebra", max_results=1000)))
        worker.start()
        worker.join(timeout=20)
        assert not worker.is_alive() and answers == [exact_turns(corpus, "zebra")]
    finally:
        index._write_guard.release()
    memory.close()


def test_a_new_process_starts_from_the_index_list_of_files_and_still_sees_what_changed(corpus: Path) -> None:
    """A new process takes the index's list of files for the folder while the folder's mtime is the one the index
    noted (nothing added, removed or replaced since); appends to the newest sessions and new files are still seen."""
    memory = EpisodicMemory(corpus)
    memory.index.refresh()
    memory.close()

    fresh = EpisodicMemory(corpus)
    assert ranking(fresh.recall("zebra")) == EXPECTED["zebra"]["20"]
    assert fresh.index._folder.fresh is False  # seeded: no look at every file
    fresh.close()

    write_session(corpus, SESSIONS[-1], [[("user", "the quokka hops"), ("assistant", "ok")]], first_turn=500)
    appended = EpisodicMemory(corpus)
    assert ranking(appended.recall("quokka")) == [[SESSIONS[-1], 500]]
    appended.close()

    write_session(corpus, "20251231_000000", [[("user", "a wombat digs"), ("assistant", "ok")]])
    added = EpisodicMemory(corpus)
    assert ranking(added.recall("wombat")) == [["20251231_000000", 1]]
    added.close()


def test_a_word_in_most_turns_brings_the_newest_turns_whole_from_an_index_made_before_their_spans_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word most turns hold ranks nothing apart: the newest turns holding it come back, each read at once through
    its span from the turns table. An index made before that table had its index by key answers the same through
    the lines' offsets, and gets the index at its next refresh."""
    folder = tmp_path / "episodes"
    for day in range(3):
        write_session(folder, f"2026010{day + 1}_090000", [
            [("user", f"weekly report {day}-{n}"), ("assistant", f"the report for week {n} is done"),
             ("user", "thanks")]
            for n in range(12)
        ])  # fmt: skip
    looked_up: list[int] = []
    real_turn_lines = episode_query.turn_lines

    def noted_turn_lines(conn: object, reader: object, keys: list[int], spill: object = None) -> object:
        looked_up.extend(keys)
        return real_turn_lines(conn, reader, keys, spill)

    monkeypatch.setattr(episode_query, "turn_lines", noted_turn_lines)
    memory = EpisodicMemory(folder)
    memory.index.refresh()
    found = memory.recall("report", max_results=5)
    memory.close()
    assert looked_up == [], "each turn was read at once through its span"
    newest = [[("user", f"weekly report 2-{n}"), ("assistant", f"the report for week {n} is done"), ("user", "thanks")]
              for n in (11, 10, 9, 8, 7)]  # fmt: skip
    assert by_turn(found) == newest

    with sqlite3.connect(folder / INDEX_NAME) as conn:
        conn.execute("DROP INDEX turns_first")
    older = EpisodicMemory(folder)
    assert by_turn(older.recall("report", max_results=5)) == newest
    assert len(looked_up) == 5, "without the index by key, the turns' lines are looked up"
    older.index.refresh()
    assert by_turn(older.recall("report", max_results=5)) == newest
    older.close()
    with sqlite3.connect(folder / INDEX_NAME) as conn:
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'turns_first'").fetchone() is not None


def by_turn(episodes: list) -> list[list[tuple[str, str]]]:
    turns: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for episode in episodes:
        turns.setdefault((episode.session, episode.turn), []).append((episode.role, episode.content))
    return list(turns.values())


def test_a_big_build_hands_back_the_memory_its_buffers_held_and_a_small_catch_up_does_not_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After indexing thousands of lines on a thread of its own, the C library would keep what the build freed with
    that thread's heap (some 8 MB for the app at 100,000 lines); a refresh of a few new lines has nothing to give."""
    from anton_tui import gc_policy

    given: list[int] = []
    monkeypatch.setattr(gc_policy, "give_back_free_memory", lambda: given.append(1) or True)
    folder = tmp_path / "episodes"
    write_session(folder, "20250101_090000", [[("user", f"step {n}"), ("assistant", "ok")] for n in range(5_200)])
    memory = EpisodicMemory(folder)
    try:
        memory.index.refresh()
        assert given == [1], "10,400 lines indexed: the memory is handed back"
        write_session(folder, "20250101_090000", [[("user", "one more"), ("assistant", "ok")]], first_turn=5_201)
        memory.index.refresh()
        assert given == [1], "two new lines: no call"
        assert len(memory.recall("one more")) == 2
    finally:
        memory.close()
