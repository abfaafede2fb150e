"""Your past messages in the chat, picked from the keyboard: Alt+Up and the arrows move a highlight over them, **i**
shows what that turn's request carried (that turn's rules, not today's), **r** goes back to before it as /rewind
does, and the footer and F1 name the keys."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.widgets import DataTable

from anton_tui.agent.context_report import context_report
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.help import HelpScreen
from anton_tui.tui.screens.turn_context import TurnContextScreen

from tests.fakellm import Reply
from tests.session_helpers import quiet_coder
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    build_app,
    main_screen,
    prompt_text,
    save_global_env,
    send_and_wait,
    user_messages,
    wait_for,
)
from tests.tui.screen_reader import screen_text

FIRST, SECOND = "What is the capital of France?", "How many people live there?"


def picked(app) -> str | None:
    chat = main_screen(app).chat
    return chat.picked().text if chat.picked() is not None else None


def table_lines(screen) -> list[str]:
    table = screen.query_one(DataTable)
    return [str(table.get_row_at(row)[-1]) for row in range(table.row_count)]


async def two_turns_with_a_rule_between(pilot, anton_home: Path) -> None:
    rules = anton_home / "memory" / "rules.md"
    rules.parent.mkdir(exist_ok=True)
    rules.write_text("# Rules\n\n## Always\n- Answer in English\n")
    await send_and_wait(pilot, FIRST)
    rules.write_text("# Rules\n\n## Always\n- Answer in English\n- Use metric units\n")
    await send_and_wait(pilot, SECOND)


async def test_a_picked_message_shows_what_its_own_turn_saw(fake_llm, anton_home) -> None:
    save_global_env(fake_llm, ANTON_SKILLS_BUILTIN="false")
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await two_turns_with_a_rule_between(pilot, anton_home)
        await pilot.press("alt+up")  # from the prompt: the latest message
        assert picked(app) == SECOND and main_screen(app).chat.has_focus
        await pilot.press("up")
        assert picked(app) == FIRST
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, TurnContextScreen), what="the turn's context")
        assert table_lines(app.screen) == ["- Answer in English"], "the first turn had one rule"
        assert "What turn 1 saw" in screen_text(app) and FIRST in screen_text(app)
        await pilot.press("escape")
        await pilot.press("down", "i")
        await wait_for(pilot, lambda: isinstance(app.screen, TurnContextScreen), what="the second turn's context")
        assert table_lines(app.screen) == ["- Answer in English", "- Use metric units"]
        await pilot.press("escape", "escape")  # close, then let go of the message
        assert picked(app) is None and main_screen(app).focused.id == "prompt"


async def test_rewind_from_a_picked_message_fills_the_prompt_and_drops_later_turns(fake_llm, anton_home) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await two_turns_with_a_rule_between(pilot, anton_home)
        await pilot.press("alt+up", "alt+up", "r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "2 turns leave the conversation" in str(app.screen.question)
        assert "memory they wrote stays" in str(app.screen.question)
        await pilot.press("y")
        await wait_for(pilot, lambda: prompt_text(app) == FIRST, what="the prompt refilled")
        assert user_messages(app) == [] and app.runtime.session.history == []
        assert app.runtime.session.context_reports.by_turn == {}


async def test_the_footer_and_f1_name_the_keys(fake_llm, anton_home) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Paris."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, FIRST)
        await pilot.press("alt+up")
        footer = screen_text(app).splitlines()[-1]
        assert "What it saw" in footer and "Rewind here" in footer and "Done" in footer
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        text = app.screen.query_one("Markdown").source
        assert "What it saw" in text and "Rewind here" in text and "Alt+Up" in text


class TurnContextHost(App[None]):
    """The view of one turn's context over an empty screen, from a fixed report."""

    def on_mount(self) -> None:
        memory = (
            "## Your Memory — Identity\n- Name: Ada\n- Prefers short answers\n"
            "## Your Memory — Global Rules\n- Answer in English\n- Never print API keys\n"
            "## Your Memory — Project Lessons\n- The sales export uses semicolons as separators\n"
            "- Region codes in the 2025 files are lower case; upper-case them before joining with the targets\n"
        )
        skills = "- csv-cleanup: normalise a messy CSV export (headers, separators, encodings)\n"
        report = context_report(3, memory, skills, "- Keep cells short and print summaries\n", 9_400, 3.6,
                                "Plot revenue by region for March and say which region fell behind")  # fmt: skip
        self.push_screen(TurnContextScreen(report, report.user_text))


def test_turn_context_snapshot(snap_compare) -> None:
    assert snap_compare(TurnContextHost(), terminal_size=(120, 40))


def test_turn_context_snapshot_small(snap_compare) -> None:
    assert snap_compare(TurnContextHost(), terminal_size=(80, 24))


async def test_picking_an_old_message_scrolls_it_into_view(fake_llm) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    answer = "\n\n".join(f"Paragraph {n} of a long answer about the regional figures." for n in range(6))
    fake_llm.queue(*[Reply.text(answer) for _ in range(5)], model=PLANNER)
    app = build_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for number in range(5):
            await send_and_wait(pilot, f"Question {number}")
        chat = main_screen(app).chat
        first = chat.user_message_blocks()[0]
        assert not chat.region.contains_region(first.region), "the first question is out of view to begin with"
        await pilot.press("alt+up", *["up"] * 4)
        await pilot.pause()
        assert picked(app) == "Question 0"
        await wait_for(pilot, lambda: chat.region.contains_region(first.region), what="the first question in view")


async def test_a_turn_from_before_a_resume_says_it_was_not_recorded(fake_llm) -> None:
    from anton_tui.runtime import RuntimeStarter
    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.screens.turn_context import NOT_KEPT

    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Paris."), model=PLANNER)
    async with build_app().run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, FIRST)
    app = AntonApp(RuntimeStarter(read_env_layers(), resume=""), cursor_blink=False)  # --continue
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: user_messages(app) == [FIRST], what="the resumed conversation")
        await pilot.press("alt+up", "i")
        await wait_for(pilot, lambda: isinstance(app.screen, TurnContextScreen), what="the turn's context")
        assert app.screen.report is None and NOT_KEPT[:60] in " ".join(screen_text(app).split())
