"""`@` file mentions and `!` commands in the app: the picker (filtering, .gitignore, inserting, Escape), refused
mentions, live command output, stopping a command with Escape, and what the next turn carries to the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

from textual.widgets import Static

from anton_tui.agent.events import AssistantMessageDone, TurnFinished
from anton_tui.tui.widgets.file_picker import FilePicker
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.shell_block import ShellBlock

from tests.fakellm import Reply

from .app_support import ScriptedSession, make_settings, notifications, scripted_app, screen_text, send, wait_until
from .e2e_support import PLANNER, build_app, notices, save_global_env, send_and_wait, started, user_messages

SIZE = (120, 40)
ANSWERED = [AssistantMessageDone("Done."), TurnFinished(1, "end_turn", "Done.")]


def workspace() -> Path:
    root = Path(os.environ["ANTON_PROJECT_DIR"])
    for path in ("README.md", "src/app.py", "src/apply_rules.py", "src/util.py", "build/app.js", "notes/app.txt"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# {path}\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.txt\n", encoding="utf-8")
    (root / "big.csv").write_bytes(b"a,b\n" * 300_000)  # 1.2 MB: over the cap
    return root


def picker_paths(app) -> list[str]:
    picker = app.screen.query_one(FilePicker)
    if not picker.display:
        return []
    return [picker.get_option_at_index(i).id for i in range(picker.option_count) if picker.get_option_at_index(i).id]


def prompt_text(app) -> str:
    return app.screen.query_one(Prompt).text


async def test_typing_at_opens_a_picker_that_filters_skips_ignored_files_and_inserts_the_path() -> None:
    workspace()
    session = ScriptedSession(ANSWERED)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"look at ", "@")
        await wait_until(pilot, lambda: len(picker_paths(app)) > 3)
        shown = picker_paths(app)
        assert "README.md" in shown and "src/app.py" in shown
        assert not any(path.startswith("build/") or path.endswith(".txt") for path in shown), ".gitignore is obeyed"
        assert "@ files in the workspace" in screen_text(app)

        await pilot.press(*"app")
        await wait_until(pilot, lambda: picker_paths(app)[:1] == ["src/app.py"])
        assert "src/util.py" not in picker_paths(app) and "README.md" not in picker_paths(app)
        await pilot.press(*"ly")
        await wait_until(pilot, lambda: picker_paths(app)[:1] == ["src/apply_rules.py"])
        await pilot.press("enter")
        await pilot.pause()
        assert prompt_text(app) == "look at @src/apply_rules.py "
        assert not app.screen.query_one(FilePicker).display
        assert session.prompts == [], "Enter picked the file; it did not send the message"

        await pilot.press(*"and @uti", "tab")
        await wait_until(pilot, lambda: prompt_text(app).endswith("@src/util.py "))
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(session.prompts) == 1)
    typed, *notes = session.prompts[0].split("\n\n")
    assert typed == "look at @src/apply_rules.py and @src/util.py "
    assert "Read each one in a scratchpad" in notes[0]
    assert "- src/apply_rules.py (" in notes[0] and "- src/util.py (" in notes[0]


async def test_the_picker_says_when_the_workspace_has_more_files_than_it_lists(monkeypatch) -> None:
    from anton_tui.agent import workspace_files

    monkeypatch.setattr(workspace_files, "MAX_FILES", 3)
    workspace()
    app = scripted_app(make_settings(), ScriptedSession(ANSWERED))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("@")
        await wait_until(pilot, lambda: len(picker_paths(app)) == 3)
        assert "too many files: some are not listed" in screen_text(app)


async def test_escape_closes_the_picker_and_keeps_the_text() -> None:
    workspace()
    app = scripted_app(make_settings(), ScriptedSession(ANSWERED))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("@", *"rea")
        await wait_until(pilot, lambda: picker_paths(app)[:1] == ["README.md"])
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query_one(FilePicker).display and prompt_text(app) == "@rea"
        await pilot.press("space", *"/x")
        await pilot.pause()
        assert not app.screen.query_one(FilePicker).display


async def test_a_too_big_or_missing_file_is_refused_with_a_line_in_the_chat() -> None:
    workspace()
    session = ScriptedSession(ANSWERED)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "summarise @big.csv and @gone.md")
        await wait_until(pilot, lambda: len(notices(app, "mention")) == 2 and bool(session.prompts))
        big, gone = notices(app, "mention")
        assert big.startswith("@big.csv: 1.1 MB is over the 1.0 MB limit for mentioned files; not passed to Anton")
        assert gone == "@gone.md: no such file in the workspace; not passed to Anton."
        assert "1.0 MB limit" in screen_text(app)
    assert session.prompts == ["summarise @big.csv and @gone.md"], "nothing is asked to be read"


async def test_a_bang_command_streams_its_output_live_and_shows_the_exit_code() -> None:
    root = workspace()
    app = scripted_app(make_settings(), ScriptedSession(ANSWERED))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!ls src; sleep 1.5; echo finished; exit 4")
        await wait_until(pilot, lambda: bool(app.screen.query(ShellBlock)))
        block = app.screen.query_one(ShellBlock)
        await wait_until(pilot, lambda: "util.py" in block.output)
        assert block.running, "the first lines show while the command still runs"
        assert "app.py" in screen_text(app) and "running…" in screen_text(app)
        await wait_until(pilot, lambda: not block.running)
        assert "finished" in block.output and "exit 4" in block.status_text
        assert prompt_text(app) == ""
    assert (root / "src").is_dir()


async def test_escape_stops_a_long_command_and_its_process_group() -> None:
    workspace()
    app = scripted_app(make_settings(), ScriptedSession(ANSWERED))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!echo $$; sleep 30")
        await wait_until(pilot, lambda: bool(app.screen.query(ShellBlock)) and app.screen.query_one(ShellBlock).output)
        block = app.screen.query_one(ShellBlock)
        pid = int(block.output.strip())
        await pilot.press("escape")
        await wait_until(pilot, lambda: not block.running, timeout=4)
        assert "stopped" in block.status_text
        await wait_until(pilot, lambda: not Path(f"/proc/{pid}").exists() or
                         Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z", timeout=3)  # fmt: skip


async def test_a_command_that_cannot_start_says_why_once_and_the_prompt_takes_the_next_one(tmp_path) -> None:
    app = scripted_app(make_settings(project_dir=tmp_path / "gone"), ScriptedSession(ANSWERED))  # no such folder
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!echo hello")
        await wait_until(pilot, lambda: bool(app.screen.query(ShellBlock)) and not app.screen.query_one(ShellBlock).running)
        failures = lambda: [note for note in notifications(app) if "FileNotFoundError" in note]  # noqa: E731
        await wait_until(pilot, lambda: bool(failures()))
        await pilot.pause(0.2)
        assert len(failures()) == 1, "the failure is told once"
        assert "stopped" in app.screen.query_one(ShellBlock).status_text
        assert not app.screen.busy, "Escape has no command to stop, and messages are taken again"
        await send(pilot, "!echo again")
        await wait_until(pilot, lambda: len(app.screen.query(ShellBlock)) == 2 and len(failures()) == 2)


async def test_a_lone_bang_runs_nothing_and_slash_commands_are_not_commands_of_the_shell() -> None:
    workspace()
    session = ScriptedSession(ANSWERED)
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!")
        await pilot.pause()
        assert not app.screen.query(ShellBlock) and session.prompts == []
        assert any("Type a command after !" in note for note in notifications(app))
        assert prompt_text(app) == "!", "the text stays to be completed"
        app.screen.query_one(Prompt).clear()
        await send(pilot, "/help !ls")
        await pilot.pause(0.3)
        assert not app.screen.query(ShellBlock) and session.prompts == []


async def test_the_next_turn_tells_the_model_the_command_and_its_output(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("It printed a greeting."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send(pilot, "!echo hello-from-shell; echo and-more")
        block = await _finished_block(pilot)
        assert "hello-from-shell" in block.output
        await send_and_wait(pilot, "what did it print?")
        assert user_messages(app) == ["what did it print?"], "the chat shows what was typed"
        session = app.runtime.session
        saved = json.loads(session.history_store.history_path(session.session_id).read_text(encoding="utf-8"))
        history = app.runtime.transcript()
    [request] = fake_llm.requests_for(PLANNER)
    content = request.messages[-1]["content"]
    assert content[0] == {"type": "text", "text": "what did it print?"}
    note = content[1]["text"]
    assert "exit code 0" in note and "$ echo hello-from-shell; echo and-more\nhello-from-shell\nand-more" in note
    assert saved[0]["content"] == content, "the saved history holds the same message"
    assert history[0].text == "what did it print?", "a resumed conversation shows the typed text"


async def _finished_block(pilot) -> ShellBlock:
    app = pilot.app
    await wait_until(pilot, lambda: bool(app.screen.query(ShellBlock)) and not app.screen.query_one(ShellBlock).running)
    return app.screen.query_one(ShellBlock)
