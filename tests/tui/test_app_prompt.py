"""The prompt: Enter sends, Ctrl+J adds a line, Up/Down walk the history, `/` lists the commands."""

from __future__ import annotations

import pytest

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, TurnFinished
from anton_tui.tui.app import AntonApp
from anton_tui.tui.command_registry import SlashCommand
from anton_tui.tui.widgets.chat import CommandReply
from anton_tui.tui.widgets.prompt import CommandMenu, Prompt

from .app_support import Pause, ScriptedSession, scripted_app, make_settings, notifications, screen_text, wait_until

SIZE = (120, 40)
REPLY = [AssistantTextDelta("ok"), AssistantMessageDone("ok"), TurnFinished(1, "end_turn", "ok")]


async def test_enter_sends_and_clears_the_prompt() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await pilot.press(*"hello there", "enter")
        await app.workers.wait_for_complete()
        assert session.prompts == ["hello there"]
        assert prompt.text == ""


async def test_ctrl_j_and_shift_enter_insert_newlines_instead_of_sending() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        assert prompt.text == "a\nb\nc"
        assert session.prompts == []
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert session.prompts == ["a\nb\nc"]


async def test_blank_prompt_is_not_sent() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "ctrl+j", "enter")
        await pilot.pause()
        assert session.prompts == []


async def test_up_and_down_walk_through_sent_messages_and_back_to_the_draft() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        for text in ("first", "second\nwith two lines"):
            prompt.load_text(text)
            await pilot.press("enter")
            await app.workers.wait_for_complete()
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.text == "second\nwith two lines"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("up")
        assert prompt.text == "first", "the oldest message stays"
        await pilot.press("down")
        assert prompt.text == "second\nwith two lines"
        assert prompt.cursor_location == prompt.document.end
        await pilot.press("down")
        assert prompt.text == "draft"


async def test_up_moves_the_cursor_inside_a_multi_line_message_before_recalling() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await pilot.press(*"old", "enter")
        await app.workers.wait_for_complete()
        await pilot.press("x", "ctrl+j", "y")
        await pilot.press("up")
        assert prompt.text == "x\ny"
        assert prompt.cursor_location[0] == 0
        await pilot.press("up")
        assert prompt.text == "old"


async def test_a_message_typed_while_a_turn_runs_is_kept_not_sent() -> None:
    pause = Pause()
    session = ScriptedSession([pause, *REPLY])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await pilot.press(*"one", "enter")
        await wait_until(pilot, pause.reached.is_set)
        await pilot.press(*"two", "enter")
        await pilot.pause()
        assert session.prompts == ["one"]
        assert prompt.text == "two"
        pause.gate.set()
        await app.workers.wait_for_complete()


async def test_slash_lists_matching_commands_and_tab_completes() -> None:
    commands = [
        SlashCommand("help", "Show the help screen", "app.help"),
        SlashCommand("history", "Search past conversations"),
        SlashCommand("quit", "Leave", "app.quit"),
    ]
    app = scripted_app(make_settings(), ScriptedSession(REPLY), commands=commands)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        menu = app.screen.query_one(CommandMenu)
        assert not menu.display
        await pilot.press("slash")
        assert menu.display and menu.option_count == 3
        await pilot.press("h")
        assert [menu.get_option_at_index(i).id for i in range(menu.option_count)] == ["help", "history"]
        assert "Search past conversations" in screen_text(app)
        await pilot.press("down", "tab")
        assert prompt.text == "/history "
        assert not menu.display


async def test_enter_on_a_chosen_command_completes_it_and_enter_again_runs_it() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", "h", "e", "down")  # picked from the list
        await pilot.press("enter")
        assert app.screen.query_one(Prompt).text == "/help "
        await pilot.press("enter")  # runs it: the command list appears in the chat
        await wait_until(pilot, lambda: bool(app.screen.query(CommandReply)))
        reply = app.screen.query_one(CommandReply)
        assert "/help" in screen_text(app) and "/exit" in screen_text(app)
        assert "/skill save" in reply.output.plain() and "/memory vacuum" in reply.output.plain()
        assert app.screen.query_one(Prompt).text == ""
        assert session.prompts == [], "commands are not sent to the model"


