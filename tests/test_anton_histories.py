"""Round trips with Anton: histories written by anton-agent 2.26.10.26.1 itself (tests/fixtures/anton_histories)
resume here with every message, and what we write reads back through Anton's loader unchanged."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from anton_tui.agent import events as ev
from anton_tui.agent.summarise import COMPACTED_MARKER, SUMMARY_SYSTEM
from tests.fakellm import Reply, ToolCallSpec
from tests.session_helpers import CODER, PLANNER, answer_summaries, make_session, of_type, quiet_coder, run_turn

FIXTURES = Path(__file__).parent / "fixtures" / "anton_histories"
PLAIN, TOOLS, SUMMARISED = "20261125_085000", "20261125_085200", "20261125_085400"


# ---- Anton's reader, as the reference describes it (anton/memory/history_store.py), without importing anton ----


def anton_load(episodes: Path, session_id: str) -> list | None:
    path = episodes / f"{session_id}_history.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except Exception:
        return None
    return data if isinstance(data, list) else None


def anton_is_user_turn(message: dict) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return True
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def anton_list_sessions(episodes: Path, limit: int = 20) -> list[dict]:
    rows = []
    for path in sorted(episodes.glob("*_history.json"), reverse=True):
        if len(rows) >= limit:
            break
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except Exception:
            continue
        if not isinstance(data, list) or not data:
            continue
        session_id = path.stem.removesuffix("_history")
        turns = sum(1 for m in data if anton_is_user_turn(m))
        if turns == 0:
            continue
        try:
            started = datetime.strptime(session_id, "%Y%m%d_%H%M%S").replace(tzinfo=timezone.utc)
            date = started.strftime("%Y-%m-%d %H:%M")
        except ValueError:
            date = session_id
        preview = ""
        for m in data:
            if m.get("role") == "user":
                content = m.get("content", "")
                if isinstance(content, str):
                    preview = content.strip()
                else:
                    preview = next((b.get("text", "").strip() for b in content if b.get("type") == "text"), "")
                break
        rows.append({"session_id": session_id, "date": date, "turns": turns,
                     "preview": preview[:57] + "..." if len(preview) > 60 else preview})
    return rows


def anton_recognises_summary(history: list) -> bool:
    """Anton's next compaction updates a leading summary in place when its text starts with the marker."""
    first = history[0]
    return isinstance(first.get("content"), str) and first["content"].lstrip().startswith(COMPACTED_MARKER)


# ---- fixtures in, our session out ----


@pytest.fixture
def episodes(project_dir: Path) -> Path:
    folder = project_dir / ".anton" / "episodes"
    folder.mkdir(parents=True)
    for path in FIXTURES.glob("*_history.json"):
        shutil.copyfile(path, folder / path.name)
    return folder


def fixture(session_id: str) -> list:
    return json.loads((FIXTURES / f"{session_id}_history.json").read_text(encoding="utf-8"))


def without_system(request) -> list:
    return [m for m in request.messages if m.get("role") not in ("system", "developer")]


@pytest.mark.parametrize("session_id", [PLAIN, TOOLS, SUMMARISED])
async def test_a_history_written_by_anton_resumes_here_with_every_message(fake_llm, episodes, session_id):
    written = (episodes / f"{session_id}_history.json").read_bytes()
    expected = fixture(session_id)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Carrying on."), model=PLANNER)
    session = make_session(fake_llm, episodic_memory=True)

    resumed = await session.resume(session_id)

    assert session.history == expected and resumed.messages == len(expected)
    await run_turn(session, "carry on")
    sent = without_system(fake_llm.requests_for(PLANNER)[-1])
    assert sent[: len(expected)] == expected  # every message reached the model as Anton wrote it
    saved = (episodes / f"{session_id}_history.json").read_bytes()
    assert saved[: len(written) - 1] == written[:-1]  # the same file, the old messages byte for byte, then more
    assert len(json.loads(saved)) == len(expected) + 2


@pytest.mark.parametrize("session_id", [PLAIN, TOOLS, SUMMARISED])
async def test_an_anton_history_resumes_over_the_openai_format_too(fake_llm, episodes, session_id):
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Carrying on."), model=PLANNER)
    session = make_session(fake_llm, provider="openai", episodic_memory=True)
    await session.resume(session_id)
    events = await run_turn(session, "carry on")
    assert of_type(events, ev.TurnFinished)[0].stop_reason == "end_turn"
    request = fake_llm.requests_for(PLANNER)[-1]
    assert request.rejected is None and request.outcome == "answered"
    calls = sum(len(m.get("tool_calls") or []) for m in request.messages)
    results = sum(1 for m in request.messages if m.get("role") == "tool")
    expected_calls = sum(1 for m in fixture(session_id) if isinstance(m["content"], list)
                         for b in m["content"] if b["type"] == "tool_use")
    assert calls == results == expected_calls


