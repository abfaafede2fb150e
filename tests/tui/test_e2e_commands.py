"""Slash commands and the command palette in the full app: themes, unknown commands, /clear, palette entries."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

from anton_tui.config import load_settings

from tests.fakellm import Reply
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    accepted_requests,
    build_app,
    command_replies,
    main_screen,
    notifications,
    project_dir,
    prompt_text,
    save_global_env,
    screen_text,
    send_and_wait,
    started,
    type_in_prompt,
    user_messages,
    wait_for,
)


async def test_theme_switches_and_is_saved_in_the_project_env(fake_llm) -> None:
    save_global_env(fake_llm)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.theme == "anton-dark"
        await type_in_prompt(pilot, "/theme anton-light")
        await wait_for(pilot, lambda: app.theme == "anton-light", what="the light theme")
        await wait_for(pilot, lambda: command_replies(app), what="the reply")
        assert command_replies(app)[0][1].strip() == "Theme: anton-light"
    env = (project_dir() / ".anton" / ".env").read_text(encoding="utf-8")
    assert "ANTON_THEME=anton-light" in env.splitlines()
    assert load_settings().theme == "anton-light", "the next start uses it"


async def test_an_unknown_command_is_reported_and_stays_in_the_prompt(fake_llm) -> None:
    save_global_env(fake_llm)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/memroy rules")
        await wait_for(pilot, lambda: any("Unknown command" in note for note in notifications(app)),
                       what="the warning")  # fmt: skip
        [warning] = [note for note in notifications(app) if "Unknown command" in note]
        assert "/memroy" in warning and "/memory" in warning, "it names the closest command"
        assert prompt_text(app) == "/memroy rules", "the line is kept to be corrected"
        assert command_replies(app) == [] and user_messages(app) == []
    assert fake_llm.requests == [], "nothing was sent to the model"


async def test_clear_empties_the_chat_and_the_conversation(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("The first answer."), Reply.text("A fresh start."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send_and_wait(pilot, "First question")
        assert len(app.runtime.session.history) == 2
        await type_in_prompt(pilot, "/clear")
        await wait_for(pilot, lambda: not main_screen(app).chat.blocks, what="an empty chat")
        assert app.runtime.session.history == []
        assert "The first answer." not in screen_text(app)
        await send_and_wait(pilot, "Second question")
    [_, second] = accepted_requests(fake_llm, PLANNER)
    assert second.messages == [{"role": "user", "content": "Second question"}], "the earlier turn was forgotten"


def palette_entries(app) -> list[str]:
    options = app.screen.query_one(CommandList)
    return [str(options.get_option_at_index(i).hit.text) for i in range(options.option_count)]


async def open_palette(pilot, query: str = "") -> None:
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
    if query:
        await pilot.press(*query)
    await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count > 0, what="palette entries")


async def choose_first_entry(pilot) -> None:
    """Enter highlights the best match when nothing is highlighted yet; Enter on a highlighted entry runs it."""
    options = pilot.app.screen.query_one(CommandList)
    if options.highlighted is None:
        await pilot.press("enter")
    await wait_for(pilot, lambda: options.highlighted == 0, what="the best match highlighted")
    await pilot.press("enter")


async def test_the_palette_lists_commands_and_pane_toggles_and_runs_them(fake_llm) -> None:
    save_global_env(fake_llm)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = main_screen(app)
        await open_palette(pilot)
        listed = palette_entries(app)
        for entry in ("/memory", "/memory lessons", "/skill list", "/setup", "/clear",
                      "Scratchpad pane", "Memory inspector pane"):  # fmt: skip
            assert entry in listed, f"{entry} is not in the palette"

        await pilot.press("escape")
        await open_palette(pilot, "scratchpad pane")
        await wait_for(pilot, lambda: palette_entries(app)[0] == "Scratchpad pane",
                       what="the toggle as the best match")  # fmt: skip
        await choose_first_entry(pilot)
        await wait_for(pilot, lambda: not screen.scratchpad.display, what="the scratchpad pane to hide")
        assert app.screen is screen and screen.inspector.display

        await open_palette(pilot, "/memory")
        await wait_for(pilot, lambda: palette_entries(app)[0] == "/memory", what="/memory as the best match")
        await choose_first_entry(pilot)
        await wait_for(pilot, lambda: command_replies(app), what="the dashboard in the chat")
        [(line, reply)] = command_replies(app)
        assert line == "/memory" and "Memory mode: autopilot" in reply