@pytest.mark.parametrize(("typed", "shown"), [("skill", "CSV Summary"), ("memory", "Memory mode")])
async def test_enter_on_an_exact_command_runs_it_as_typed(typed: str, shown: str) -> None:
    settings = make_settings()
    skill = settings.home / "skills" / "csv_summary"
    skill.mkdir(parents=True)
    (skill / "meta.json").write_text('{"label": "csv_summary", "name": "CSV Summary", "when_to_use": "csv"}')
    (skill / "declarative.md").write_text("1. Load it\n")
    session = ScriptedSession(REPLY)
    app = scripted_app(settings, session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *typed, "enter")  # no pause: Enter right after the last letter
        await wait_until(pilot, lambda: bool(app.screen.query(CommandReply)))
        reply = app.screen.query_one(CommandReply)
        assert reply.line == f"/{typed}"
        assert shown in reply.output.plain(200)
        assert app.screen.query_one(Prompt).text == ""


async def test_enter_never_rewrites_a_typed_prefix() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", "h", "e", "enter")
        await pilot.pause()
        assert app.screen.query_one(Prompt).text == "/he"
        assert any("Did you mean /help?" in message for message in notifications(app))
        assert not app.screen.query(CommandReply)


async def test_unknown_command_is_reported_and_kept_in_the_prompt() -> None:
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"frobnicate", "space", "x", "enter")
        await pilot.pause()
        assert session.prompts == []
        assert app.screen.query_one(Prompt).text == "/frobnicate x"
        assert any("Unknown command: /frobnicate" in message for message in notifications(app))


async def test_escape_closes_the_command_list_first() -> None:
    app = scripted_app(make_settings(), ScriptedSession(REPLY))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        menu = app.screen.query_one(CommandMenu)
        assert menu.display
        await pilot.press("escape")
        assert not menu.display
        assert app.screen.query_one(Prompt).text == "/"


def editor_script(tmp_path, body: str):
    script = tmp_path / "editor.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


async def test_ctrl_g_edits_the_message_in_the_users_editor(tmp_path, monkeypatch) -> None:
    seen = tmp_path / "seen.txt"
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, f'cp "$1" {seen}\nprintf "%s and more\\n" "$(cat "$1")" > "$1"\n'))
    session = ScriptedSession(REPLY)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"a draft", "ctrl+g")
        await pilot.pause()
        prompt = app.screen.query_one(Prompt)
        assert seen.read_text() == "a draft", "the editor got the message"
        assert prompt.text == "a draft and more"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert session.prompts == ["a draft and more"]
    assert not list(tmp_path.glob("anton-prompt-*")), "nothing is left in the folder"


async def test_a_failing_editor_or_none_leaves_the_message_and_says_why(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = scripted_app(make_settings(), ScriptedSession(REPLY))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"keep me", "ctrl+g")
        await pilot.pause()
        assert app.screen.query_one(Prompt).text == "keep me"
        assert any("$VISUAL or $EDITOR" in message for message in notifications(app))
        monkeypatch.setenv("VISUAL", editor_script(tmp_path, 'echo gone > "$1"\nexit 3\n'))
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.screen.query_one(Prompt).text == "keep me"
        assert any("exited with status 3" in message for message in notifications(app))


async def test_a_prefilled_prompt_wraps_anew_when_the_side_column_takes_width() -> None:
    text = "Summarise monthly revenue by region from a small sample sales file."
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        prompt = app.screen.query_one(Prompt)
        prompt.load_text(text)
        prompt.select_all()
        await pilot.pause()
        app.screen.query_one("#side").styles.min_width = 70  # what fitting the inspector's tabs does
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app).splitlines()
        top = max(n for n, line in enumerate(lines) if "╭" in line)
        shown = " ".join(line.split("│")[1].strip() for line in lines[top + 1 :] if line.count("│") >= 2 and "╰" not in line)
        assert shown.split() == text.split(), "every word once, none cut off"
