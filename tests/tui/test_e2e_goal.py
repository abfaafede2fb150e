"""`/goal`: the full app over the real session and the fake LLM server. Anton works turn after turn until the model
calls `mark_goal_complete` or the turns run out; a counter above the prompt says which turn runs; Escape stops it."""

from __future__ import annotations

from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.widgets.tool_block import ToolCallBlock

from tests.fakellm import Reply
from tests.tui.app_support import KeptNotificationsApp
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    accepted_requests,
    answers,
    assert_all_requests_valid,
    build_app,
    cell_printed,
    command_replies,
    exec_cell,
    header_field,
    main_screen,
    notices,
    prompt_text,
    save_global_env,
    screen_text,
    send_and_wait,
    started,
    static_text,
    turn_running,
    type_in_prompt,
    user_messages,
    wait_for,
)


def last_user_text(request) -> str:
    content = request.messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b["type"] == "text")


def goal_bar_shown(app) -> bool:
    return bool(main_screen(app).query("#goal-bar"))


async def wait_goal_over(pilot, timeout: float = 8.0) -> None:
    """Until the worker has ended and the screen has said how the goal ended (the counter goes then)."""
    app = pilot.app
    await wait_for(pilot, lambda: not turn_running(app) and not goal_bar_shown(app), timeout, "the goal to be over")


