"""Episodic memory: Anton's JSONL format, recall semantics, the derived search index, and concurrent use."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest

from anton_tui.memory.episodes.index import INDEX_NAME, LOCK_NAME
from anton_tui.memory.episodes.store import Episode, EpisodicMemory, format_episode_line

REPO = Path(__file__).resolve().parents[1]

# A session file exactly as Anton writes it.
SAMPLE = """\
{"ts": "2026-11-22T04:25:12.244081+00:00", "session": "20261122_042512", "turn": 1, "role": "user", "content": "Fetch bitcoin prices", "meta": {}}
{"ts": "2026-11-22T04:25:12.244732+00:00", "session": "20261122_042512", "turn": 1, "role": "tool_call", "content": "{'action': 'exec', 'name': 'main', 'code': 'print(1)'}", "meta": {"tool": "scratchpad", "datasources": []}}
{"ts": "2026-11-22T04:25:12.244846+00:00", "session": "20261122_042512", "turn": 1, "role": "scratchpad", "content": "1\\n", "meta": {"description": "print one"}}
{"ts": "2026-11-22T04:25:12.244909+00:00", "session": "20261122_042512", "turn": 1, "role": "tool_result", "content": "[output]\\n1", "meta": {"tool": "scratchpad"}}
{"ts": "2026-11-22T04:25:12.244969+00:00", "session": "20261122_042512", "turn": 1, "role": "assistant", "content": "Done: BTC is ...", "meta": {}}
{"ts": "2026-11-22T04:25:12.245026+00:00", "session": "20261122_042512", "turn": 0, "role": "memory_write", "content": "Use httpx", "meta": {"kind": "always", "topic": ""}}
{"ts": "2026-11-22T04:25:12.245089+00:00", "session": "20261122_042512", "turn": 2, "role": "user", "content": "thanks", "meta": {}}
{"ts": "2026-11-22T04:25:12.245147+00:00", "session": "20261122_042512", "turn": 2, "role": "assistant", "content": "You're welcome", "meta": {}}
"""


def write_session(directory: Path, session: str, turns: list[list[tuple[str, str]]], first_turn: int = 1) -> Path:
    """Write a session file the way Anton does: one line per (role, content), turns numbered from `first_turn`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{session}.jsonl"
    with open(path, "ab") as handle:
        for number, turn in enumerate(turns, start=first_turn):
            for role, content in turn:
                ts = datetime.now(timezone.utc).isoformat()
                handle.write(format_episode_line(Episode(ts, session, number, role, content, {})))
    return path


def session_id(days_ago: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days_ago)).strftime("%Y%m%d_%H%M%S")


def turn_keys(episodes: list[Episode]) -> list[tuple[str, int]]:
    """Distinct (session, turn) pairs in the order recall returned them."""
    return list(dict.fromkeys((ep.session, ep.turn) for ep in episodes))


@pytest.fixture
def episodes_dir(tmp_path: Path) -> Path:
    return tmp_path / ".anton" / "episodes"


# ---- format -------------------------------------------------------------------------------------------------


def test_sample_file_reads_into_the_exact_episodes(episodes_dir: Path) -> None:
    episodes_dir.mkdir(parents=True)
    (episodes_dir / "20261122_042512.jsonl").write_text(SAMPLE, encoding="utf-8")
    memory = EpisodicMemory(episodes_dir)

    episodes = memory.read_session("20261122_042512")

    assert [(e.turn, e.role) for e in episodes] == [
        (1, "user"),
        (1, "tool_call"),
        (1, "scratchpad"),
        (1, "tool_result"),
        (1, "assistant"),
        (0, "memory_write"),
        (2, "user"),
        (2, "assistant"),
    ]
    assert episodes[0] == Episode(
        "2026-11-22T04:25:12.244081+00:00", "20261122_042512", 1, "user", "Fetch bitcoin prices", {}
    )
    assert episodes[1].meta == {"tool": "scratchpad", "datasources": []}
    assert episodes[2].content == "1\n" and episodes[2].meta == {"description": "print one"}
    assert episodes[5].meta == {"kind": "always", "topic": ""}
    # Writing the episodes back gives Anton's bytes exactly.
    assert b"".join(format_episode_line(e) for e in episodes) == SAMPLE.encode("utf-8")
    assert memory.sessions() == ["20261122_042512"] and memory.session_count() == 1


