"""Ctrl+C as in other agent command lines: it stops what runs (a turn with its cell, a `!` command), else empties
the prompt (Up brings the text back), else says how to quit and quits when pressed again; Ctrl+Q still quits."""

from __future__ import annotations

from anton_tui.agent.events import AssistantTextDelta, ToolCallStarted, TurnFinished
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.shell_block import ShellBlock

from .app_support import (
    Pause,
    ScriptedSession,
    make_settings,
    notifications,
    scripted_app,
    screen_text,
    send,
    wait_until,
)

SIZE = (120, 40)


async def test_ctrl_c_stops_a_running_turn_and_keeps_the_draft_being_typed() -> None:
    pause = Pause()
    scratch = {"action": "exec", "name": "main", "code": "while True: pass"}
    session = ScriptedSession([ToolCallStarted("a", "scratchpad", scratch), pause, AssistantTextDelta("never shown")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "spin")
        await wait_until(pilot, pause.reached.is_set)
        await pilot.press(*"next")
        await pilot.press("ctrl+c")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.cancel_calls == 1
        assert "Turn cancelled." in screen_text(app)
        assert "never shown" not in screen_text(app)
        assert app.screen.query_one(Prompt).text == "next", "stopping the turn leaves the next message alone"
        assert app.is_running


async def test_ctrl_c_stops_a_running_shell_command() -> None:
    app = scripted_app(make_settings(), ScriptedSession([TurnFinished(1, "end_turn", "")]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!echo started; sleep 30")
        await wait_until(
            pilot, lambda: bool(app.screen.query(ShellBlock)) and "started" in app.screen.query_one(ShellBlock).output
        )
        block = app.screen.query_one(ShellBlock)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not block.running, timeout=4)
        assert "stopped" in block.status_text
        assert app.is_running


async def test_ctrl_c_with_nothing_running_empties_the_prompt_and_up_brings_the_text_back() -> None:
    app = scripted_app(make_settings(), ScriptedSession([TurnFinished(1, "end_turn", "")]))
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+c")
        assert prompt.text == ""
        assert app.is_running
        await pilot.press("up")
        assert prompt.text == "half a thought"


async def test_ctrl_c_twice_on_an_empty_prompt_quits_and_once_says_how() -> None:
    app = scripted_app(make_settings(), ScriptedSession([TurnFinished(1, "end_turn", "")]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert "Press Ctrl+C again to quit (or Ctrl+Q)." in notifications(app)
        assert "Press ctrl+q to quit" not in " ".join(notifications(app))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_copies_text_selected_in_the_prompt_and_ctrl_q_still_quits() -> None:
    app = scripted_app(make_settings(), ScriptedSession([TurnFinished(1, "end_turn", "")]))
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await pilot.press(*"copy me")
        prompt.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "copy me"
        assert prompt.text == "copy me"
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
