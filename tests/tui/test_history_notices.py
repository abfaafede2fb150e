"""The chat says so when earlier turns of a long conversation are summarised or dropped, or cannot be saved."""

from __future__ import annotations

import json

from textual import events

from tests.fakellm import Reply
from tests.session_helpers import answer_summaries
from anton_tui.tui.widgets.summary_block import SummaryBlock

from anton_tui.tui.widgets.prompt import Prompt
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    build_app,
    main_screen,
    notices,
    save_global_env,
    send_and_wait,
    started,
    wait_for,
    wait_turn_done,
)

LONG_ANSWER = "The figures line up with last week's run. " * 60


async def test_a_long_conversation_shows_that_its_earlier_turns_were_summarised(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_CONTEXT_WINDOW="6000", ANTON_CONTEXT_PRESSURE_THRESHOLD="0.5")
    answer_summaries(fake_llm, ["## Goal\n- compare the figures"])
    fake_llm.queue(*[Reply.text(LONG_ANSWER) for _ in range(12)], model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        for number in range(1, 13):
            await send_and_wait(pilot, f"question {number}")
            if app.screen.query(SummaryBlock):
                break
        [block] = app.screen.query(SummaryBlock)
        assert "Earlier turns summarised" in str(block.title) and "messages, about" in str(block.title)
        assert block.collapsed, "compact until asked"
        block.collapsed = False
        await pilot.pause()
        assert "compare the figures" in str(block.query_one(".summary-text").render())
    assert app.runtime.session.summary == "## Goal\n- compare the figures"


async def test_a_history_file_that_cannot_be_written_over_is_reported(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("One."), Reply.text("Two."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "first")
        path = app.runtime.session.history_store.history_path(app.runtime.session.session_id)
        path.write_bytes(b"[not json")
        await send_and_wait(pilot, "second")
        shown = [text for text in notices(app, "info") if "Conversation not saved" in text]
    assert shown and "not valid JSON" in shown[0] and "left as it is" in shown[0]
    assert path.read_bytes() == b"[not json"


async def test_a_300_kb_paste_sent_from_the_prompt_is_cut_and_the_notice_says_it_was_the_message(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_CONTEXT_WINDOW="32768")
    fake_llm.queue(Reply.text("Step 4 failed first."), model=PLANNER)
    pasted = "Which step failed first?\n" + "".join(f"step {n:05d}: compiling core/part_{n}.py ... ok\n"
                                                     for n in range(7_000))
    assert len(pasted) > 300_000
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        prompt = main_screen(app).query_one(Prompt)
        prompt.focus()
        app.post_message(events.Paste(pasted))  # as the terminal's driver delivers a paste
        await wait_for(pilot, lambda: len(prompt.text) >= len(pasted) - 1, what="the paste reaches the prompt")
        prompt_sent = prompt.text
        await pilot.press("enter")
        await wait_turn_done(pilot, timeout=20, turns=1)
        shown = [text for text in notices(app, "info") if "cut" in text]
    assert len(shown) == 1, shown
    assert shown[0].startswith("Message cut:") and f"your message was cut from {len(prompt_sent):,} to" in shown[0]
    assert "tool result" not in shown[0]
    request = fake_llm.requests_for(PLANNER)[-1]
    assert request.outcome == "answered" and "Which step failed first?" in json.dumps(request.messages)
