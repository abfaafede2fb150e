"""Skills in the full app: the editor opened with /skill edit saves with Ctrl+S, and /skill save drafts a skill with
the model that shows up in the open skills screen and the inspector without a restart."""

from __future__ import annotations

import pytest

from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.tui.screens.skills import SkillsScreen
from anton_tui.tui.widgets.inspector import InspectorPane

from tests.fakellm import Reply
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    build_app,
    command_replies,
    home_dir,
    main_screen,
    notifications,
    save_global_env,
    send_and_wait,
    started,
    type_in_prompt,
    wait_for,
    wait_watching,
)


PROCEDURE = "1. Load the CSV with the csv module\n2. Sum each numeric column"
DRAFT = {
    "label": "monthly_revenue",
    "name": "Monthly revenue",
    "description": "Sum revenue per month and region from a sales CSV.",
    "when_to_use": "the user wants revenue totals per month or region from a CSV export",
    "declarative_md": "1. Read the CSV\n2. Group by month and region\n3. Print a table with thousands separators",
}


def seed_skill() -> SkillStore:
    store = SkillStore(home_dir() / "skills")
    store.save(Skill(label="csv_summary", name="CSV Summary", when_to_use="the user hands over a CSV",
                     declarative_md=PROCEDURE))  # fmt: skip
    return store


def tree_labels(screen: SkillsScreen) -> list[str]:
    return [node.data.label for node in screen.skill_tree.root.children if node.data is not None]


async def test_skill_edit_opens_the_editor_and_ctrl_s_writes_the_procedure(fake_llm) -> None:
    save_global_env(fake_llm)
    store = seed_skill()
    app = build_app(watch_files=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/skill edit")
        await wait_for(pilot, lambda: isinstance(app.screen, SkillsScreen), what="the skills screen")
        screen = app.screen
        assert tree_labels(screen) == ["csv-summary"]
        await pilot.press("enter")  # the skill under the cursor opens its procedure
        await wait_for(pilot, lambda: screen.open_ref is not None, what="the procedure to open")
        assert screen.editor.text == PROCEDURE
        screen.editor.focus()
        screen.editor.move_cursor(screen.editor.document.end)
        await pilot.press("enter", *"3. Print the totals")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Saved csv-summary/SKILL.md" in notifications(app),
                       what="the save notification")  # fmt: skip
        await pilot.press("escape", "escape")  # leave the editor, then the screen: nothing unsaved, so no question
        await wait_for(pilot, lambda: app.screen is main_screen(app), what="back to the chat")
    saved = (store.root / "csv-summary" / "SKILL.md").read_text(encoding="utf-8")
    assert saved.endswith("\n---\n" + PROCEDURE + "\n3. Print the totals")
    assert store.load("csv-summary").declarative_md == PROCEDURE + "\n3. Print the totals"


async def test_after_ctrl_s_the_file_line_no_longer_says_modified(fake_llm) -> None:
    save_global_env(fake_llm)
    seed_skill()
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/skill edit")
        await wait_for(pilot, lambda: isinstance(app.screen, SkillsScreen), what="the skills screen")
        screen = app.screen
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.open_ref is not None, what="the procedure to open")
        screen.editor.focus()
        screen.editor.move_cursor(screen.editor.document.end)
        await pilot.press("enter", *"3. Print the totals")
        info = screen.query_one("#skills-file-info")
        assert "modified" in str(info.render())
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Saved csv-summary/SKILL.md" in notifications(app), what="the save")
        assert "modified" not in str(info.render())


async def test_skill_save_from_the_chat_appears_in_the_open_skills_screen_and_the_inspector(fake_llm) -> None:
    save_global_env(fake_llm)
    seed_skill()
    fake_llm.queue(Reply.text("Revenue per region: North 12,400, South 9,800."), model=PLANNER)
    fake_llm.queue(Reply.tool_call("SkillDraft", DRAFT, delay=1.5), model=PLANNER)
    approval = {"approve": True, "reason": "A clear procedure for a task that recurs."}
    fake_llm.queue(Reply.tool_call("ReviewVerdict", approval), model=PLANNER)  # the AI reviewer (ANTON_REVIEW_LEVEL=ai)
    app = build_app(watch_files=True)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_watching(pilot)
        await send_and_wait(pilot, "Sum revenue per region in sales.csv")
        inspector = main_screen(app).query_one(InspectorPane)
        skills_tab = inspector.tab("skills")
        await wait_for(pilot, lambda: skills_tab.table.row_count == 4, what="the seeded skill and the 3 built-in ones in the Skills tab")

        await type_in_prompt(pilot, "/skill save monthly revenue")
        await type_in_prompt(pilot, "/skill edit")  # opened while the model is still drafting
        await wait_for(pilot, lambda: isinstance(app.screen, SkillsScreen), what="the skills screen")
        screen = app.screen
        await wait_for(pilot, lambda: tree_labels(screen), what="the skills listed in the tree")
        assert tree_labels(screen) == ["csv-summary"], "the draft is not saved yet"

        await wait_for(pilot, lambda: "monthly-revenue" in tree_labels(screen), timeout=6,
                       what="the new skill in the open skills screen")  # fmt: skip
        assert tree_labels(screen) == ["csv-summary", "monthly-revenue"]
        assert "2 saved" in str(screen.query_one("#skills-title").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is main_screen(app), what="back to the chat")

        await wait_for(pilot, lambda: skills_tab.table.row_count == 5, what="the new skill in the Skills tab")
        replies = dict(command_replies(app))
        assert "Saved skill monthly-revenue" in replies["/skill save monthly revenue"]
    draft_request, review_request = [r for r in fake_llm.requests_for(PLANNER) if r.tool_choice]
    assert draft_request.tool_choice == {"type": "tool", "name": "SkillDraft"}
    assert review_request.tool_choice == {"type": "tool", "name": "ReviewVerdict"}
    assert "+++ monthly-revenue/SKILL.md (proposed)" in str(review_request.messages)
    assert "Sum revenue per region" in str(draft_request.messages) and "monthly revenue" in str(draft_request.messages)
    saved = SkillStore(home_dir() / "skills").load("monthly-revenue")
    assert saved is not None and saved.format == "skill_md" and DRAFT["when_to_use"] in saved.cue