async def test_an_anton_conversation_reads_as_a_transcript_for_the_chat(fake_llm, episodes):
    session = make_session(fake_llm, episodic_memory=True)
    await session.resume(TOOLS)
    shown = [(e.kind, e.text, e.tool, e.success) for e in session.transcript()]
    assert shown == [
        ("user", "sum 2+2 and read config.toml", None, True),
        ("answer", "Computing.", None, True),
        ("tool", "4", "scratchpad", True),
        ("tool", "FileNotFoundError: config.toml", "scratchpad", False),
        ("tool", "Memory updated", "memorize", True),
        ("answer", "2+2 = 4. There is no config.toml — noted for next time.", None, True),
        ("user", "thanks", None, True),
        ("answer", "You're welcome.", None, True),
    ]
    assert session.transcript()[2].input == {"action": "exec", "name": "main", "code": "print(2+2)",
                                             "one_line_description": "add"}
    await session.resume(SUMMARISED)
    entries = session.transcript()
    assert (entries[0].kind, entries[0].text) == ("summary", "## Goal\n- add numbers")
    assert entries[1].kind == "answer" and entries[1].text.startswith("4 + 4 = 8.")
    assert [e.index for e in entries if e.kind == "user"] == [t.index for t in session.user_turns()]


async def test_antons_summary_is_recognised_and_updated_not_summarised_again(fake_llm, episodes):
    answer_summaries(fake_llm, ["## Goal\n- add numbers\n## Completed\n- sums 5 to 9"])
    session = make_session(fake_llm, episodic_memory=True, context_window=6000, context_pressure_threshold=0.5)
    resumed = await session.resume(SUMMARISED)
    assert resumed.summary == "## Goal\n- add numbers" == session.summary
    assert [t.text for t in session.user_turns()][:1] == ["question 5: add 5 and 5"]  # the stamp is not typed text

    fake_llm.queue(*[Reply.text("Sum noted. " + "More detail. " * 120) for _ in range(20)], model=PLANNER)
    summarised = []
    for number in range(6, 26):
        summarised += of_type(await run_turn(session, f"question {number}"), ev.HistorySummarised)
        if summarised:
            break
    assert summarised
    asked = [r for r in fake_llm.requests_for(CODER) if r.system == SUMMARY_SYSTEM][0]
    text = asked.messages[0]["content"]
    assert text.startswith("PREVIOUS RECORD") and "## Goal\n- add numbers" in text
    assert COMPACTED_MARKER not in text.split("NEW TURNS TO FOLD IN:", 1)[1]
    assert session.summary == "## Goal\n- add numbers\n## Completed\n- sums 5 to 9"


# ---- our histories, read the way Anton reads them ----


async def test_what_we_write_reads_back_through_antons_loader_unchanged(fake_llm, project_dir):
    quiet_coder(fake_llm)
    fake_llm.queue(
        Reply.text("Canberra — the capital since 1913."),
        Reply(calls=[ToolCallSpec("recall", {"query": "capital"}), ToolCallSpec("missing_tool", {})],
              content="Looking."),
        Reply.text("Nothing earlier, and one tool was missing."),
        model=PLANNER,
    )
    session = make_session(fake_llm, episodic_memory=True)
    await run_turn(session, "Capital of Australia? «quick»")
    await run_turn(session, "Did we talk about this before?")
    episodes = project_dir / ".anton" / "episodes"

    loaded = anton_load(episodes, session.session_id)
    assert loaded == session.history and len(loaded) == 6
    raw = (episodes / f"{session.session_id}_history.json").read_bytes()
    assert raw == json.dumps(loaded, ensure_ascii=False).encode("utf-8")  # what Anton's own save would write
    rows = anton_list_sessions(episodes)
    assert rows == [{"session_id": session.session_id, "date": rows[0]["date"], "turns": 2,
                     "preview": "Capital of Australia? «quick»"}]


async def test_a_summary_we_write_is_one_anton_recognises(fake_llm, project_dir):
    answer_summaries(fake_llm, ["## Goal\n- compare the figures"])
    fake_llm.queue(*[Reply.text("Answer. " + "Detail here. " * 150) for _ in range(12)], model=PLANNER)
    session = make_session(fake_llm, episodic_memory=True, context_window=6000, context_pressure_threshold=0.5)
    for number in range(1, 12):
        events = await run_turn(session, f"question {number}")
        if of_type(events, ev.HistorySummarised):
            break
    episodes = project_dir / ".anton" / "episodes"
    loaded = anton_load(episodes, session.session_id)
    assert loaded == session.history and anton_recognises_summary(loaded)
    assert "## Goal\n- compare the figures" in loaded[0]["content"]
    assert anton_list_sessions(episodes)[0]["turns"] >= 2
