"""Find in the conversation (Ctrl+F): every match, newest first, scrolled to and highlighted; one in a part of the
conversation that is not mounted (a resumed conversation's earlier turns) is brought back first; Escape closes the
bar."""

from __future__ import annotations

import json

import pytest

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, TurnFinished
from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.widgets.find_bar import FindBar, find_pattern
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import ScriptedSession, make_settings, scripted_app, screen_text, send, wait_until
from .e2e_support import notices, project_dir, save_global_env, started, wait_for

SIZE = (120, 40)


def reply(text: str, turn: int) -> list:
    return [AssistantTextDelta(text), AssistantMessageDone(text), TurnFinished(turn, "end_turn", text)]


def status(app) -> str:
    return str(app.screen.query_one("#find-status").render())


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_ctrl_f_steps_through_matches_on_screen_newest_first_and_escape_closes(size) -> None:
    session = ScriptedSession(reply("The March revenue was 28.2k.", 1), reply("April was flat.", 2),
                              reply("In March, returns doubled.", 3))  # fmt: skip
    app = scripted_app(make_settings(), session, cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        for number, question in enumerate(("revenue?", "april?", "returns?"), start=1):
            await send(pilot, question)
            await wait_until(pilot, lambda: len(session.prompts) == number and not app.screen.busy)
        await pilot.press("ctrl+f")
        await pilot.pause()
        bar = app.screen.query_one(FindBar)
        assert bar.has_class("-open") and app.focused is bar.query_one("Input")
        await pilot.press(*"march")
        await wait_until(pilot, lambda: status(app) == "2 of 2")
        newest = bar.matches[-1].block
        assert newest.has_class("-find-current") and "returns doubled" in newest.source
        await pilot.press("enter")
        await wait_until(pilot, lambda: status(app) == "1 of 2")
        assert bar.matches[0].block.has_class("-find-current") and not newest.has_class("-find-current")
        await pilot.press("escape")
        await pilot.pause()
        assert not bar.has_class("-open") and not app.screen.chat.query(".-find-current")
        assert isinstance(app.focused, Prompt)


async def test_a_match_in_a_resumed_turn_that_is_not_mounted_is_brought_back_and_highlighted(fake_llm) -> None:
    save_global_env(fake_llm)
    history = []
    for turn in range(1, 41):
        history += [{"role": "user", "content": f"Question {turn}: how did region {turn} do?"},
                    {"role": "assistant", "content": f"Region {turn} grew {turn}%."}]  # fmt: skip
    episodes = project_dir() / ".anton" / "episodes"
    episodes.mkdir(parents=True)
    (episodes / "20261125_090000_history.json").write_text(json.dumps(history))
    app = AntonApp(RuntimeStarter(read_env_layers(), resume="20261125_090000"), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
        assert "Question 7:" not in screen_text(app), "turn 7 is far above the last turns"
        await pilot.press("ctrl+f")
        await pilot.press(*"region 7 do")
        await wait_until(pilot, lambda: status(app) == "1 of 1")
        bar = app.screen.query_one(FindBar)
        await wait_until(pilot, lambda: bar.matches[0].block is not None and "Question 7: how did" in screen_text(app))
        assert bar.matches[0].block.has_class("-find-current")
        assert bar.matches[0].block.text == "Question 7: how did region 7 do?"
        await pilot.press("ctrl+a", "ctrl+k", *"grew 40%")
        await wait_until(pilot, lambda: status(app) == "1 of 1" and "Region 40 grew 40%." in screen_text(app))
        assert bar.matches[0].block.has_class("-find-current")


def test_find_ignores_case_and_matches_across_line_breaks() -> None:
    query = find_pattern("region  please")
    assert query is not None
    assert query.search("Sales by REGION\nplease") is not None
    assert query.search("regions, please") is None and query.search("nothing here") is None
    assert find_pattern("   ") is None
    assert find_pattern("1+1 (sum)") is not None and find_pattern("1+1 (sum)").search("is 1+1 (sum) two?")