async def test_the_goal_ends_when_the_model_marks_it_complete(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(
        Reply.text("I listed the two files; next I will summarise them."),
        Reply.tool_call("mark_goal_complete", {"summary": "Both files are summarised in notes.md."},
                        text_before="Both summaries are written."),
        Reply.text("The goal is done: notes.md holds both summaries."),
        model=PLANNER,
    )  # fmt: skip
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/goal Summarise the two files into notes.md --turns 5")
        await wait_for(pilot, lambda: any(text.startswith("Goal complete") for text in notices(app, "goal")),
                       what="the goal to be marked complete")  # fmt: skip
        await wait_goal_over(pilot)
        assert "Goal complete after 2 turns: Both files are summarised in notes.md." in notices(app, "goal")
        assert "Goal: turn 2 of 5" in notices(app, "goal")
        assert not goal_bar_shown(app), "the counter goes with the goal"
        assert answers(app)[-1] == "The goal is done: notes.md holds both summaries."
        assert header_field(app, "turn-status") == "ready"
        assert len(accepted_requests(fake_llm, PLANNER)) == 3, "no third turn after the goal was marked complete"

        fake_llm.queue(Reply.text("Hello again."), model=PLANNER)
        await send_and_wait(pilot, "Thanks!")
        assert answers(app)[-1] == "Hello again."
    assert_all_requests_valid(fake_llm)
    first, second, third, after = accepted_requests(fake_llm, PLANNER)
    assert last_user_text(first).startswith("Goal: Summarise the two files into notes.md\n")
    assert "--turns" not in last_user_text(first) and "up to 5 turns" in last_user_text(first)
    assert last_user_text(second).startswith("Goal turn 2 of 5.")
    assert "Summarise the two files into notes.md" in last_user_text(second), "each turn repeats the objective"
    assert all("mark_goal_complete" in request.tool_names for request in (first, second, third))
    assert "mark_goal_complete" not in after.tool_names, "the tool is offered only while a goal runs"
    result = third.messages[-1]["content"][0]
    assert result["type"] == "tool_result" and "Goal marked complete" in result["content"]


async def test_the_goal_stops_after_the_turns_given_and_the_counter_shows_each_turn(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(
        Reply.text("Turn one: I read the data."),
        Reply.text(
            "Turn two: I drew the chart, month by month, from January to December.", chunk_size=6, chunk_delay=0.3
        ),  # about 3 s: time to read the counter while it runs, even on a busy machine
        model=PLANNER,
    )
    app = build_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/goal Chart the sales per month --turns 2")
        await wait_for(pilot, lambda: "goal: turn 2 of 2" in screen_text(app), what="the counter at turn 2")
        assert turn_running(app) and header_field(app, "turn-status") == "working…"
        await wait_goal_over(pilot)
        limit = "Goal not marked complete after 2 turns, the limit (/goal … --turns N allows more)."
        assert notices(app, "goal")[-1] == limit
        assert not goal_bar_shown(app) and "goal: turn" not in screen_text(app)
    assert len(accepted_requests(fake_llm, PLANNER)) == 2


async def test_escape_stops_the_goal_and_no_further_turn_starts(fake_llm) -> None:
    save_global_env(fake_llm)
    slow = "I am still working through the rows of the table, one at a time, carefully. " * 4
    fake_llm.queue(
        Reply.text("Turn one done."),
        Reply.text(slow, chunk_size=8, chunk_delay=0.1),
        Reply.text("A turn that must never be asked for."),
        model=PLANNER,
    )
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/goal Check every row of the table --turns 5")
        await wait_for(pilot, lambda: "goal: turn 2 of 5" in screen_text(app), what="the counter at turn 2")
        await wait_for(pilot, lambda: len(answers(app)) >= 2 and answers(app)[-1], what="turn 2 streaming")
        await pilot.press("escape")
        await wait_goal_over(pilot, timeout=5)
        await pilot.pause(0.5)  # time enough for a third turn to start, were the goal still running
        assert "Goal stopped after turn 2 of 5." in notices(app, "goal")
        assert any("Turn cancelled." in text for text in notices(app, "cancelled"))
        assert header_field(app, "turn-status") == "cancelled"
        assert not goal_bar_shown(app)
        assert len(fake_llm.requests_for(PLANNER)) == 2, "no turn after Escape"
        assert not app.runtime.goal_running

        await send_and_wait(pilot, "Are you there?")
        assert answers(app)[-1] == "A turn that must never be asked for."
    assert_all_requests_valid(fake_llm)


async def test_goal_without_an_objective_explains_itself_and_waits_for_one(fake_llm) -> None:
    save_global_env(fake_llm)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/goal")
        await wait_for(pilot, lambda: command_replies(app), what="the reply to /goal")
        [(line, reply)] = command_replies(app)
        assert "Usage: /goal <objective> [--turns N]" in reply and "(50 when not given)" in reply
        assert prompt_text(app) == "/goal ", "the prompt waits for the objective"
        await type_in_prompt(pilot, "/goal Do it --turns 0")
        await wait_for(pilot, lambda: len(command_replies(app)) == 2, what="the reply to --turns 0")
        assert "--turns wants a whole number of turns, 1 or more" in command_replies(app)[-1][1]
        assert not turn_running(app) and fake_llm.requests_for(PLANNER) == []


async def test_goal_is_in_help_and_the_palette_puts_it_in_the_prompt(fake_llm) -> None:
    from tests.tui.test_e2e_commands import choose_first_entry, open_palette, palette_entries

    save_global_env(fake_llm)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/help")
        await wait_for(pilot, lambda: command_replies(app), what="the help")
        help_text = " ".join(command_replies(app)[0][1].split())
        assert "/goal <objective> [--turns N]" in help_text and "until it is done or N turns (50)" in help_text

        await open_palette(pilot, "/goal")
        await wait_for(pilot, lambda: palette_entries(app)[0] == "/goal", what="/goal as the best match")
        await choose_first_entry(pilot)
        await wait_for(pilot, lambda: prompt_text(app) == "/goal ", what="the prompt to wait for the objective")
        assert not turn_running(app)


LONG_CELL = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"


def tool_titles(app) -> list[str]:
    return [static_text(block.query_one("CollapsibleTitle")) for block in main_screen(app).chat.query(ToolCallBlock)]


async def test_a_resumed_goal_reads_as_it_happened_with_its_turns_its_end_and_the_cancelled_cell(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(
        Reply.text("Turn one: I read the data."),
        Reply.text("Turn two: I drew the chart."),
        Reply.tool_call("scratchpad", exec_cell(LONG_CELL, description="wait a minute"), id="toolu_long_cell"),
        model=PLANNER,
    )
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/goal Chart the sales per month --turns 2")
        await wait_goal_over(pilot)
        await type_in_prompt(pilot, "/goal Wait for the long job --turns 3")
        await wait_for(pilot, lambda: cell_printed(app, "main", 1, "started"), what="the long cell to start")
        await pilot.press("escape")
        await wait_goal_over(pilot, timeout=5)
        live_users, live_answers = user_messages(app), answers(app)
        live_goal_lines = [text for text in notices(app, "goal") if not text.startswith("Anton works on this")]
        assert live_goal_lines[-1] == "Goal stopped after turn 1 of 3."
        assert "cancelled" in tool_titles(app)[0]
        session_id = app.runtime.session.session_id

    resumed = KeptNotificationsApp(RuntimeStarter(read_env_layers(), resume=session_id), cursor_blink=False)
    async with resumed.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(resumed)), what="resumed")
        assert (
            user_messages(resumed) == live_users == ["Goal: Chart the sales per month", "Goal: Wait for the long job"]
        )
        assert not any("Work on this goal" in text or "Carry on" in text for text in screen_text(resumed).split("\n"))
        assert (
            notices(resumed, "goal")
            == live_goal_lines
            == [
                "Goal: turn 2 of 2",
                "Goal not marked complete after 2 turns, the limit (/goal … --turns N allows more).",
                "Goal stopped after turn 1 of 3.",
            ]
        )
        assert answers(resumed)[: len(live_answers)] == live_answers
        [title] = tool_titles(resumed)
        assert "cancelled" in title and "failed" not in title, title
