"""Typing stays responsive while an answer streams: streamed pieces are gathered and handed to the answer in few
updates, costly chat updates wait for the gaps between keystrokes, and the view holds still under the user's typing
until it pauses. (That the prompt is painted ahead of a pending layout is tested in test_textual_internals.py.)"""

from __future__ import annotations

import pytest

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta
from anton_tui.tui import streaming
from anton_tui.tui.app import AntonApp
from anton_tui.tui.streaming import FLUSH_EVERY, QUIET, excess_blocks, paragraph_break
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import Pause, ScriptedSession, scripted_app, make_settings, screen_text, send, wait_until


def answer_text(app: AntonApp) -> str:
    return "".join(part.source for part in app.screen.query(AssistantMessage))


async def test_a_fast_stream_reaches_the_answer_whole_and_in_order_in_a_few_updates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pieces = [f"word{n} " for n in range(200)]  # under SPLIT_ANSWER_AT: one part
    appended: list[str] = []
    real_append = AssistantMessage.append

    async def counted(part: AssistantMessage, text: str) -> None:
        appended.append(text)
        await real_append(part, text)

    monkeypatch.setattr(AssistantMessage, "append", counted)
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.chat
        chat.stream.write(pieces[0])
        await wait_until(pilot, lambda: "word0" in screen_text(app))  # the first words show at once
        for piece in pieces[1:]:
            chat.stream.write(piece)
        await pilot.pause()
        assert answer_text(app) == pieces[0], "the rest waits for the next hand-off"
        await pilot.pause(FLUSH_EVERY * 2)
        assert answer_text(app) == "".join(pieces)
        assert appended == [pieces[0], "".join(pieces[1:])], "hundreds of pieces, two updates of the Markdown"
        await chat.end_answer()
        assert "word199" in screen_text(app)


async def test_a_hand_off_due_while_the_user_types_waits_for_a_keystroke_to_be_shown_then_runs_in_its_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streaming, "QUIET", 10.0)  # the typing never pauses during the test
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        stream = app.screen.chat.stream
        stream.write("First words.")
        await wait_until(pilot, lambda: answer_text(app) == "First words.")
        stream.keystroke()
        stream.write(" More words.")
        await pilot.pause(FLUSH_EVERY * 2)
        assert answer_text(app) == "First words.", "due, but the user is typing: it waits for a gap"
        stream.keystroke()  # a keystroke is on screen: the gap before the next one
        await wait_until(pilot, lambda: answer_text(app) == "First words. More words.")


async def test_when_the_typing_pauses_whatever_waits_is_shown() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        stream = app.screen.chat.stream
        stream.write("First words.")
        await wait_until(pilot, lambda: answer_text(app) == "First words.")
        stream.keystroke()
        stream.write(" More words.")
        await pilot.pause(FLUSH_EVERY + QUIET * 2)
        assert answer_text(app) == "First words. More words."


async def test_a_pause_check_on_the_edge_of_the_typing_leaves_the_app_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the check for a pause finds the user still typing, it looks again after the rest of the pause. Measured a
    moment later, that rest can be below zero, and a Textual timer set below zero never fires (a hair below zero, it
    spun without letting the event loop run: the app froze). Here the typing is reported to go on although the pause
    is long over; what waited for the pause must still be shown."""
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        stream = app.screen.chat.stream
        answers = iter([True])  # typing once more, then paused
        monkeypatch.setattr(streaming.ChatStream, "typing", property(lambda self: next(answers, False)))
        stream._last_keystroke -= 1.0  # the rest of the pause is now about a second below zero
        shown = []
        stream._waiting.append(lambda: shown.append("the held update"))
        stream._check_quiet()
        await pilot.pause(0.1)
        assert shown == ["the held update"]


def test_a_long_answer_is_cut_only_at_a_blank_line_outside_code() -> None:
    assert paragraph_break("", "one\n\ntwo\n\nthree", 4) == len("one\n\ntwo\n\n")
    assert paragraph_break("", "```\na\n\nb\n```\n\nafter", 0) == len("```\na\n\nb\n```\n\n")
    assert paragraph_break("```python\n", "x = 1\n\ny = 2", 0) == -1, "inside a fence opened earlier"
    assert paragraph_break("", "no break here", 0) == -1


def test_the_oldest_blocks_go_past_the_line_budget_or_the_block_limit_never_the_newest() -> None:
    high = streaming.LINES_HIGH
    assert excess_blocks([10] * 5, max_blocks=200) == 0
    assert excess_blocks([10] * 5, max_blocks=3) == 2
    assert excess_blocks([high // 2, high // 2, 10], max_blocks=200) == 1, "past HIGH: down to LOW"
    assert excess_blocks([300] * 4, max_blocks=200) == 3, "1,200 lines: down to 300, under LOW"
    assert excess_blocks([high * 2], max_blocks=200) == 0, "the newest block always stays"


def streamed_paragraphs(count: int, gate: Pause) -> list:
    script: list = [AssistantTextDelta(f"Paragraph {n} of a long answer, with enough words to wrap.\n\n") for n in range(count)]
    return [*script[: count // 2], gate, *script[count // 2 :], AssistantMessageDone("")]


async def test_while_the_user_types_the_chat_holds_still_and_catches_up_at_a_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Long enough that a busy test machine between two presses never looks like a pause or a long hold.
    monkeypatch.setattr(streaming, "QUIET", 3.0)
    monkeypatch.setattr(streaming, "VIEW_HOLD", 30.0)
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
        typed = "he"
        # However slow the machine, the user types until more answer has come in below the view.
        for key in "llo there, and a few more words while the answer keeps coming in":
            await pilot.press("space" if key == " " else "comma" if key == "," else key)
            typed += key
            await pilot.pause(0.03)
            assert chat.scroll_y == held_at, "the view did not move under the user's typing"
            if len(typed) >= len("hello there") and chat.max_scroll_y > held_at:
                break
        assert chat.max_scroll_y > held_at, "more answer came in below the view"
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y, timeout=15)  # at the pause after the last key
        assert "Paragraph 79" in screen_text(app)
        assert app.screen.query_one(Prompt).text == typed


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
