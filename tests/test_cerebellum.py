"""The cerebellum: failed or warning cells become at most three lessons, with one background call per turn."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from anton_tui.agent.events import MemoryWritten, TurnFinished
from anton_tui.llm.errors import LLMError
from anton_tui.memory.learners.cerebellum import Cerebellum
from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.scratchpad.cell import Cell
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import (
    CODER,
    PLANNER,
    coder_requests,
    exec_reply,
    forced_tool,
    make_session,
    of_type,
    planner_requests,
    read,
    run_turn,
    settle,
    user_text_of,
)


def report(*lessons: dict, delay: float = 0.0) -> Reply:
    return Reply.tool_call("CerebellumReport", {"lessons": list(lessons)}, delay=delay)


@pytest.fixture
def cortex(tmp_path: Path) -> Cortex:
    return Cortex(Hippocampus(tmp_path / "home" / "memory"), Hippocampus(tmp_path / "project" / "memory"))


def failed(description: str = "load the data", **fields) -> Cell:
    values = {"code": "import pandas as pd\npd.read_csv('x.csv')", "error": "FileNotFoundError: x.csv",
              "status": "error"}
    values.update(fields)
    return Cell(description=description, **values)


async def test_clean_cells_are_not_kept_and_cost_no_call(fake_llm, cortex):  # noqa: F811
    cerebellum = Cerebellum(cortex, fake_llm.llm_client())
    for i in range(3):
        cell = Cell(code=f"print({i})", description="print", stdout=f"{i}\n", status="ok")
        cerebellum.on_pre_execute(cell)
        cerebellum.on_post_execute(cell)

    assert cerebellum.cells_seen == 3 and cerebellum.buffered_count == 0
    assert await cerebellum.flush() == []
    assert fake_llm.requests == []


async def test_one_call_for_all_buffered_cells_with_each_part_clipped(fake_llm, cortex):  # noqa: F811
    cerebellum = Cerebellum(cortex, fake_llm.llm_client())
    cerebellum.on_post_execute(failed("parse the dates", code="x = 1\n" * 400, error="E" * 1000))
    cerebellum.on_post_execute(
        Cell(code="import warnings", description="warn", stdout="o" * 900, stderr="DeprecationWarning " * 60,
             status="ok")
    )
    assert cerebellum.buffered_count == 2
    fake_llm.queue(report({"text": "Pass errors='coerce' to pd.to_datetime for messy input"}), model=CODER)

    lessons = await cerebellum.flush()

    [request] = fake_llm.requests
    assert forced_tool(request) == "CerebellumReport" and request.max_tokens >= 2048
    prompt = user_text_of(request)
    assert "### Cell 1" in prompt and "### Cell 2" in prompt
    assert "Intent: parse the dates" in prompt and "Intent: warn" in prompt
    assert "x = 1\n" * 133 in prompt and "x = 1\n" * 135 not in prompt  # code cut at 800 characters
    assert "E" * 400 in prompt and "E" * 401 not in prompt
    assert "o" * 500 in prompt and "o" * 501 not in prompt
    assert prompt.count("[truncated]") == 4  # code, stdout and stderr keep their start, the error its end
    assert [lesson.text for lesson in lessons] == ["Pass errors='coerce' to pd.to_datetime for messy input"]
    assert cerebellum.buffered_count == 0


async def test_at_most_three_lessons_are_saved_as_project_scratchpad_lessons(fake_llm, cortex):  # noqa: F811
    cerebellum = Cerebellum(cortex, fake_llm.llm_client())
    cerebellum.on_post_execute(failed())
    fake_llm.queue(
        report(
            {"text": "Check that a file exists before reading it"},
            {"text": "Read CSV files with an explicit encoding", "topic": "pandas"},
            {"text": "Print the working directory when a relative path fails"},
            {"text": "A fourth lesson that must not be saved"},
        ),
        model=CODER,
    )

    await cerebellum.flush()

    lines = read(cortex.project_hc.lessons_path).splitlines()
    assert lines[0] == "# Lessons" and len(lines) == 4
    assert lines[1].startswith("- Check that a file exists before reading it <!-- confidence:medium "
                               "source:consolidation topic:scratchpad ts:")
    assert "topic:pandas" in lines[2]
    assert "fourth" not in read(cortex.project_hc.lessons_path)
    assert "Check that a file exists" in cortex.get_scratchpad_context()


async def test_reset_forgets_the_buffer(fake_llm, cortex):  # noqa: F811
    cerebellum = Cerebellum(cortex, fake_llm.llm_client())
    cerebellum.on_post_execute(failed())
    cerebellum.reset()
    assert cerebellum.buffered_count == 0
    assert await cerebellum.flush() == [] and fake_llm.requests == []


async def test_a_model_failure_saves_nothing(fake_llm, cortex):  # noqa: F811
    cerebellum = Cerebellum(cortex, fake_llm.llm_client())
    cerebellum.on_post_execute(failed())
    fake_llm.queue(Reply.error(400, "bad request"), model=CODER)

    with pytest.raises(LLMError):
        await cerebellum.flush()
    assert not cortex.project_hc.lessons_path.exists()


async def test_a_model_that_talks_instead_of_answering_gets_a_second_chance(fake_llm, cortex):  # noqa: F811
    cerebellum = Cerebellum(cortex, fake_llm.llm_client())
    cerebellum.on_post_execute(failed())
    fake_llm.queue(
        Reply.max_tokens("Let me think about what went wrong in these cells, step by step..."),
        report({"text": "Check that a file exists before reading it"}),
        model=CODER,
    )

    await cerebellum.flush()

    assert [r.max_tokens for r in fake_llm.requests] == [2048, 4096]
    assert "Check that a file exists" in read(cortex.project_hc.lessons_path)


# ---- in a real session ---------------------------------------------------------------------------------------------


async def test_a_turn_with_two_failing_cells_makes_one_call_after_the_reply(fake_llm):  # noqa: F811
    session = make_session(fake_llm)
    fake_llm.queue(
        exec_reply("main", "rows = open('missing.csv').read()", "read the sales file"),
        exec_reply("main", "import json; json.loads('{bad')", "parse the config"),
        Reply.text("Both steps failed; the file is missing and the config is not JSON."),
        model=PLANNER,
    )
    fake_llm.queue(
        Reply.tool_call(
            "CerebellumReport",
            {"lessons": [{"text": "Check that an input file exists before opening it"},
                         {"text": "Validate JSON text before parsing it", "topic": "json"}]},
            delay=0.4,
        ),
        model=CODER,
    )

    events = await run_turn(session, "Load the sales file and the config")
    lessons_path = session.cortex.project_hc.lessons_path
    assert of_type(events, TurnFinished)[0].stop_reason == "end_turn"
    assert not lessons_path.exists()  # the reply did not wait for the post-mortem
    await settle(session)

    assert len(coder_requests(fake_llm)) == 1
    prompt = user_text_of(coder_requests(fake_llm)[0])
    assert "read the sales file" in prompt and "FileNotFoundError" in prompt and "JSONDecodeError" in prompt
    text = read(lessons_path)
    assert "Check that an input file exists before opening it" in text and "topic:json" in text

    # the lesson reaches the scratchpad tool's description on the next turn
    fake_llm.queue(Reply.text("Noted."), model=PLANNER)
    await run_turn(session, "Thanks")
    await settle(session)
    tools = planner_requests(fake_llm)[-1].body["tools"]
    scratchpad = next(tool for tool in tools if tool["name"] == "scratchpad")
    assert "Check that an input file exists before opening it" in scratchpad["description"]
    assert len(coder_requests(fake_llm)) == 1
    await session.close()


async def test_reply_arrives_before_a_slow_post_mortem_finishes(fake_llm):  # noqa: F811
    session = make_session(fake_llm)
    fake_llm.queue(exec_reply("main", "1/0", "divide"), Reply.text("It failed."), model=PLANNER)
    fake_llm.queue(report({"text": "Guard divisions against a zero divisor"}, delay=1.0), model=CODER)

    finished_at = written_at = None
    async for event in session.turn("Divide"):
        if isinstance(event, TurnFinished):
            finished_at = time.monotonic()
    while written_at is None:
        for event in await _drain(session):
            if isinstance(event, MemoryWritten) and event.producer == "cerebellum":
                written_at = time.monotonic()
    await settle(session)

    assert written_at - finished_at > 0.5
    assert "Guard divisions" in read(session.cortex.project_hc.lessons_path)
    await session.close()


async def _drain(session) -> list:
    return [await asyncio.wait_for(session.background_events.get(), 5)]


async def test_clean_turn_makes_no_call(fake_llm):  # noqa: F811
    session = make_session(fake_llm)
    fake_llm.queue(exec_reply("main", "print(6 * 7)", "multiply"), Reply.text("42"), model=PLANNER)

    await run_turn(session, "What is six times seven?")
    await settle(session)

    assert coder_requests(fake_llm) == []
    assert not session.cortex.project_hc.lessons_path.exists()
    await session.close()


async def test_a_cancelled_turn_forgets_its_failed_cells(fake_llm):  # noqa: F811
    session = make_session(fake_llm)
    fake_llm.queue(exec_reply("main", "1/0", "divide"), Reply.text("never sent", delay=5), model=PLANNER)

    async for event in session.turn("Divide"):
        if type(event).__name__ == "ToolCallFinished":
            session.cancel()
    await settle(session)

    assert coder_requests(fake_llm) == []
    fake_llm.queue(Reply.text("ok"), model=PLANNER)
    await run_turn(session, "Never mind")
    await settle(session)
    assert coder_requests(fake_llm) == []
    await session.close()
