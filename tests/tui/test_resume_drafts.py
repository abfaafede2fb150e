"""A resumed conversation is on screen at once: its answers are drawn as plain text in the first frame that shows
them (no Markdown parsed before it), then turned into the rendered answers one at a time, newest first, so that the
chat ends up exactly as it looked when they were rendered at once. Copy and find work on an answer still drawn as
text, a tool call's code is highlighted once opened, and with `--resume` the engine is built only after that first
frame."""

from __future__ import annotations

import threading
from typing import Any

from textual.content import Content

from anton_tui.agent.conversations import TranscriptEntry
from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.textual_internals import FrameHook
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.chat import ChatView
from anton_tui.tui.widgets.find_bar import FindBar
from anton_tui.tui.widgets.tool_block import ToolCallBlock

from .app_support import ScriptedSession, make_settings, scripted_app, wait_until
from .screen_reader import screen_runs, screen_text

SIZE = (100, 40)
HEADING = "Resumed conversation 20261125_090000: 2 turns, from its saved file."
ANSWER = "## Plan\n\nFirst **load** the file.\n\n```python\nprint(42)\n```\n\nThen `sum` the column."
LAST = "Plain words end it."
CODE = "total = 42 * 2\nprint(total)"
ENTRIES = [
    TranscriptEntry("user", "How do I start?", 0),
    TranscriptEntry("answer", ANSWER, 1),
    TranscriptEntry("tool", "84", 2, tool="scratchpad", input={"action": "exec", "name": "main", "code": CODE}),
    TranscriptEntry("user", "And then?", 3),
    TranscriptEntry("answer", LAST, 4),
]


class Watched(FrameHook, AntonApp):
    """Reads the screen of the first frame that shows the conversation's last answer."""

    first_frame: str | None = None
    markdown_in_first_frame: bool | None = None

    def frame_written(self, screen: Any, update: Any) -> None:
        if self.first_frame is None and LAST in (text := screen_text(self)):
            self.first_frame = text
            self.markdown_in_first_frame = any(markdown.display for markdown in screen.query("ChatView Markdown"))


def answer_parts(chat: ChatView) -> list[AssistantMessage]:
    return list(chat.query_children(AssistantMessage))


def settled(chat: ChatView) -> bool:
    """Every answer is rendered, with all its blocks."""
    parts = answer_parts(chat)
    return bool(parts) and all(
        (markdown := part.markdown) is not None and markdown.is_mounted and markdown.children for part in parts
    )


async def rendered_at_once(chat: ChatView) -> None:
    """The same conversation with its answers mounted as rendered Markdown straight away (how a resume drew it
    before answers started as text)."""
    from anton_tui.tui.widgets.chat import Notice, UserMessage

    tool = ToolCallBlock("resumed-2", "scratchpad", ENTRIES[2].input)
    tool.finish(success=True, duration=0.0, result="84")
    answers = [AssistantMessage(ANSWER, ended=True), AssistantMessage(LAST, ended=True)]
    blocks = [Notice(Content(HEADING), "info"), UserMessage("How do I start?"), answers[0], tool,
              UserMessage("And then?"), answers[1]]  # fmt: skip
    await chat.mount_all(blocks)


async def test_resumed_answers_are_text_in_the_first_frame_and_end_up_as_they_looked_when_rendered_at_once() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), app_class=Watched, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.show_entries(HEADING, ENTRIES)
        await wait_until(pilot, lambda: app.first_frame is not None)
        assert app.markdown_in_first_frame is False, "the answers are drawn as text first"
        for words in ("How do I start?", "Plan", "First **load** the file.", "print(42)", "And then?", LAST):
            assert words in app.first_frame, f"{words!r} is not in the first frame"

        await wait_until(pilot, lambda: settled(chat), timeout=10)
        await pilot.pause()
        resumed = screen_runs(app)
        assert "## Plan" not in screen_text(app) and "**" not in screen_text(app), "the answers are rendered now"

        await chat.clear()
        await rendered_at_once(chat)
        await wait_until(pilot, lambda: settled(chat), timeout=10)
        # the same look: every run of text, its place and its colour
        await wait_until(pilot, lambda: screen_runs(app) == resumed, timeout=5)


