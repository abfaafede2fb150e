"""The demo in the full app, as `anton-tui --demo` builds it: both recorded turns run through the real engine, the
self-check (ACC) speaks up in the chat, and the inspector shows its rule and its events."""

from __future__ import annotations

import pytest

from anton_tui.agent.demo import DEMO_MODEL, load_recording
from anton_tui.tui.widgets.inspector import InspectorPane
from anton_tui.tui.widgets.tool_block import ToolCallBlock

from tests.tui.e2e_support import (
    SIZE,
    build_app,
    started,
    answers,
    header_field,
    home_dir,
    main_screen,
    notices,
    prompt_text,
    screen_text,
    user_messages,
    wait_for,
    wait_turn_done,
)
from tests.tui.inspector_fixtures import column


ACC_RULE = "one scratchpad name for the whole task"


async def test_the_demo_replays_both_turns_and_the_inspector_shows_the_acc_at_work() -> None:
    first, second = (turn["user"] for turn in load_recording()["turns"])
    app = build_app(demo=True)
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        demo_root = app.runtime.settings.home.parent
        screen = main_screen(app)
        await wait_for(pilot, lambda: notices(app, "info"), what="the demo banner")
        assert "Demo replay" in notices(app, "info")[0]
        assert header_field(app, "model") == DEMO_MODEL
        assert prompt_text(app) == first, "the first recorded message waits in the prompt"

        await pilot.press("enter")
        await wait_turn_done(pilot, timeout=30, turns=1)
        assert prompt_text(app) == second, "the next recorded message is offered"
        await pilot.press("enter")
        await wait_turn_done(pilot, timeout=30, turns=2)
        assert user_messages(app) == [first, second]

        acc = notices(app, "acc")
        assert any(text.startswith("Self-check") for text in acc), "the nudge during the turn"
        assert any(text.startswith("New rule from self-check") and ACC_RULE in text for text in acc)
        assert screen.scratchpad.pad_names == ["sales", "report"]

        inspector = screen.query_one(InspectorPane)
        rules = inspector.tab("rules")
        await wait_for(pilot, lambda: any(ACC_RULE in text for text in column(rules.table, 2)),
                       what="the ACC rule in the Rules tab")  # fmt: skip
        feed = inspector.acc_feed
        assert feed.items and feed.table.row_count == len(feed.items)
        kinds = {item.cells()[1] for item in feed.items}
        assert {"event", "nudge", "lesson"} <= kinds, kinds
        inspector.show_tab("acc")
        await pilot.pause()
        assert "detect_name_switch" in screen_text(app)
    assert not (home_dir() / "memory").exists(), "the demo never writes in the user's own home"
    assert not demo_root.exists(), "the demo's throw-away folders are removed on exit"


async def test_after_a_cancelled_demo_turn_the_next_prompt_gets_its_own_recorded_answer() -> None:
    first, second = (turn["user"] for turn in load_recording()["turns"])
    app = build_app(demo=True)
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = main_screen(app)
        await pilot.press("enter")

        def slow_cell_running() -> bool:
            cell = screen.scratchpad.cell("sales", 2)
            return cell is not None and cell.status == "running"

        await wait_for(pilot, slow_cell_running, timeout=20, what="the slow summing cell")
        await pilot.press("escape")
        await wait_turn_done(pilot, timeout=5)
        assert prompt_text(app) == second
        await pilot.press("enter")
        await wait_turn_done(pilot, timeout=30, turns=2)
        tools_of_second_turn = [block.tool_name for block in screen.chat.query(ToolCallBlock)][-1:]
        last_answer = answers(app)[-1]
    assert tools_of_second_turn == ["recall"]
    assert last_answer.startswith("Earlier in this session")


async def test_typing_replaces_the_offered_demo_message() -> None:
    first = load_recording()["turns"][0]["user"]
    app = build_app(demo=True)
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: prompt_text(app) == first, what="the offered message")
        await pilot.press(*"Hi")
        assert prompt_text(app) == "Hi"
