"""Typing stays responsive while an answer streams: streamed pieces reach the answer's Markdown through Textual's
stream, which merges them, a long answer continues in new parts at paragraph breaks, and while the user types the
text is held back (the chat holds still) until a pause in the typing, or shown right after a keystroke once it has
waited long enough. (That the prompt is painted ahead of a pending layout is tested in test_textual_internals.py.)"""

from __future__ import annotations

import pytest
from textual.widgets import Markdown

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta
from anton_tui.tui import streaming
from anton_tui.tui.app import AntonApp
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.streaming import QUIET, ParagraphBreaks
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.chat_window import excess_blocks
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import Pause, ScriptedSession, scripted_app, make_settings, screen_text, send, wait_until


def answer_text(app: AntonApp) -> str:
    return "".join(part.source for part in app.screen.query(AssistantMessage))


@pytest.mark.parametrize("merged", [False, True], ids=["one by one", "merged"])
async def test_a_fast_stream_reaches_the_answer_whole_and_in_order_in_few_updates(
    monkeypatch: pytest.MonkeyPatch, merged: bool
) -> None:
    pieces = [f"word{n} " for n in range(300)]  # under SPLIT_ANSWER_AT: one part
    if merged:
        pieces = ["".join(pieces[n : n + 30]) for n in range(0, 300, 30)]
    appended: list[str] = []
    real_append = Markdown.append

    def counted(markdown: Markdown, text: str):
        appended.append(text)
        return real_append(markdown, text)

    monkeypatch.setattr(Markdown, "append", counted)
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.chat
        for piece in pieces:
            await chat.append_answer(piece)
        await wait_until(pilot, lambda: "word299" in screen_text(app))
        assert answer_text(app) == "".join(pieces)
        assert "".join(appended) == "".join(pieces), "every piece reached the Markdown, once and in order"
        if not merged:
            assert len(appended) < len(pieces) / 3, "pieces that come faster than they can be shown are merged"
        await chat.end_answer()
        assert "word299" in screen_text(app)


async def test_text_that_waited_during_the_typing_is_shown_right_after_a_keystroke_once_it_waited_long_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streaming, "QUIET", 10.0)  # the typing never pauses during the test
    monkeypatch.setattr(streaming, "VIEW_HOLD", 0.3)
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.chat
        await chat.append_answer("First words.")
        await wait_until(pilot, lambda: answer_text(app) == "First words.")
        chat.note_keystroke()
        await chat.append_answer(" More words.")
        await pilot.pause(0.5)
        assert answer_text(app) == "First words.", "the user is typing: the text waits"
        chat.note_keystroke()  # a keystroke is on screen, and the text waited long enough: shown in the gap
        await wait_until(pilot, lambda: answer_text(app) == "First words. More words.")


async def test_a_key_typed_while_the_streaming_answer_is_appended_shows_as_soon_as_that_append_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Markdown appends streamed text in one batch update after another, a millisecond apart, and nothing is
    painted inside one: the key is painted between two of them, not when the stream next pauses."""
    painted: list[str] = []
    real_first_painted = MainScreen.first_painted

    def first_painted(screen: MainScreen) -> None:
        painted.append(screen.query_one(Prompt).text)
        real_first_painted(screen)

    monkeypatch.setattr(MainScreen, "first_painted", first_painted)
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.screen.chat.append_answer("First words.")
        await wait_until(pilot, lambda: "First words." in screen_text(app))
        app.screen.query_one(Prompt).focus()
        await pilot.pause()
        painted.clear()
        with app.batch_update():  # as the answer's Markdown holds one while it appends
            await pilot.press("q")
            assert painted == [], "painted inside a batch update"
        assert painted == ["q"], "the key waited beyond the end of the append"


async def test_when_the_typing_pauses_whatever_waits_is_shown() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.chat
        await chat.append_answer("First words.")
        await wait_until(pilot, lambda: answer_text(app) == "First words.")
        chat.note_keystroke()
        await chat.append_answer(" More words.")
        assert answer_text(app) == "First words."
        await pilot.pause(QUIET * 3)  # no key since: the typing has paused (a busy machine may draw it a little later)
        await wait_until(pilot, lambda: answer_text(app) == "First words. More words.", timeout=2)


async def test_a_pause_check_on_the_edge_of_the_typing_leaves_the_app_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the check for a pause finds the user still typing, it looks again after the rest of the pause. Measured a
    moment later, that rest can be below zero, and a Textual timer set below zero never fires (a hair below zero, it
    spun without letting the event loop run: the app froze). Here the typing is reported to go on although the pause
    is long over; what waited for the pause must still be shown."""
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.chat
        stream = chat.stream
        chat.note_keystroke()
        await chat.append_answer("the held words")
        assert answer_text(app) == ""
        answers = iter([True, True])  # typing still (as the text came, and once more at the check), then paused
        monkeypatch.setattr(streaming.ChatStream, "typing", property(lambda self: next(answers, False)))
        stream._last_keystroke -= 1.0  # the rest of the pause is now about a second below zero
        stream._check_quiet()
        await wait_until(pilot, lambda: answer_text(app) == "the held words", timeout=2)


def cuts(pieces: list[str], split_at: int = 0) -> list[int]:
    """Where `ParagraphBreaks` cuts text that comes in these pieces: offsets in the whole text."""
    breaks, found, offset = ParagraphBreaks(), [], 0
    for piece in pieces:
        start = 0
        while (cut := breaks.feed(piece[start:], split_at - offset - start)) >= 0:
            found.append(offset + start + cut)
            start += cut
        offset += len(piece)
    return found


def test_a_long_answer_is_cut_only_at_a_blank_line_outside_code_however_it_streams_in() -> None:
    text = "one\n\n```python\na = 1\n\nb = 2\n```\n\nafter\n  \nend"
    after_one, after_fence, after_after = len("one\n\n"), text.index("after"), text.index("end")
    for size in (1, 2, 3, 7, len(text)):
        pieces = [text[n : n + size] for n in range(0, len(text), size)]
        assert cuts(pieces) == [after_one, after_fence, after_after], f"in pieces of {size}"
        assert cuts(pieces, split_at=6) == [after_fence, after_after], "not before the length"
    assert cuts(["```python\n", "x = 1\n\ny = 2"]) == [], "inside a fence opened earlier"
    assert cuts(["~~~\nx\n\n~~~\n\ny"]) == [len("~~~\nx\n\n~~~\n\n")], "tildes open a fence too"
    assert cuts(["no break here"]) == []


def test_the_oldest_blocks_go_past_the_line_budget_or_the_block_limit_never_the_newest() -> None:
    from anton_tui.tui.widgets import chat_window

    high = chat_window.LINES_HIGH
    low = chat_window.LINES_LOW
    assert excess_blocks([10] * 5, max_blocks=200) == 0
    assert excess_blocks([10] * 5, max_blocks=3) == 2
    assert excess_blocks([high // 2, high // 2, 10], max_blocks=200) == 1, "past HIGH: down to LOW"
    assert excess_blocks([low] * 4, max_blocks=200) == 3, "down to LOW or under"
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
