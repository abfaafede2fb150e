"""Typing stays responsive while an answer streams: streamed pieces are merged into the message the screen has not
taken yet, and a keystroke is painted before a pending layout of the chat."""

from __future__ import annotations

from anton_tui.agent.events import AssistantTextDelta, ToolCallStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.messages import SessionEventMessage
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import ScriptedSession, make_settings, screen_text


def test_streamed_text_joins_the_message_not_yet_taken_and_never_one_already_taken() -> None:
    message = SessionEventMessage(AssistantTextDelta("The capital "))
    assert message.take_more_text("of France ")
    assert message.take() == AssistantTextDelta("The capital of France ")
    assert not message.take_more_text("is Paris."), "text added after the handler took the event would be lost"
    tool = SessionEventMessage(ToolCallStarted("t1", "recall", {"query": "x"}))
    assert not tool.take_more_text("more"), "text after a tool call must come after it, in a message of its own"


async def test_a_keystroke_is_painted_before_a_pending_layout_of_the_chat() -> None:
    app = AntonApp(make_settings(), ScriptedSession([]), cursor_blink=False)
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