def test_logged_lines_have_antons_shape(episodes_dir: Path) -> None:
    memory = EpisodicMemory(episodes_dir)
    session = memory.start_session()
    memory.log_turn(3, "tool_call", "{'code': 'print(\"₿ café\")'}", tool="scratchpad", datasources=["sales"])

    raw = (episodes_dir / f"{session}.jsonl").read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert "₿ café".encode() in raw  # ensure_ascii=False: text stays readable
    obj = json.loads(raw)
    assert list(obj) == ["ts", "session", "turn", "role", "content", "meta"]
    assert obj["session"] == session and obj["turn"] == 3
    assert obj["meta"] == {"tool": "scratchpad", "datasources": ["sales"]}
    assert obj["ts"].endswith("+00:00")
    assert raw == (json.dumps(msgspec.structs.asdict(Episode(**obj)), ensure_ascii=False) + "\n").encode()


def test_session_ids_are_utc_timestamps_and_never_reuse_a_file(episodes_dir: Path) -> None:
    memory = EpisodicMemory(episodes_dir)
    first = memory.start_session()
    datetime.strptime(first, "%Y%m%d_%H%M%S")
    memory.log_turn(1, "user", "hello")
    second = EpisodicMemory(episodes_dir).start_session()
    assert second != first
    assert memory.session_count() == 1  # the file appears only with its first line


# ---- recall semantics ---------------------------------------------------------------------------------------


def test_recall_finds_word_forms_and_text_inside_words(episodes_dir: Path) -> None:
    write_session(
        episodes_dir,
        "20260101_100000",
        [
            [("user", "What was the price yesterday?"), ("assistant", "It was 42 dollars.")],
            [("user", "Keep running the job"), ("assistant", "ok")],
            [("user", "Use the CoinGecko API"), ("assistant", "Fetched from CoinGecko.")],
            [("user", "Is 50% of a_b ok?"), ("assistant", "Yes, über-fine.")],
        ],
    )
    memory = EpisodicMemory(episodes_dir)

    assert turn_keys(memory.recall("prices")) == [("20260101_100000", 1)]  # "prices" is not in "price"
    assert turn_keys(memory.recall("runs")) == [("20260101_100000", 2)]
    assert turn_keys(memory.recall("gecko")) == [("20260101_100000", 3)]
    assert turn_keys(memory.recall("oinGE")) == [("20260101_100000", 3)]
    assert turn_keys(memory.recall("50%")) == [("20260101_100000", 4)]
    assert turn_keys(memory.recall("%")) == [("20260101_100000", 4)]  # not a wildcard
    assert turn_keys(memory.recall("_")) == [("20260101_100000", 4)]
    assert turn_keys(memory.recall("ÜBER")) == [("20260101_100000", 4)]
    assert turn_keys(memory.recall("ü")) == [("20260101_100000", 4)]
    # The whole turn comes back in order: the question, then the answer.
    assert [(e.role, e.content) for e in memory.recall("yesterday")] == [
        ("user", "What was the price yesterday?"),
        ("assistant", "It was 42 dollars."),
    ]


def test_recall_ranks_turns_with_more_and_rarer_matches_first(episodes_dir: Path) -> None:
    filler = [[("user", f"pandas question {n}"), ("assistant", "pandas answer")] for n in range(12)]
    write_session(
        episodes_dir,
        "20260101_090000",
        [
            [("user", "Plot the widgets"), ("assistant", "widgets plotted"), ("tool_result", "widgets: 3 widgets")],
            [("user", "one zebra sighting"), ("assistant", "noted")],
            *filler,
        ],
    )
    write_session(episodes_dir, "20260102_090000", [[("user", "and the widgets?"), ("assistant", "fine")]])
    memory = EpisodicMemory(episodes_dir)

    # More matching lines outrank recency...
    assert turn_keys(memory.recall("widgets"))[:2] == [("20260101_090000", 1), ("20260102_090000", 1)]
    # ...and a rare word outranks a common one when no line has both.
    assert turn_keys(memory.recall("pandas zebra"))[0] == ("20260101_090000", 2)