async def test_copy_and_find_work_on_an_answer_still_drawn_as_text_which_then_keeps_its_highlight() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.show_entries(HEADING, ENTRIES)
        first, last = answer_parts(chat)
        assert not chat.query("Markdown"), "the answers are still drawn as text"
        chat.action_copy_answer()
        assert app.clipboard == LAST
        bar = app.screen.query_one(FindBar)
        bar.entries = ENTRIES
        bar.search("load")
        assert [match.block for match in bar.matches] == [first] and first.has_class("-find-current")

        await wait_until(pilot, lambda: settled(chat), timeout=10)
        assert first.has_class("-find-current"), "the found answer is still the one highlighted once rendered"
        assert first.source == ANSWER and last.source == LAST


async def test_a_resumed_tool_calls_code_is_highlighted_when_opened() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.show_entries(HEADING, ENTRIES)
        block = chat.query_one(ToolCallBlock)
        block.collapsed = False
        await wait_until(pilot, lambda: "print(total)" in screen_text(app))
        [row] = [number for number, line in enumerate(screen_text(app).splitlines()) if "print(total)" in line]
        colours = {run.colour for run in screen_runs(app) if run.row == row and run.text.strip()}
        assert len(colours) > 1, "the code is coloured by its syntax"


async def test_with_resume_the_engine_is_built_after_the_frame_that_shows_the_conversation(fake_llm) -> None:
    from .e2e_support import notices, project_dir, save_global_env, started, wait_for

    import json

    save_global_env(fake_llm)
    episodes = project_dir() / ".anton" / "episodes"
    episodes.mkdir(parents=True)
    history = [{"role": "user", "content": "How do I start?"}, {"role": "assistant", "content": ANSWER}]
    (episodes / "20261125_090000_history.json").write_text(json.dumps(history))

    class Painted(FrameHook, AntonApp):
        shown_at_build: bool | None = None
        conversation_painted = threading.Event()  # a frame was painted with the conversation's heading in the chat

        def frame_written(self, screen: Any, update: Any) -> None:
            chats = screen.query(ChatView)
            heading = chats.first().heading if chats else None
            if heading is not None and heading.is_attached:
                self.conversation_painted.set()

    class Recording(RuntimeStarter):
        def build(self) -> Any:
            Painted.shown_at_build = Painted.conversation_painted.is_set()
            return super().build()

    app = Painted(Recording(read_env_layers(), resume="20261125_090000"), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
        assert Painted.shown_at_build is True, "the conversation was painted before the engine's build began"
        await wait_until(pilot, lambda: settled(app.screen.query_one(ChatView)), timeout=10)
        assert "## Plan" not in screen_text(app)


async def test_a_conversation_read_before_the_screen_has_its_widgets_is_still_shown_before_the_engine(
    fake_llm, monkeypatch
) -> None:
    import asyncio
    import json

    from anton_tui.tui.screens.main import MainScreen

    from .e2e_support import notices, project_dir, save_global_env, started, user_messages, wait_for

    save_global_env(fake_llm)
    episodes = project_dir() / ".anton" / "episodes"
    episodes.mkdir(parents=True)
    history = [{"role": "user", "content": "How do I start?"}, {"role": "assistant", "content": ANSWER}]
    (episodes / "20261125_090000_history.json").write_text(json.dumps(history))
    read = RuntimeStarter(read_env_layers(), resume="20261125_090000").preview()

    class Quick(RuntimeStarter):
        """Has the conversation at once (read beforehand), and holds the build until the test lets it go."""

        gate = threading.Event()

        def preview(self) -> Any:
            return read

        def build(self) -> Any:
            self.gate.wait(20)
            return super().build()

    async def late(screen: MainScreen) -> None:
        await asyncio.sleep(0.3)  # the chat comes late (this runs before the screen composes), as on a busy machine

    monkeypatch.setattr(MainScreen, "on_compose", late, raising=False)
    app = AntonApp(Quick(read_env_layers(), resume="20261125_090000"), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: user_messages(app) == ["How do I start?"], what="the conversation")
        assert app.runtime is None and any("Resuming conversation" in text for text in notices(app))
        Quick.gate.set()
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
