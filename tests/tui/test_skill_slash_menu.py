"""A skill marked `user-invocable: true` shows up in the prompt's `/` menu with its description; choosing it and
pressing Enter sends a turn that recalls it with the arguments."""

from __future__ import annotations

import os
from pathlib import Path

from anton_tui.agent.events import TurnFinished
from anton_tui.tui.widgets.prompt import CommandMenu, Prompt

from .app_support import ScriptedSession, make_settings, scripted_app, wait_until

SIZE = (110, 34)


def make_skill(label: str, description: str, extra: str = "") -> None:
    folder = Path(os.environ["ANTON_HOME"]) / "skills" / label
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {label}\ndescription: {description}\n{extra}---\n1. Collect.\n")


def menu_entries(menu: CommandMenu) -> list[str]:
    return [str(menu.get_option_at_index(i).id) for i in range(menu.option_count)]


async def test_a_user_invocable_skill_is_in_the_slash_menu_and_runs_with_its_arguments() -> None:
    make_skill("weekly-report", "Write the weekly report", "user-invocable: true\n")
    make_skill("wrangle-csv", "Not a command")
    session = ScriptedSession([TurnFinished(turn=1, text="Done.", stop_reason="end_turn")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        menu = app.screen.query_one(CommandMenu)
        prompt.focus()
        await pilot.press("slash")
        await wait_until(pilot, lambda: "weekly-report" in menu_entries(menu))
        await pilot.press("w")
        assert menu_entries(menu) == ["weekly-report"], "only the user-invocable skill is a command"
        assert "Skill: Write the weekly report" in str(menu.get_option_at_index(0).prompt)
        await pilot.press("tab")
        assert prompt.text == "/weekly-report "
        await pilot.press(*"for March", "enter")
        await wait_until(pilot, lambda: session.prompts)
    [sent] = session.prompts
    assert "call recall_skill with the label `weekly-report`" in sent and sent.endswith("Arguments: for March")
