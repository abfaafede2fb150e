"""Typing stays responsive while an answer streams: streamed pieces are merged into the message the screen has not
taken yet, a keystroke is painted before a pending layout of the chat, the chat's costly updates wait for gaps in
the typing, and the view holds still under the user's typing until it pauses."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, ToolCallStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.messages import SessionEventMessage
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets import chat as chat_module
from anton_tui.tui.widgets import typing_gaps
from anton_tui.tui.widgets.typing_gaps import QUIET, TypingGaps

from .app_support import Pause, ScriptedSession, scripted_app, make_settings, screen_text, send, wait_until


def test_streamed_text_joins_the_message_not_yet_taken_and_never_one_already_taken() -> None:
    message = SessionEventMessage(AssistantTextDelta("The capital "))
    assert message.take_more_text("of France ")
    assert message.take() == AssistantTextDelta("The capital of France ")
    assert not message.take_more_text("is Paris."), "text added after the handler took the event would be lost"
    tool = SessionEventMessage(ToolCallStarted("t1", "recall", {"query": "x"}))
    assert not tool.take_more_text("more"), "text after a tool call must come after it, in a message of its own"


async def test_a_keystroke_is_painted_before_a_pending_layout_of_the_chat() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        prompt = screen.query_one(Prompt)
        prompt.insert("quick")
        screen._dirty_widgets.add(prompt)
        screen._layout_required = True  # as when an answer's new blocks are waiting to be laid out
        screen._on_timer_update()
        assert "quick" in screen_text(app)
        assert screen._layout_required, "the layout is left for the next tick"
        await pilot.pause()
        assert not screen._layout_required


class GapsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("owner")

    def on_mount(self) -> None:
        self.ran: list[str] = []
        self.pauses = 0
        self.gaps = TypingGaps(self.query_one(Static), on_pause=self.paused)

    def paused(self) -> None:
        self.pauses += 1

    def job(self, name: str):
        def run() -> None:
            self.ran.append(name)

        return run


async def test_chat_updates_wait_while_the_user_types_then_run_one_per_keystroke_and_the_rest_at_a_pause() -> None:
    app = GapsApp()
    async with app.run_test() as pilot:
        gaps = app.gaps
        gaps.run(app.job("idle"))
        await pilot.pause()
        assert app.ran == ["idle"], "nobody types: a job runs at once"

        gaps.keystroke()
        flush, keep, start = app.job("flush"), app.job("keep lines"), app.job("start part")
        for job in (flush, keep, flush, start):
            gaps.run(job)
        await pilot.pause()
        assert app.ran == ["idle"], "while the user types, jobs wait"
        gaps.keystroke()
        await pilot.pause()
        assert app.ran == ["idle", "flush"], "one job in the gap after a keystroke"
        assert app.pauses == 0
        await pilot.pause(QUIET * 3)
        assert app.ran == ["idle", "flush", "keep lines", "start part"], "the rest once typing pauses, each once"
        assert app.pauses == 1


def streamed_paragraphs(count: int, gate: Pause) -> list:
    script: list = [AssistantTextDelta(f"Paragraph {n} of a long answer, with enough words to wrap.\n\n") for n in range(count)]
    return [*script[: count // 2], gate, *script[count // 2 :], AssistantMessageDone("")]


async def test_while_the_user_types_the_chat_holds_still_and_catches_up_at_a_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Long enough that a busy test machine between two presses never looks like a pause or a long hold.
    monkeypatch.setattr(typing_gaps, "QUIET", 1.0)
    monkeypatch.setattr(chat_module, "VIEW_HOLD", 30.0)
    gate = Pause()
    app = scripted_app(make_settings(), ScriptedSession(streamed_paragraphs(80, gate), step_delay=0.002), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "write a long answer")
        await wait_until(pilot, lambda: gate.reached.is_set())
        chat = app.screen.chat
        await wait_until(pilot, lambda: chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y)
        await pilot.press("h", "e")
        held_at = chat.scroll_y
        gate.gate.set()  # the second half of the answer streams in while the user goes on typing
        for key in "llo there":
            await pilot.press("space" if key == " " else key)
            await pilot.pause(0.03)
        assert chat.max_scroll_y > held_at, "more answer came in below the view"
        assert chat.scroll_y == held_at, "the view did not move under the user's typing"
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y)  # a second after the last key
        assert "Paragraph 79" in screen_text(app)
        assert app.screen.query_one(Prompt).text == "hello there"


async def test_typing_never_pulls_back_a_chat_the_user_scrolled_up() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed_paragraphs(60, Pause())), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "write a long answer")
        chat = app.screen.chat
        await wait_until(pilot, lambda: chat.max_scroll_y > 10)
        chat.scroll_to(y=0, animate=False)
        await pilot.pause()
        await pilot.press("o", "k")
        await pilot.pause(QUIET * 3)
        assert chat.scroll_y == 0
