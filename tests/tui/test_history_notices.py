"""The chat says so when earlier turns of a long conversation are summarised or dropped, or cannot be saved."""

from __future__ import annotations

from tests.fakellm import Reply
from tests.session_helpers import answer_summaries
from anton_tui.tui.widgets.summary_block import SummaryBlock

from tests.tui.e2e_support import PLANNER, SIZE, build_app, notices, save_global_env, send_and_wait

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
