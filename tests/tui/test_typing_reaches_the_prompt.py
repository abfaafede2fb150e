"""Every key typed or pasted reaches the prompt, in the order it was typed: a review of memories that comes while the
user writes waits above the prompt instead of taking the keys, and keys sent back to back (a fast typist, a paste of
keys, tmux's send-keys) land as typed, Enter and Ctrl+J included.

"Human speed" is about 15 characters a second (`pilot.press` one key, then the rest of 1/15 s); "no pause" posts
the keys to the app all at once, as a terminal delivers a burst.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from textual import events
from textual.pilot import Pilot

from anton_tui.agent.events import (
    AssistantMessageDone,
    AssistantTextDelta,
    MemoryConfirmationNeeded,
    TurnFinished,
)
from anton_tui.memory.engrams.engram import Engram
from anton_tui.tui.screens.confirm_memory import ConfirmMemoryScreen
from anton_tui.tui.widgets.chat import CommandReply, UserMessage
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.review_bar import ReviewBar

from .app_support import Pause, ScriptedSession, make_settings, scripted_app, screen_text, send, wait_until

SIZE = (120, 40)
HUMAN = 1 / 15  # seconds between keys
REPEATS = 50
LESSON = Engram("Check the encoding of a CSV before reading it", kind="lesson", scope="project")


def key_name(char: str) -> str:
    return {" ": "space", "/": "slash", ".": "full_stop", "-": "minus"}.get(char, char)


def post_keys(pilot: Pilot, keys: list[str]) -> None:
    """Hand the app `keys` back to back, as a terminal delivers a burst (no waiting between them)."""
    for key in keys:
        character = key if len(key) == 1 else {"space": " ", "slash": "/", "full_stop": ".", "minus": "-"}.get(key)
        pilot.app.post_message(events.Key(key, character))


async def type_at_human_speed(pilot: Pilot, text: str, *, halfway: asyncio.Event | None = None) -> None:
    """Press each character of `text`, one every `HUMAN` seconds; `halfway` is set in the middle of it."""
    for index, char in enumerate(text):
        started = time.monotonic()
        await pilot.press(key_name(char))
        if halfway is not None and index == len(text) // 2:
            halfway.set()
        await asyncio.sleep(max(0.0, HUMAN - (time.monotonic() - started)))


async def type_back_to_back(pilot: Pilot, text: str, *, halfway: asyncio.Event | None = None) -> None:
    keys = [key_name(char) for char in text]
    post_keys(pilot, keys[: len(keys) // 2])
    if halfway is not None:
        halfway.set()
        await asyncio.sleep(0)  # the turn's end goes on while the rest of the keys are on their way
    post_keys(pilot, keys[len(keys) // 2 :])


def answer(text: str) -> list[object]:
    return [AssistantTextDelta(text), AssistantMessageDone(text), TurnFinished(1, "end_turn", text)]


def question() -> MemoryConfirmationNeeded:
    return MemoryConfirmationNeeded((LESSON,), asyncio.get_running_loop().create_future())


async def queue_a_review(pilot: Pilot, session: ScriptedSession, review: MemoryConfirmationNeeded) -> None:
    """A turn whose review comes while the user is writing the next message: it waits above the prompt."""
    await send(pilot, "first message")
    await pilot.press(*"next")
    session.scripts[0][0].gate.set()
    await wait_until(pilot, lambda: pilot.app.screen.query_one(ReviewBar).waiting == 1)


async def test_typing_while_a_review_waits_puts_every_character_in_the_prompt_and_decides_nothing() -> None:
    review = question()
    session = ScriptedSession([Pause(), *answer("Done."), review])
    app = scripted_app(make_settings(memory_mode="copilot"), session)
    async with app.run_test(size=SIZE) as pilot:
        await queue_a_review(pilot, session, review)
        prompt = app.screen.query_one(Prompt)
        assert "1 memory waits for your review" in screen_text(app)
        for repeat in range(REPEATS):
            prompt.clear()
            text = f"word alpha {repeat}"
            await type_at_human_speed(pilot, text[:6])
            assert prompt.text == text[:6]
            prompt.clear()
            await type_back_to_back(pilot, text)
            await wait_until(pilot, lambda text=text: prompt.text == text)
            assert not isinstance(app.screen, ConfirmMemoryScreen)
            assert not review.future.done(), f"typing decided the review (repeat {repeat})"
        assert session.confirmed == []


@pytest.mark.timeout(240)  # 50 turns, each with its review, on a machine that may be busy
@pytest.mark.parametrize("speed", ["human speed", "no pause"])
async def test_the_next_message_typed_while_a_turn_ends_stays_whole_and_goes_after_the_review(speed: str) -> None:
    """Each turn ends with a review while the next message is being typed, 50 times: the message is whole in the
    prompt and the review waits. Every fifth time Enter opens it, `a` keeps the lesson, and the message is then sent
    whole; the other times the question is answered directly and Enter sends the message."""
    turns = [[Pause(), *answer(f"Answer {n}."), question()] for n in range(REPEATS + 1)]
    session = ScriptedSession(*turns)
    app = scripted_app(make_settings(memory_mode="copilot"), session)
    typing = type_at_human_speed if speed == "human speed" else type_back_to_back
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        await send(pilot, "message 0")
        for n in range(1, REPEATS + 1):
            if n % 10 == 0:  # what is tried is the prompt, not the painting of a chat a hundred turns long
                await app.screen.clear_conversation()
            pause = turns[n - 1][0]
            assert isinstance(pause, Pause)
            await wait_until(pilot, pause.reached.is_set)
            halfway = asyncio.Event()
            text = f"word {n}" if speed == "human speed" else f"word alpha here {n}"
            ending = asyncio.create_task(halfway.wait())
            ending.add_done_callback(lambda _done, pause=pause: pause.gate.set())
            await typing(pilot, text, halfway=halfway)
            await wait_until(pilot, lambda: app.screen.query_one(ReviewBar).waiting == 1)
            await wait_until(pilot, lambda text=text: prompt.text == text)
            review = turns[n - 1][-1]
            assert isinstance(review, MemoryConfirmationNeeded)
            assert not review.future.done(), f"typing decided the review of turn {n}"
            assert not isinstance(app.screen, ConfirmMemoryScreen)
            if n % 5 == 0:
                await pilot.press("enter")
                await wait_until(pilot, lambda: isinstance(app.screen, ConfirmMemoryScreen))
                assert prompt.text == text, "the message waits in the prompt while the review is open"
                await pilot.press("a")
            else:  # answered elsewhere (the engine's question, answered directly), to keep the test short
                review.future.set_result([LESSON])
                await wait_until(pilot, lambda n=n: len(session.confirmed) == n)
                await pilot.press("enter")
            await wait_until(pilot, lambda n=n: len(session.prompts) == n + 1)
            assert session.prompts[-1] == text
            assert prompt.text == ""
            assert review.future.result() == [LESSON]
        assert len(session.confirmed) == REPEATS


async def test_a_review_opens_by_itself_when_the_user_is_not_typing_and_ctrl_y_opens_a_waiting_one() -> None:
    first, second = question(), question()
    session = ScriptedSession([*answer("Done."), first], [Pause(), *answer("Again."), second])
    app = scripted_app(make_settings(memory_mode="copilot"), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "remember this")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmMemoryScreen))
        await pilot.press("d")
        await wait_until(pilot, lambda: session.confirmed == [[]])
        await send(pilot, "and this")
        await pilot.press(*"draft")
        session.scripts[1][0].gate.set()
        await wait_until(pilot, lambda: app.screen.query_one(ReviewBar).waiting == 1)
        assert not isinstance(app.screen, ConfirmMemoryScreen)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmMemoryScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.confirmed == [[], [LESSON]])
        assert app.screen.query_one(Prompt).text == "draft"
        assert app.screen.query_one(ReviewBar).waiting == 0
        assert "waits for your review" not in screen_text(app)


async def test_keys_sent_back_to_back_land_as_typed() -> None:
    """`line one`, Ctrl+J, `line two` gives two lines; a message and Enter sent at once goes whole; `/memory` and
    Enter with no pause runs the command."""
    session = ScriptedSession(answer("ok"))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        post_keys(pilot, [*"line", "space", *"one", "ctrl+j", *"line", "space", *"two"])
        await wait_until(pilot, lambda: prompt.text == "line one\nline two")
        prompt.clear()
        post_keys(pilot, [*"helo", "backspace", *"lo", "left", "left", "backspace", "L"])
        await wait_until(pilot, lambda: prompt.text == "heLlo")
        prompt.clear()
        post_keys(pilot, [key_name(c) for c in "Write a long answer please"] + ["enter", *"next"])
        await wait_until(pilot, lambda: session.prompts == ["Write a long answer please"])
        await wait_until(pilot, lambda: prompt.text == "next")
        await app.workers.wait_for_complete()
        await pilot.pause()
        prompt.clear()
        post_keys(pilot, ["slash", *"memory", "enter"])
        await wait_until(pilot, lambda: bool(app.screen.query(CommandReply)))
        assert prompt.text == ""
        assert not app.screen.query_one("#command-menu").display
        assert [block.text for block in app.screen.query(UserMessage)] == ["Write a long answer please"]


async def test_a_click_on_the_line_of_waiting_reviews_opens_the_review_and_the_draft_stays() -> None:
    review = question()
    session = ScriptedSession([Pause(), *answer("Done."), review])
    app = scripted_app(make_settings(memory_mode="copilot"), session)
    async with app.run_test(size=SIZE) as pilot:
        await queue_a_review(pilot, session, review)
        assert not isinstance(app.screen, ConfirmMemoryScreen)
        await pilot.click(ReviewBar)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmMemoryScreen))
        await pilot.press("a")
        await wait_until(pilot, lambda: session.confirmed == [[LESSON]])
        assert app.screen.query_one(Prompt).text == "next"
        assert app.screen.query_one(ReviewBar).waiting == 0
        assert "Kept 1 of 1 memories waiting for confirmation." in screen_text(app)
        assert session.prompts == ["first message"], "the draft is not sent by the review"
