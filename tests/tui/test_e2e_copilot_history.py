"""A lesson kept in copilot mode, after /setup switched to it, is in the memory history with the learner that
proposed it and the user's confirmation, never as a change made outside the app (the file watcher running)."""

from __future__ import annotations

import pytest

from anton_tui.tui.screens.confirm_memory import ConfirmMemoryScreen

from tests.fakellm import Reply
from tests.tui.e2e_support import (
    CODER,
    PLANNER,
    SIZE,
    build_app,
    exec_cell,
    notices,
    project_dir,
    save_global_env,
    started,
    type_in_prompt,
    wait_for,
    wait_turn_done,
    wait_watching,
)

LESSON = "Check a divisor for zero before dividing values read from data"


@pytest.mark.parametrize("learner_delay", [0.0, 0.5], ids=["asked-at-the-turns-end", "asked-between-turns"])
async def test_a_lesson_kept_after_switching_to_copilot_is_recorded_with_its_producer(fake_llm, learner_delay) -> None:
    save_global_env(fake_llm)  # autopilot, as a new home starts
    fake_llm.queue(
        Reply.tool_call("scratchpad", exec_cell("rows = 0\nprint(10 / rows)", description="average per row")),
        Reply.text("The file has no rows, so there is no average."),
        model=PLANNER,
    )
    fake_llm.queue(Reply.tool_call("CerebellumReport", {"lessons": [{"text": LESSON, "topic": "python"}]},
                                   delay=learner_delay),
                   model=CODER)  # fmt: skip
    app = build_app(watch_files=True)
    lessons_file = project_dir() / ".anton" / "memory" / "lessons.md"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_watching(pilot)
        runtime = app.runtime
        assert runtime is not None
        settings = await runtime.save_settings({"ANTON_MEMORY_MODE": "copilot"})  # what /setup saves, then applies
        app.apply_settings(settings)
        await wait_for(pilot, lambda: runtime.settings.memory_mode == "copilot", what="copilot mode in force")

        await type_in_prompt(pilot, "What is the average per row?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmMemoryScreen), timeout=10,
                       what="the memory confirmation")  # fmt: skip
        await pilot.press("enter")  # keep the checked lesson
        await wait_for(pilot, lambda: any("confirmation" in text and LESSON in text for text in notices(app)),
                       what="the memory written notice")  # fmt: skip
        await wait_turn_done(pilot)
        assert LESSON in lessons_file.read_text(encoding="utf-8")
        await pilot.pause(0.5)  # the watcher has seen the write and had its say
        await runtime.history.record_external("project")
        changes = await runtime.history.log("project")

    lesson_changes = [change for change in changes if "lessons.md" in change.files]
    assert [change.producer for change in lesson_changes] == ["confirmation"], changes
    [kept] = lesson_changes
    assert "kept by the user" in kept.why and "proposed by cerebellum" in kept.why, kept.why
    assert all(change.producer != "external" for change in changes), changes