def test_equal_matches_come_newest_first(episodes_dir: Path) -> None:
    for session in ("20260101_000000", "20260301_000000", "20260201_000000"):
        write_session(episodes_dir, session, [[("user", "deploy the app"), ("assistant", "deployed")]])
    memory = EpisodicMemory(episodes_dir)
    newest_first = ["20260301_000000", "20260201_000000", "20260101_000000"]
    assert [s for s, _ in turn_keys(memory.recall("deploy"))] == newest_first


def test_days_back_uses_the_session_date(episodes_dir: Path) -> None:
    old, recent = session_id(40), session_id(2)
    write_session(episodes_dir, old, [[("user", "bitcoin then"), ("assistant", "ok")]])
    write_session(episodes_dir, recent, [[("user", "bitcoin now"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir)

    assert {s for s, _ in turn_keys(memory.recall("bitcoin", days_back=30))} == {recent}
    assert {s for s, _ in turn_keys(memory.recall("bitcoin"))} == {old, recent}
    assert memory.recall("bitcoin", days_back=1) == []


def test_max_results_counts_turns_and_never_overshoots(episodes_dir: Path) -> None:
    turns = [
        [("user", f"bitcoin question {n}"), ("assistant", f"bitcoin answer {n}"), ("tool_result", "x")]
        for n in range(30)
    ]
    write_session(episodes_dir, "20260101_000000", turns)
    memory = EpisodicMemory(episodes_dir)

    found = memory.recall("bitcoin", max_results=7)
    assert len(turn_keys(found)) == 7 and len(found) == 21  # whole turns, all three lines each
    assert len(turn_keys(memory.recall("bitcoin"))) == 20
    # A hit on a question does not drag in the following exchange.
    assert turn_keys(memory.recall("question 4")) == [("20260101_000000", 5)]


def test_memory_lines_are_never_recalled(episodes_dir: Path) -> None:
    episodes_dir.mkdir(parents=True)
    (episodes_dir / "20261122_042512.jsonl").write_text(SAMPLE, encoding="utf-8")
    memory = EpisodicMemory(episodes_dir)

    assert memory.recall("httpx") == []
    assert [e.role for e in memory.recall("bitcoin")] == ["user", "tool_call", "scratchpad", "tool_result", "assistant"]
    assert memory.recall_formatted("httpx") == "No episodes found matching 'httpx'."


def test_recall_formatted_truncates_like_anton(episodes_dir: Path) -> None:
    turn = [("user", "kiwi " + "u" * 900), ("assistant", "kiwi " + "a" * 3000)]
    write_session(episodes_dir, "20260101_000000", [turn])
    memory = EpisodicMemory(episodes_dir)
    user_line, assistant_line = memory.recall_formatted("kiwi").split("\n")
    ts_user, ts_assistant = (e.ts for e in memory.read_session("20260101_000000"))
    assert user_line == f"[{ts_user}] (user) kiwi " + "u" * 495
    assert assistant_line == f"[{ts_assistant}] (assistant) kiwi " + "a" * 1995


# ---- damaged files ------------------------------------------------------------------------------------------


def test_garbage_and_truncated_lines_are_skipped_and_kept(episodes_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_session(episodes_dir, "20260101_000000", [[("user", "first lemon"), ("assistant", "ok")]])
    good = path.read_bytes()
    extra = json.dumps({**json.loads(good.splitlines()[0]), "content": "lemon extra", "mood": "odd"}).encode()
    path.write_bytes(good + b"this is not json lemon\n" + extra + b"\n")
    write_session(episodes_dir, "20260101_000000", [[("user", "second lemon"), ("assistant", "ok")]], first_turn=2)
    damaged = path.read_bytes() + b'{"ts": "2026-01-01T00:00:00+00:00", "session": "2026010'
    path.write_bytes(damaged)
    memory = EpisodicMemory(episodes_dir)

    with caplog.at_level(logging.WARNING):
        found = memory.recall("lemon")
        read = memory.read_session("20260101_000000")

    assert [e.content for e in found] == ["second lemon", "ok", "first lemon", "ok"]
    assert [e.content for e in read] == ["first lemon", "ok", "second lemon", "ok"]
    warnings = caplog.text
    assert "line 3" in warnings and "not valid JSON" in warnings
    assert "line 4" in warnings and "unexpected keys ['mood']" in warnings
    assert "line 7" in warnings and "truncated last line" in warnings
    assert path.read_bytes() == damaged

    memory.start_session("20260101_000000")
    memory.log_turn(3, "user", "third lemon")  # the torn line stays on its own line
    assert path.read_bytes().startswith(damaged + b"\n{")
    assert [e.content for e in memory.recall("third")] == ["third lemon"]


def test_a_line_damaged_behind_the_index_drops_out_of_its_turn_alone(episodes_dir: Path) -> None:
    """A recalled turn's lines are read back from the file at once; if one of them no longer parses (the file was
    changed in place with its size and time kept, so the index did not notice), only that line is left out."""
    turn = [("user", "plum tart"), ("assistant", "baking"), ("tool_result", "oven at 180"), ("assistant", "done")]
    path = write_session(episodes_dir, "20260101_000000", [turn])
    memory = EpisodicMemory(episodes_dir)
    assert [e.content for e in memory.recall("plum")] == [content for _role, content in turn]

    data = path.read_bytes()
    at = data.index(b'"role": "tool_result"')
    st = path.stat()
    path.write_bytes(data[:at] + b'"role": "tool_resul\x01' + data[at + 21 :])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    assert [e.content for e in memory.recall("plum")] == ["plum tart", "baking", "done"]
    memory.close()


# ---- the search index ---------------------------------------------------------------------------------------


def test_index_follows_lines_appended_by_another_process(episodes_dir: Path) -> None:
    path = write_session(episodes_dir, "20260101_000000", [[("user", "alpha"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir)
    assert memory.recall("alpha") and memory.index.last_refresh.rebuilt

    line = format_episode_line(Episode("2026-01-01T00:00:01+00:00", "20260101_000000", 2, "user", "wombat sighting"))
    code = f"open({str(path)!r}, 'ab').write({(line * 3)!r})"
    subprocess.run([sys.executable, "-c", code], check=True)

    assert [e.content for e in memory.recall("wombat")] == ["wombat sighting"] * 3
    stats = memory.index.last_refresh
    assert (stats.rebuilt, stats.lines_added, stats.files_reindexed) == (False, 3, [])
    assert memory.recall("alpha")  # earlier lines still there


def test_index_notices_files_rewritten_in_place_and_removed(episodes_dir: Path) -> None:
    path = write_session(episodes_dir, "20260101_000000", [[("user", "zebra crossing"), ("assistant", "ok")]])
    other = write_session(episodes_dir, "20260102_000000", [[("user", "zebra stripes"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir)
    assert len(turn_keys(memory.recall("zebra"))) == 2

    before = path.stat()
    with open(path, "r+b") as handle:  # same inode, same size, different words
        data = handle.read().replace(b"zebra", b"koala")
        handle.seek(0)
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    other.unlink()

    assert memory.recall("zebra") == []
    assert [e.content for e in memory.recall("koala")] == ["koala crossing", "ok"]
    assert memory.index.last_refresh.files_reindexed == ["20260101_000000"]


def test_index_notices_a_newest_file_replaced_under_its_name(episodes_dir: Path) -> None:
    """The newest files are looked at through descriptors kept open; one replaced by another file of the same name
    (written aside, then renamed over it) is read as the new file, and lines appended to the new one are found."""
    path = write_session(episodes_dir, "20260101_000000", [[("user", "heron nest"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir)
    assert [e.content for e in memory.recall("heron")] == ["heron nest", "ok"]
    assert memory.recall("heron")  # (the newest files are open now)

    aside = episodes_dir / "rewrite.tmp"
    aside.write_bytes(path.read_bytes().replace(b"heron", b"egret"))
    os.replace(aside, path)
    assert memory.recall("heron") == []
    assert [e.content for e in memory.recall("egret")] == ["egret nest", "ok"]

    write_session(episodes_dir, "20260101_000000", [[("user", "egret chicks")]], first_turn=2)
    assert [e.content for e in memory.recall("chicks")] == ["egret chicks"]
    memory.close()


def test_recall_keeps_no_descriptor_once_closed(episodes_dir: Path) -> None:
    """The newest files stay open between recalls (and the builder's between steps); closing lets every one go."""
    open_before = len(os.listdir("/proc/self/fd"))
    for day in range(1, 10):
        write_session(episodes_dir, f"202601{day:02d}_000000", [[("user", f"gannet {day}"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir)
    for round_ in range(3):
        assert memory.recall("gannet")
        write_session(episodes_dir, "20260109_000000", [[("user", f"gannet again {round_}")]], first_turn=round_ + 2)
        memory.index.refresh()
    assert len(os.listdir("/proc/self/fd")) > open_before
    memory.close()
    assert len(os.listdir("/proc/self/fd")) == open_before


@pytest.mark.parametrize("damage", ["delete", "garbage", "truncate", "old-schema"])
def test_index_is_rebuilt_when_missing_damaged_or_outdated(
    episodes_dir: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    turns = [[("user", f"otter {n} " * 40), ("assistant", "ok")] for n in range(50)]
    write_session(episodes_dir, "20260101_000000", turns)
    EpisodicMemory(episodes_dir).recall("otter")
    index = episodes_dir / INDEX_NAME
    if damage == "delete":
        index.unlink()
    elif damage == "garbage":
        index.write_bytes(b"definitely not sqlite " * 500)
    elif damage == "truncate":
        index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])
    else:
        with sqlite3.connect(index) as conn:
            conn.execute("PRAGMA user_version=99")

    memory = EpisodicMemory(episodes_dir)
    with caplog.at_level(logging.WARNING):
        assert len(turn_keys(memory.recall("otter 7 "))) == 1
    assert memory.index.last_refresh.rebuilt
    assert ("damaged" in caplog.text) == (damage in ("garbage", "truncate"))
    assert memory.index.refresh().lines_added == 0  # up to date again
    with sqlite3.connect(index) as conn:
        assert conn.execute("SELECT count(*) FROM lines").fetchone() == (100,)


def test_locked_index_falls_back_to_scanning_the_files(episodes_dir: Path) -> None:
    path = write_session(episodes_dir, "20260101_000000", [[("user", "walrus one"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir)
    memory.recall("walrus")
    write_session(episodes_dir, "20260101_000000", [[("user", "walrus two"), ("assistant", "ok")]], first_turn=2)

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import fcntl, sys
            lock = open({str(episodes_dir / LOCK_NAME)!r}, "a")
            fcntl.flock(lock, fcntl.LOCK_EX)
            print("locked", flush=True)
            sys.stdin.readline()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert [e.content for e in memory.recall("walrus")] == ["walrus two", "ok", "walrus one", "ok"]
    finally:
        holder.communicate("\n", timeout=10)
    assert path.exists()
    assert memory.index.refresh().lines_added == 2  # the index itself was left for later


# ---- changes --------------------------------------------------------------------------------------------------


def test_delete_turn_rewrites_the_file_and_keeps_everything_else(episodes_dir: Path) -> None:
    path = write_session(
        episodes_dir,
        "20260101_000000",
        [
            [("user", "keep me"), ("assistant", "kept")],
            [("user", "forget me"), ("assistant", "forgotten")],
        ],
    )
    path.write_bytes(path.read_bytes() + b"garbage line\n")
    os.chmod(path, 0o600)
    memory = EpisodicMemory(episodes_dir)
    assert memory.recall("forget")

    assert memory.delete_turn("20260101_000000", 2) == 2
    assert memory.delete_turn("20260101_000000", 9) == 0
    assert [e.content for e in memory.read_session("20260101_000000")] == ["keep me", "kept"]
    assert path.read_bytes().endswith(b"garbage line\n")
    assert path.stat().st_mode & 0o777 == 0o600
    assert memory.recall("forget") == []
    assert memory.recall("keep")
    assert not [p for p in episodes_dir.iterdir() if p.name.endswith(".tmp")]


def test_disabled_memory_writes_nothing_and_recalls_nothing(episodes_dir: Path) -> None:
    write_session(episodes_dir, "20260101_000000", [[("user", "secret plan"), ("assistant", "ok")]])
    memory = EpisodicMemory(episodes_dir, enabled=False)
    memory.start_session("20260202_000000")
    memory.log_turn(1, "user", "secret plan two")

    assert not (episodes_dir / "20260202_000000.jsonl").exists()
    assert memory.recall("secret") == []
    assert memory.recall_formatted("secret") == "No episodes found matching 'secret'."
    assert not (episodes_dir / INDEX_NAME).exists()


def test_log_never_raises_and_reports_the_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "episodes"
    blocker.write_text("a file where the folder should be")
    memory = EpisodicMemory(blocker)
    memory.start_session()
    memory.log_turn(1, "user", "hello")
    memory.log(Episode("2026-01-01T00:00:00+00:00", "../escape", 1, "user", "x"))
    assert memory.error_count == 2 and memory.last_error
    assert memory.recall("hello") == []


def test_concurrent_loggers_in_several_processes_lose_no_line(episodes_dir: Path) -> None:
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from anton_tui.memory.episodes.store import EpisodicMemory
        memory = EpisodicMemory({str(episodes_dir)!r})
        memory.start_session("20260101_000000")
        worker = sys.argv[1]
        for n in range(150):
            memory.log_turn(n + 1, "assistant", f"worker {{worker}} line {{n}} " + "x" * (n * 37 % 3000))
            if n % 50 == 0:
                memory.recall("worker")
        assert memory.error_count == 0, memory.last_error
    """)
    workers = [subprocess.Popen([sys.executable, "-c", code, str(w)]) for w in range(4)]
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0, 0]

    memory = EpisodicMemory(episodes_dir)
    lines = (episodes_dir / "20260101_000000.jsonl").read_bytes().splitlines()
    assert len(lines) == 600
    episodes = memory.read_session("20260101_000000")
    assert sorted(e.content.split(" x")[0].split("x")[0].strip() for e in episodes) == sorted(
        f"worker {w} line {n}" for w in range(4) for n in range(150)
    )
    found = memory.recall("worker 3 line 14 ", max_results=50)
    assert turn_keys(found) == [("20260101_000000", 15)]
    assert len(found) == 4 and sum("worker 3 line 14 " in e.content for e in found) == 1


def test_delete_turn_while_other_processes_log_loses_none_of_their_lines(episodes_dir: Path) -> None:
    victims = [[("user", f"victim {n}"), ("assistant", "doomed")] for n in range(40)]
    write_session(episodes_dir, "20260101_000000", victims, first_turn=9001)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from anton_tui.memory.episodes.store import EpisodicMemory
        memory = EpisodicMemory({str(episodes_dir)!r})
        memory.start_session("20260101_000000")
        worker = int(sys.argv[1])
        print("ready", flush=True)
        for n in range(200):
            memory.log_turn(worker * 1000 + n, "user", f"survivor {{worker}} {{n}}")
    """)
    workers = [
        subprocess.Popen([sys.executable, "-c", code, str(w)], stdout=subprocess.PIPE, text=True) for w in range(3)
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready"
    memory = EpisodicMemory(episodes_dir)
    removed = sum(memory.delete_turn("20260101_000000", 9001 + n) for n in range(40))
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0]

    contents = [e.content for e in memory.read_session("20260101_000000")]
    assert removed == 80
    assert sorted(contents) == sorted(f"survivor {w} {n}" for w in range(3) for n in range(200))
