"""Memory in the full app: files changed by someone else show up live, copilot mode asks after the answer and saves
only what the user keeps, and the /memory commands read and change the real files."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from anton_tui.config import load_settings
from anton_tui.paths import AntonPaths
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.confirm_memory import ConfirmMemoryScreen
from anton_tui.tui.widgets.inspector import InspectorPane

from tests.fakellm import Reply
from tests.tui.e2e_support import (
    CODER,
    PLANNER,
    SIZE,
    answers,
    assert_all_requests_valid,
    build_app,
    command_replies,
    exec_cell,
    main_screen,
    notices,
    project_dir,
    save_global_env,
    started,
    turn_running,
    type_in_prompt,
    wait_for,
    wait_watching,
)
from tests.tui.inspector_fixtures import column, seed_memory


def lessons_column(app) -> list[str]:
    return column(main_screen(app).query_one(InspectorPane).tab("lessons").table, 2)


async def test_lessons_written_by_another_program_show_up_in_the_lessons_tab(fake_llm) -> None:
    save_global_env(fake_llm)
    settings = load_settings()
    app = build_app(watch_files=True)  # the app exactly as `anton-tui` builds it, watchers on
    app.cursor_blink = False
    paths = AntonPaths.from_settings(settings)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_watching(pilot)
        assert lessons_column(app) == []

        lessons = paths.project_memory / "lessons.md"
        with open(lessons, "a", encoding="utf-8") as handle:  # a plain write, as an editor or a script would
            handle.write("# Lessons\n- The sales export uses semicolons <!-- topic:data ts:2026-11-20 -->\n")
        took = await wait_for(pilot, lambda: lessons_column(app) == ["The sales export uses semicolons"],
                              timeout=3, what="the appended lesson in the Lessons tab")  # fmt: skip
        assert took < 3

        other_process = textwrap.dedent(
            f"""
            import os, pathlib
            path = pathlib.Path({str(paths.global_memory / "lessons.md")!r})
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name("lessons.md.tmp")
            tmp.write_text("# Lessons\\n- Retry HTTP 429 after the Retry-After delay <!-- ts:2026-11-21 -->\\n")
            os.replace(tmp, path)
            """
        )
        subprocess.run([sys.executable, "-c", other_process], check=True, timeout=30)
        await wait_for(pilot, lambda: len(lessons_column(app)) == 2, timeout=3,
                       what="the other process's lesson in the Lessons tab")  # fmt: skip
        assert lessons_column(app) == ["Retry HTTP 429 after the Retry-After delay", "The sales export uses semicolons"]
        tabs = main_screen(app).query_one(InspectorPane).query_one("#inspector-tabs")
        await wait_for(pilot, lambda: str(tabs.get_tab("inspector-lessons").label) == "Lessons 2",
                       what="the tab title to count both")  # fmt: skip


LESSON_KEPT = "Check a divisor for zero before dividing values read from data"
LESSON_DROPPED = "Wrap every arithmetic step in its own try block"


async def test_copilot_asks_after_the_answer_and_saves_only_the_checked_memories(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_MEMORY_MODE="copilot")
    fake_llm.queue(
        Reply.tool_call("scratchpad", exec_cell("rows = 0\nprint(10 / rows)", description="average per row")),
        Reply.text("The file has no rows, so there is no average."),
        model=PLANNER,
    )
    report = {"lessons": [{"text": LESSON_KEPT, "topic": "python"}, {"text": LESSON_DROPPED, "topic": "python"}]}
    fake_llm.queue(Reply.tool_call("CerebellumReport", report, delay=0.3), model=CODER)
    app = build_app()
    lessons_file = project_dir() / ".anton" / "memory" / "lessons.md"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "What is the average per row?")
        asked_mid_turn = []

        def modal_open() -> bool:
            is_open = isinstance(app.screen, ConfirmMemoryScreen)
            if is_open and turn_running(app):
                asked_mid_turn.append(True)
            return is_open

        await wait_for(pilot, modal_open, timeout=10, what="the memory confirmation")
        assert not asked_mid_turn, "the question must wait for the end of the turn"
        assert answers(app) == ["The file has no rows, so there is no average."], "the answer came first"
        modal = app.screen
        assert [engram.text for engram in modal.engrams] == [LESSON_KEPT, LESSON_DROPPED]
        assert not lessons_file.exists() or LESSON_KEPT not in lessons_file.read_text(), "nothing saved before asking"

        await pilot.press("down", "space")  # uncheck the second one
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Kept 1 of 2" in text for text in notices(app, "memory")),
                       what="the confirmation notice")  # fmt: skip
        await wait_for(pilot, lambda: any("confirmation" in text and LESSON_KEPT in text for text in notices(app)),
                       what="the memory written notice")  # fmt: skip
        assert app.screen is main_screen(app)
        await wait_for(pilot, lambda: lessons_column(app) == [LESSON_KEPT], what="the kept lesson in the Lessons tab")
    saved = lessons_file.read_text(encoding="utf-8")
    assert LESSON_KEPT in saved and LESSON_DROPPED not in saved
    [review] = fake_llm.requests_for(CODER)
    assert review.tool_choice == {"type": "tool", "name": "CerebellumReport"}
    assert "ZeroDivisionError" in str(review.messages)
    assert_all_requests_valid(fake_llm)


async def test_memory_commands_show_counts_and_delete_a_lesson_after_confirming(fake_llm) -> None:
    save_global_env(fake_llm)
    settings = load_settings()
    paths = AntonPaths.from_settings(settings)
    paths.ensure_workspace()
    seed_memory(paths)
    app = build_app(watch_files=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_watching(pilot)
        await wait_for(pilot, lambda: len(lessons_column(app)) == 4, what="the seeded lessons in the inspector")

        await type_in_prompt(pilot, "/memory")
        await wait_for(pilot, lambda: command_replies(app), what="the dashboard")
        [(line, dashboard)] = command_replies(app)
        assert line == "/memory"
        assert "Memory mode: autopilot" in dashboard
        assert re.findall(r"Rules\s+(\d+)", dashboard) == ["3", "1"]
        assert re.findall(r"Lessons\s+(\d+)", dashboard) == ["1", "3"]
        assert "Total entries: 8" in dashboard

        await type_in_prompt(pilot, "/memory lessons delete 1")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the delete question")
        assert "pandas read_csv" in str(app.screen.question)
        await pilot.press("y")
        await wait_for(pilot, lambda: len(command_replies(app)) == 2, what="the delete reply")
        assert command_replies(app)[1][1].startswith("Deleted lesson 1 (global)")
        global_lessons = (paths.global_memory / "lessons.md").read_text(encoding="utf-8")
        assert "pandas read_csv" not in global_lessons
        assert "CoinGecko" in (paths.project_memory / "lessons.md").read_text(encoding="utf-8"), "the rest is kept"
        await wait_for(pilot, lambda: len(lessons_column(app)) == 3, timeout=3,
                       what="the Lessons tab to drop the deleted lesson")  # fmt: skip
        assert not any("pandas" in text for text in lessons_column(app))

        await type_in_prompt(pilot, "/memory lessons delete 1")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the second question")
        await pilot.press("n")
        await wait_for(pilot, lambda: len(command_replies(app)) == 3, what="the reply to no")
        assert command_replies(app)[2][1].strip() == "Nothing deleted."
    assert len(AntonPaths.from_settings(settings).project_memory.joinpath("lessons.md").read_text().splitlines()) == 4
