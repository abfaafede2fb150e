"""Saved conversations: written after every turn in Anton's exact format, listed, resumed, rewound and deleted."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from anton_tui.agent import events as ev
from anton_tui.agent.history_store import HistoryBroken, HistoryStore
from anton_tui.agent.summarise import summary_message
from tests.fakellm import Reply, ToolCallSpec
from tests.session_helpers import PLANNER, make_session, of_type, quiet_coder, run_turn

ANTON_EPISODES = """\
{"ts": "2026-11-22T04:25:12.244081+00:00", "session": "20261122_042512", "turn": 1, "role": "user", "content": "Fetch bitcoin prices", "meta": {}}
{"ts": "2026-11-22T04:25:12.244732+00:00", "session": "20261122_042512", "turn": 1, "role": "tool_call", "content": "{'action': 'exec', 'name': 'main', 'code': 'print(1)'}", "meta": {"tool": "scratchpad", "datasources": []}}
{"ts": "2026-11-22T04:25:12.244846+00:00", "session": "20261122_042512", "turn": 1, "role": "scratchpad", "content": "1\\n", "meta": {"description": "print one"}}
{"ts": "2026-11-22T04:25:12.244909+00:00", "session": "20261122_042512", "turn": 1, "role": "tool_result", "content": "[output]\\n1", "meta": {"tool": "scratchpad"}}
{"ts": "2026-11-22T04:25:12.244969+00:00", "session": "20261122_042512", "turn": 1, "role": "assistant", "content": "Done: BTC is ...", "meta": {}}
{"ts": "2026-11-22T04:25:12.245026+00:00", "session": "20261122_042512", "turn": 0, "role": "memory_write", "content": "Use httpx", "meta": {"kind": "always", "topic": ""}}
{"ts": "2026-11-22T04:25:12.245089+00:00", "session": "20261122_042512", "turn": 2, "role": "user", "content": "thanks", "meta": {}}
{"ts": "2026-11-22T04:25:12.245147+00:00", "session": "20261122_042512", "turn": 2, "role": "assistant", "content": "You're welcome", "meta": {}}
"""


@pytest.fixture
def episodes(project_dir: Path) -> Path:
    return project_dir / ".anton" / "episodes"


def saving_session(fake_llm, **overrides):
    quiet_coder(fake_llm)
    overrides.setdefault("episodic_memory", True)
    return make_session(fake_llm, **overrides)


def history_file(episodes: Path, session_id: str) -> Path:
    return episodes / f"{session_id}_history.json"


async def test_every_turn_saves_the_conversation_in_antons_exact_format(fake_llm, episodes):
    fake_llm.queue(Reply.text("Canberra — not Sydney."), Reply.text("About 470,000."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "Capital of Australia?")
    session_id = session.session_id
    path = history_file(episodes, session_id)
    assert path.read_bytes() == json.dumps(session.history, ensure_ascii=False).encode()
    assert (episodes / f"{session_id}.jsonl").exists()  # the same id as the episode log

    await run_turn(session, "Population?")
    raw = path.read_bytes()
    assert raw.startswith(b'[{"role": "user", "content": "Capital of Australia?"}, {"role": "assistant"')
    assert "Canberra — not Sydney.".encode() in raw and not raw.endswith(b"\n")  # UTF-8 as is, one line
    assert len(json.loads(raw)) == 4
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in os.listdir(episodes) if p.endswith(".tmp")]


async def test_tool_results_carry_is_error_only_when_they_failed(fake_llm, episodes):
    fake_llm.queue(
        Reply(calls=[ToolCallSpec("recall", {"query": "bitcoin"}), ToolCallSpec("unknown_tool", {})]),
        Reply.text("Done."),
        model=PLANNER,
    )
    session = saving_session(fake_llm)
    events = await run_turn(session, "try things")
    assert [e.success for e in of_type(events, ev.ToolCallFinished)] == [True, False]
    saved = json.loads(history_file(episodes, session.session_id).read_text())
    results = [b for m in saved if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_result"]
    assert sorted(results[0]) == ["content", "tool_use_id", "type"]  # as Anton writes a result that worked
    assert results[1]["is_error"] is True


async def test_nothing_is_saved_when_episodic_memory_is_off(fake_llm, episodes):
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    session = saving_session(fake_llm, episodic_memory=False)
    await run_turn(session, "hello")
    assert session.session_id is None
    assert not episodes.exists() or not list(episodes.glob("*_history.json"))


async def test_a_broken_history_file_is_reported_once_and_left_byte_identical(fake_llm, episodes):
    fake_llm.queue(Reply.text("One."), Reply.text("Two."), Reply.text("Three."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "first")
    path = history_file(episodes, session.session_id)
    path.write_bytes(b'[{"role": "user", "content": "edited by hand, then the editor crashed')
    before = path.read_bytes()

    second = await run_turn(session, "second")
    third = await run_turn(session, "third")

    assert path.read_bytes() == before
    warnings = of_type(second, ev.HistoryNotSaved)
    assert len(warnings) == 1 and "not valid JSON" in warnings[0].reason and warnings[0].path == str(path)
    assert not of_type(third, ev.HistoryNotSaved)  # said once
    listed = {row.session_id: row for row in HistoryStore(episodes).list_sessions()}
    assert listed[session.session_id].source == "broken"
    with pytest.raises(HistoryBroken, match="not valid JSON"):
        HistoryStore(episodes).load(session.session_id)


async def test_the_listing_is_newest_first_with_what_the_picker_shows(fake_llm, episodes):
    store = HistoryStore(episodes)
    store.save("20261120_090000", [{"role": "user", "content": "[2026-11-20 09:00] older question"},
                                   {"role": "assistant", "content": "answer"}])
    store.save("20261124_100000", [summary_message("## Goal\n- x"),
                                   {"role": "assistant", "content": "Understood — using that as reference."},
                                   {"role": "user", "content": "newer question " + "z" * 300},
                                   {"role": "assistant", "content": "ok"}])
    store.save("20261123_100000", [])  # no user turn: not listed, as in Anton
    (episodes / "20261122_042512.jsonl").write_text(ANTON_EPISODES)  # no history file: rebuilt when resumed
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "the current one")

    rows = store.list_sessions()
    assert [r.session_id for r in rows] == [session.session_id, "20261124_100000", "20261122_042512",
                                            "20261120_090000"]
    current, summarised, rebuilt, older = rows
    assert (current.turns, current.preview, current.model, current.source) == (1, "the current one", PLANNER,
                                                                             "history")
    assert summarised.preview.startswith("newer question zzz") and summarised.preview.endswith("...")
    assert len(summarised.preview) == 200 and summarised.turns == 1  # the summary is not a question
    assert (rebuilt.source, rebuilt.turns, rebuilt.preview) == ("episodes", 2, "Fetch bitcoin prices")
    assert (older.date, older.preview, older.model) == ("2026-11-20 09:00", "older question", None)
    assert store.newest() == session.session_id
    assert [r.session_id for r in store.list_sessions(limit=2)] == [session.session_id, "20261124_100000"]


async def test_a_conversation_known_only_from_its_episode_log_is_rebuilt_and_then_saved(fake_llm, episodes):
    episodes.mkdir(parents=True)
    (episodes / "20261122_042512.jsonl").write_text(ANTON_EPISODES)
    fake_llm.queue(Reply.text("Still about 90k."), model=PLANNER)
    session = saving_session(fake_llm)

    resumed = await session.resume("20261122_042512")

    assert resumed.source == "episodes" and resumed.turns == 2
    assert [m["role"] for m in session.history] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    call = session.history[1]["content"][0]
    assert call["name"] == "scratchpad" and call["input"] == {"action": "exec", "name": "main", "code": "print(1)"}
    assert session.history[2]["content"][0] == {"type": "tool_result", "tool_use_id": call["id"],
                                                "content": "[output]\n1"}
    assert resumed.lost_pads == ("main",)

    await run_turn(session, "and now?")
    saved = json.loads(history_file(episodes, "20261122_042512").read_text())
    assert saved[:6] == session.history[:6] and saved[-1]["content"][0]["text"] == "Still about 90k."
    lines = [json.loads(line) for line in (episodes / "20261122_042512.jsonl").read_text().splitlines()]
    assert lines[-2]["role"] == "user" and lines[-2]["turn"] == 3  # the log goes on with the next turn number


async def test_a_resumed_conversation_continues_in_the_same_files_and_tells_the_agent_pads_are_gone(
    fake_llm, episodes
):
    store = HistoryStore(episodes)
    old = [
        {"role": "user", "content": "[2026-11-25 08:50] load the sales data"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "scratchpad",
             "input": {"action": "exec", "name": "sales", "code": "df = load()"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "loaded"}]},
        {"role": "assistant", "content": "Loaded into `df`."},
    ]
    store.save("20261125_085000", old)
    fake_llm.queue(Reply.text("I need to load it again first."), model=PLANNER)
    session = saving_session(fake_llm)
    await session.scratchpads.get_or_create("leftover")
    started_as = session.session_id

    resumed = await session.resume("20261125_085000")

    assert session.session_id == "20261125_085000" != started_as
    assert session.scratchpads.names() == []  # the pads of the conversation left behind were closed
    assert (resumed.turns, resumed.messages, resumed.lost_pads, resumed.summary) == (1, 4, ("sales",), None)
    await run_turn(session, "plot df")
    request = fake_llm.requests_for(PLANNER)[-1]
    assert request.messages[:4] == old
    assert "Scratchpads do not survive one: the scratchpad 'sales' no longer exist" in request.system
    assert request.system.count("Scratchpads do not survive") == 1
    saved = json.loads(history_file(episodes, "20261125_085000").read_text())
    assert saved[:4] == old and len(saved) == 6
    assert not history_file(episodes, started_as).exists()
    await session.scratchpads.get_or_create("sales")  # made again since: no longer lost
    assert "Scratchpads do not survive" not in session.system_prompt()


async def test_resuming_a_broken_or_unknown_conversation_changes_nothing(fake_llm, episodes):
    episodes.mkdir(parents=True)
    broken = history_file(episodes, "20261125_085000")
    broken.write_bytes(b'{"not": "a list"}')
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "hello")
    before = list(session.history)
    with pytest.raises(HistoryBroken, match="not a list"):
        await session.resume("20261125_085000")
    with pytest.raises(LookupError):
        await session.resume("20990101_000000")
    assert session.history == before and broken.read_bytes() == b'{"not": "a list"}'


async def test_rewind_drops_the_turns_from_a_message_on_and_the_saved_file_follows(fake_llm, episodes):
    fake_llm.queue(Reply.text("A1"), Reply.text("A2"), Reply.text("A3"), model=PLANNER)
    session = saving_session(fake_llm)
    for text in ("first", "second", "third"):
        await run_turn(session, text)
    turns = session.user_turns()
    assert [t.text for t in turns] == ["first", "second", "third"]

    text = session.rewind(turns[1].index)

    assert text == "second"
    assert [t.text for t in session.user_turns()] == ["first"]
    saved = json.loads(history_file(episodes, session.session_id).read_text())
    assert saved == session.history and len(saved) == 2
    with pytest.raises(ValueError):
        session.rewind(1)  # an answer, not a user message
    assert session.rewind(0) == "first"
    assert json.loads(history_file(episodes, session.session_id).read_text()) == []


async def test_rewind_returns_what_was_typed_without_antons_time_stamp(fake_llm, episodes):
    HistoryStore(episodes).save("20261125_085000", [{"role": "user", "content": "[2026-11-25 08:50] sum 2+2"},
                                                    {"role": "assistant", "content": "4"}])
    session = saving_session(fake_llm)
    await session.resume("20261125_085000")
    assert session.rewind(session.user_turns()[0].index) == "sum 2+2"


async def test_deleting_removes_the_history_and_the_episode_log_but_not_the_one_in_progress(fake_llm, episodes):
    episodes.mkdir(parents=True)
    (episodes / "20261122_042512.jsonl").write_text(ANTON_EPISODES)
    HistoryStore(episodes).save("20261122_042512", [{"role": "user", "content": "Fetch bitcoin prices"},
                                                    {"role": "assistant", "content": "Done"}])
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "hello")

    removed = session.delete_saved("20261122_042512")

    assert sorted(p.name for p in removed) == ["20261122_042512.jsonl", "20261122_042512_history.json"]
    assert [r.session_id for r in session.history_store.list_sessions()] == [session.session_id]
    with pytest.raises(ValueError, match="in progress"):
        session.delete_saved(session.session_id)


async def test_a_new_conversation_gets_a_new_id_and_the_last_one_stays_resumable(fake_llm, episodes):
    fake_llm.queue(Reply.text("One."), Reply.text("Two."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "first conversation")
    first_id = session.session_id
    first_file = history_file(episodes, first_id).read_bytes()

    session.new_conversation()
    await run_turn(session, "second conversation")

    assert session.session_id != first_id
    assert history_file(episodes, first_id).read_bytes() == first_file
    assert [r.preview for r in session.history_store.list_sessions()] == ["second conversation",
                                                                         "first conversation"]


def _deep(levels: int) -> bytes:
    """Valid JSON: one message whose content nests `levels` lists deep."""
    return b'[{"role": "user", "content": [{"type": "text", "text": "hi", "x": ' + b"[" * levels + b"]" * levels + b"}]}]"


BROKEN_FILES = {
    "not JSON": (b'[{"role": "user", "content": "cut off', "not valid JSON"),
    "the wrong shape": (b'{"role": "user"}', "not a list of messages"),
    "nested deeper than JSON can be read": (_deep(100_000), "nested more than"),
    "nested deeper than any conversation": (_deep(900), "nested more than"),
    "not UTF-8": (b'[{"role": "user", "content": "caf\xe9"}]', "not valid UTF-8"),
    "a folder": (None, "not a regular file"),
    "a named pipe": (b"fifo", "not a regular file"),
    "unreadable": (b"no permission", "cannot be read"),
}


@pytest.mark.parametrize("kind", list(BROKEN_FILES))
async def test_every_kind_of_broken_conversation_says_the_same_clear_thing_and_the_rest_still_list(
    fake_llm, episodes, kind
):
    data, reason = BROKEN_FILES[kind]
    episodes.mkdir(parents=True)
    history_file(episodes, "20261125_080000").write_text('[{"role": "user", "content": "an older question"}]')
    broken = history_file(episodes, "20261125_090000")
    if data is None:
        broken.mkdir()
    elif data == b"fifo":
        os.mkfifo(broken)
    elif data == b"no permission":
        if os.geteuid() == 0:
            pytest.skip("permissions do not keep root from reading a file")
        broken.write_text("[]")
        broken.chmod(0)
    else:
        broken.write_bytes(data)
    store = HistoryStore(episodes)
    listed = store.list_sessions()
    assert [(row.session_id, row.source) for row in listed] == [("20261125_090000", "broken"),
                                                                ("20261125_080000", "history")]  # fmt: skip
    assert reason in (listed[0].broken or "")
    assert store.newest() == "20261125_090000", "--continue says what is wrong with the newest, not skip it"
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    session = saving_session(fake_llm)
    await run_turn(session, "hello")
    before = list(session.history)
    with pytest.raises(ValueError, match=reason) as raised:  # what the app's and the command line's resume report
        await session.resume("20261125_090000")
    assert isinstance(raised.value, HistoryBroken) and "it was left as it is" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert session.history == before
    if data not in (None, b"fifo", b"no permission"):
        assert broken.read_bytes() == data
    assert (await session.resume("20261125_080000")).turns == 1
