"""The Runtime's `@` and `!` operations: what a turn carries, what a new conversation forgets, a stopped command."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from anton_tui.agent.mentions import MentionRefused
from anton_tui.agent.shell import ShellOutput
from anton_tui.runtime import Runtime

from .runtime_sessions import QuietSession


class NotedSession(QuietSession):
    """Takes notes like the real session; records each turn's text and notes."""

    def __init__(self) -> None:
        super().__init__()
        self.turns: list[tuple[str, tuple[str, ...]]] = []

    async def turn(self, user_text: str, notes=()):
        self.turns.append((user_text, tuple(notes)))
        yield "answered"


def runtime() -> tuple[Runtime, NotedSession]:
    session = NotedSession()
    settings = SimpleNamespace(project_dir=Path(os.environ["ANTON_PROJECT_DIR"]), home=Path(os.environ["ANTON_HOME"]))
    return Runtime(settings, session), session


async def test_a_turn_carries_the_mentioned_files_and_the_commands_run_before_it_once() -> None:
    rt, session = runtime()
    (rt.workspace.folder / "notes.md").write_text("# notes\n", encoding="utf-8")
    [event async for event in rt.run_shell("echo from-the-shell")]

    events = [event async for event in rt.turn("see @notes.md and @nope.md")]

    assert events[0] == MentionRefused("nope.md", "no such file in the workspace; not passed to Anton.")
    assert events[1:] == ["answered"]
    text, notes = session.turns[0]
    assert text == "see @notes.md and @nope.md"
    assert "- notes.md (8 bytes)" in notes[0] and "nope.md" not in notes[0]
    assert "$ echo from-the-shell\nfrom-the-shell" in notes[1] and "exit code 0" in notes[1]
    [_ async for _ in rt.turn("again")]
    assert session.turns[1] == ("again", ()), "a command is passed on once"


async def test_a_stopped_command_is_passed_on_as_stopped_and_a_new_conversation_forgets_commands() -> None:
    rt, session = runtime()
    events = rt.run_shell("echo started; sleep 30")
    async for event in events:
        if isinstance(event, ShellOutput):
            break
    await events.aclose()
    [record] = rt.workspace.held_commands
    assert record.cancelled and record.output == "started\n"
    rt.new_conversation()
    [_ async for _ in rt.turn("hello")]
    assert session.turns == [("hello", ())]


async def test_the_runtime_lists_and_ranks_the_workspace_files() -> None:
    rt, _ = runtime()
    for name in ("alpha.py", "beta.py", "ignored.log"):
        (rt.workspace.folder / name).write_text("x", encoding="utf-8")
    (rt.workspace.folder / ".gitignore").write_text("*.log\n", encoding="utf-8")
    assert (await rt.workspace.files()).files == (".gitignore", "alpha.py", "beta.py")
    assert (await rt.match_files("bet"))[0] == "beta.py"
