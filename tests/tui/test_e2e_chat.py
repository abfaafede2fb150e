"""The full app over the real session: streamed answers, live scratchpad output, cancelling, pad reset and removal.

Every test drives the app with keys through Pilot; the model's side comes from the fake LLM server over HTTP.
"""

from __future__ import annotations

import pytest

from anton_tui.tui.widgets.cell_view import CellView
from anton_tui.tui.widgets.tool_block import ToolCallBlock

from tests.fakellm import Reply
from tests.tui.e2e_support import (
    CODER,
    PLANNER,
    SIZE,
    accepted_requests,
    answers,
    assert_all_requests_valid,
    build_app,
    cell_printed,
    exec_cell,
    header_field,
    main_screen,
    notices,
    notifications,
    save_global_env,
    screen_text,
    send_and_wait,
    started,
    turn_running,
    type_in_prompt,
    user_messages,
    wait_for,
    wait_turn_done,
)


ANSWER = (
    "Paris is the capital of France. It sits on the Seine, in the north of the country, "
    "and has been the capital for most of the last thousand years."
)


async def test_the_answer_streams_into_the_chat_and_the_header_counts_tokens(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text(ANSWER, chunk_size=10, chunk_delay=0.1, usage=(1234, 56)), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert header_field(app, "tokens") == "0 in · 0 out"
        await type_in_prompt(pilot, "What is the capital of France?")
        await wait_for(pilot, lambda: user_messages(app) == ["What is the capital of France?"], what="user message")

        def partial_shown() -> bool:
            shown = answers(app)
            return bool(shown) and 0 < len(shown[0]) < len(ANSWER)

        await wait_for(pilot, partial_shown, what="part of the answer before the stream ends")
        partial = answers(app)[0]
        assert ANSWER.startswith(partial), "the block holds the chunks received so far, in order"
        assert turn_running(app) and fake_llm.requests_for(PLANNER)[0].outcome == "pending"
        await wait_for(pilot, lambda: "Paris is the capital" in screen_text(app), what="partial text on screen")

        await wait_turn_done(pilot)
        assert answers(app) == [ANSWER], "the chunks of one answer grow one Markdown block"
        words = lambda: screen_text(app).split()  # noqa: E731  (the answer may wrap anywhere)
        await wait_for(pilot, lambda: "thousand" in words() and any(w.startswith("years") for w in words()),
                       what="the end of the answer on screen")  # fmt: skip
        assert header_field(app, "tokens") == "1.2k in · 56 out"
        assert header_field(app, "turn-status") == "ready"
    [request] = fake_llm.requests_for(PLANNER)
    assert request.stream and request.messages[-1]["content"] == "What is the capital of France?"


def text_of(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block["type"] == "text")


def orphaned_tool_uses(history: list[dict]) -> list[str]:
    """Ids of tool calls not answered by a tool_result in the message right after them."""
    orphans = []
    for index, message in enumerate(history):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        following = history[index + 1]["content"] if index + 1 < len(history) else []
        blocks = following if isinstance(following, list) else []
        answered = {block.get("tool_use_id") for block in blocks}
        orphans += [b["id"] for b in message["content"] if b["type"] == "tool_use" and b["id"] not in answered]
    return orphans


SLOW_CELL = (
    "import time\n"
    "print('first line', flush=True)\n"
    "time.sleep(1.5)\n"
    "print('second line', flush=True)\n"
)


async def test_cell_output_shows_in_the_scratchpad_pane_while_the_cell_runs(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(
        Reply.tool_call("scratchpad", exec_cell(SLOW_CELL, description="print two lines slowly")),
        Reply.text("Both lines were printed."),
        model=PLANNER,
    )
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "Print two lines, slowly.")
        pane = main_screen(app).scratchpad

        await wait_for(pilot, lambda: cell_printed(app, "main", 1, "first line"),
                       what="the first line while the cell runs")  # fmt: skip
        cell = pane.cell("main", 1)
        assert cell.status == "running" and "second line" not in cell.output_text
        await wait_for(pilot, lambda: "first line" in screen_text(app), what="first line on screen")
        assert pane.pad_names == ["main"]

        await wait_turn_done(pilot)
        assert cell.status == "ok"
        assert cell.output_text.splitlines() == ["first line", "second line"]
        assert answers(app)[-1] == "Both lines were printed."
    tool_result = fake_llm.requests_for(PLANNER)[1].messages[-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "second line" in str(tool_result["content"])


LONG_CELL = "import time\nprint('started', flush=True)\ntime.sleep(60)\nprint('never printed', flush=True)\n"


async def test_escape_cancels_a_running_cell_and_the_next_prompt_still_works(fake_llm) -> None:
    save_global_env(fake_llm)
    call = Reply.tool_call("scratchpad", exec_cell(LONG_CELL, description="wait a minute"), id="toolu_long_cell")
    fake_llm.queue(call, model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = main_screen(app)
        await type_in_prompt(pilot, "Wait for a minute.")
        await wait_for(pilot, lambda: cell_printed(app, "main", 1, "started"), what="the long cell to start")
        await pilot.press("escape")
        await wait_turn_done(pilot, timeout=5)

        assert any("Turn cancelled." in text for text in notices(app, "cancelled"))
        assert header_field(app, "turn-status") == "cancelled"
        assert screen.scratchpad.cell("main", 1).status in ("cancelled", "killed")
        [block] = screen.chat.query(ToolCallBlock)
        assert "-running" not in block.query_one(".tool-result").classes, "the tool line no longer says running"
        session = app.runtime.session
        assert not session.running
        pad = session.scratchpads.get("main")
        assert pad is None or all(c.status not in ("running", "pending") for c in pad.cells)

        fake_llm.queue(Reply.text("Still here."), model=PLANNER)
        await send_and_wait(pilot, "Are you still there?")
        assert answers(app)[-1] == "Still here."
    assert_all_requests_valid(fake_llm)
    follow_up = accepted_requests(fake_llm, PLANNER)[-1]
    messages = follow_up.messages
    assert messages[0]["content"] == "Wait for a minute."
    assert text_of(messages[-1]) == "Are you still there?"
    blocks = [block for message in messages if isinstance(message["content"], list) for block in message["content"]]
    uses = [block for block in blocks if block["type"] == "tool_use"]
    results = [block for block in blocks if block["type"] == "tool_result"]
    assert [u["id"] for u in uses] == ["toolu_long_cell"]
    assert [r["tool_use_id"] for r in results] == ["toolu_long_cell"], "the cancelled call got its result"


async def test_a_cancel_during_a_tool_call_leaves_a_consistent_history_at_once(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.tool_call("scratchpad", exec_cell(LONG_CELL, description="wait a minute")), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "Wait for a minute.")
        await wait_for(pilot, lambda: cell_printed(app, "main", 1, "started"), what="the long cell to start")
        await pilot.press("escape")
        await wait_turn_done(pilot, timeout=5)
        history_after_cancel = [dict(message) for message in app.runtime.session.history]
        fake_llm.queue(Reply.text("Still here."), model=PLANNER)
        await send_and_wait(pilot, "Are you still there?")
        repair_notices = [text for text in notices(app, "info") if "History repaired" in text]
    assert orphaned_tool_uses(history_after_cancel) == [], "the user's cancel left a tool call without a result"
    assert repair_notices == [], "a cancel by the user is not a repair"


async def test_escape_during_a_slow_stream_keeps_the_partial_answer(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text(ANSWER, chunk_size=6, chunk_delay=0.15), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "Tell me about Paris.")
        await wait_for(pilot, lambda: answers(app) and len(answers(app)[0]) >= 12, what="some streamed text")
        await pilot.press("escape")
        await wait_turn_done(pilot, timeout=5)
        assert any("Turn cancelled." in text for text in notices(app, "cancelled"))
        partial = answers(app)[0]
        assert partial and ANSWER.startswith(partial.strip()) and len(partial) < len(ANSWER)

        fake_llm.queue(Reply.text("Go on, then."), model=PLANNER)
        await send_and_wait(pilot, "Continue.")
        assert answers(app)[-1] == "Go on, then."
    assert_all_requests_valid(fake_llm)
    messages = accepted_requests(fake_llm, PLANNER)[-1].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    kept = messages[1]["content"][0]["text"]
    assert kept and ANSWER.startswith(kept), "the history keeps what the user saw of the cancelled answer"


async def test_reset_and_remove_keys_act_on_the_real_pads(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(
        Reply.tool_call("scratchpad", exec_cell("answer = 41\nprint(answer + 1)", description="set a variable")),
        Reply.text("The answer is 42."),
        model=PLANNER,
    )
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = main_screen(app)
        pane = screen.scratchpad
        await send_and_wait(pilot, "Set answer to 41.")
        assert pane.cell("main", 1).output_text == "42"

        await pilot.click(CellView)
        await pilot.press("r")
        await wait_for(pilot, lambda: not pane.pad_view("main").cells, what="the pad's cells to be cleared")
        assert any("was reset" in note for note in notifications(app))

        fake_llm.queue(
            Reply.tool_call("scratchpad", exec_cell("print(answer)", description="use the variable")),
            Reply.text("The variable is gone."),
            model=PLANNER,
        )
        fake_llm.queue(Reply.tool_call("CerebellumReport", {"lessons": []}), model=CODER)  # the failed cell's review
        await send_and_wait(pilot, "Print answer again.")
        cell = pane.pad_view("main").cells[-1]
        assert cell.status == "error"
        tool_result = fake_llm.requests_for(PLANNER)[-1].messages[-1]["content"][0]["content"]
        assert "NameError" in str(tool_result) and "answer" in str(tool_result)
        assert app.runtime.session.scratchpads.names() == ["main"]

        await pilot.click(CellView)
        await pilot.press("delete")
        assert app.runtime.session.scratchpads.names() == ["main"], "the first Delete only arms the removal"
        await pilot.press("delete")
        await wait_for(pilot, lambda: pane.pad_names == [], what="the pad's tab to go")
        await wait_for(pilot, lambda: app.runtime.session.scratchpads.names() == [], what="the pad to be removed")
        assert "No scratchpad yet" in screen_text(app)
    assert_all_requests_valid(fake_llm)
