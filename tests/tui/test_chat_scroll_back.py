"""Every turn of a long conversation can be scrolled back to: only a window of its blocks is mounted, earlier ones are
mounted as the view reaches them (without moving what it shows), Home goes to the first turn and End back to the
last, and the window stays within its budget of lines however far the user scrolls; a block that left and came back is
as it was (a summary keeps its ledger)."""

from __future__ import annotations

from anton_tui.agent.conversations import TranscriptEntry
from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, TurnFinished
from anton_tui.runtime import FoldedTurn, Ledger
from anton_tui.tui.widgets.chat import ChatView, UserMessage
from anton_tui.tui.widgets.chat_window import LINES_HIGH
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.summary_block import SummaryBlock

from .app_support import ScriptedSession, make_settings, scripted_app, send, wait_until
from .screen_reader import screen_text

SIZE = (100, 30)
TURNS = 300


def conversation(turns: int = TURNS) -> list[TranscriptEntry]:
    entries: list[TranscriptEntry] = []
    for turn in range(1, turns + 1):
        entries.append(TranscriptEntry("user", f"Question {turn}: how did region {turn % 7} do?", 2 * turn))
        entries.append(TranscriptEntry("answer", f"Region {turn % 7} grew {turn % 9}% in turn {turn}.", 2 * turn + 1))
    return entries


def chat_lines(app) -> list[str]:
    """The chat's column of the screen, line by line (the side panes and the scroll bar cut off)."""
    chat = app.screen.chat
    region = chat.region
    rows = screen_text(app).splitlines()[region.y : region.bottom]
    return [row[region.x : region.right - 2] for row in rows]


def mounted_lines(chat: ChatView) -> int:
    return sum(block.outer_size.height for block in chat.blocks)


async def resumed(pilot, entries: list[TranscriptEntry]) -> ChatView:
    chat = pilot.app.screen.chat
    await chat.show_entries(f"Resumed conversation 20261125_090000: {TURNS} turns, from its saved file.", entries)
    await wait_until(pilot, lambda: f"grew {TURNS % 9}% in turn {TURNS}." in screen_text(pilot.app))
    await settled(pilot, chat)
    chat.focus()
    await pilot.pause()
    return chat


async def to_the_prompt(pilot) -> None:
    pilot.app.screen.query_one(Prompt).focus()
    await pilot.pause()


async def settled(pilot, chat: ChatView) -> None:
    """Wait until the window has stopped moving (a short window fills itself up with earlier turns)."""
    last, still = None, 0
    while still < 3:
        await pilot.pause(0.05)
        now = (chat.window.first, chat.window.end, chat.window.tail)
        still = still + 1 if now == last else 0
        last = now


async def test_scrolling_up_from_the_end_of_a_300_turn_conversation_reaches_its_first_turn() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    app.animation_level = "none"  # each page at once (the smooth scroll takes a few frames, the test no longer)
    async with app.run_test(size=(100, 50)) as pilot:
        chat = await resumed(pilot, conversation())
        assert "Question 1:" not in screen_text(app) and chat.pruned_count > 0, "the first turns are not mounted"
        seen: set[int] = set()
        most = 0
        for _ in range(400):
            text = "\n".join(chat_lines(app))
            seen |= {turn for turn in range(1, TURNS + 1) if f"in turn {turn}." in text}
            most = max(most, mounted_lines(chat))
            if "Question 1: how did" in text:
                break
            await pilot.press("pageup")
            await pilot.pause()
        assert "Question 1: how did region 1 do?" in "\n".join(chat_lines(app)), "the first turn was reached"
        assert chat.pruned_count == 0
        assert seen == set(range(1, TURNS + 1)), "every turn came into view on the way up"
        assert most <= LINES_HIGH + 100, f"{most} lines were mounted at once"
        assert len(chat.blocks) < 2 * TURNS, "the latest turns left the widget tree meanwhile"


async def test_earlier_turns_mounted_above_the_view_do_not_move_what_it_shows() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = await resumed(pilot, conversation())
        before, view = chat.pruned_count, chat.scrollable_content_region.height
        chat.scroll_to(y=view + 3, animate=False)  # more than a screen below the top: nothing changes
        await settled(pilot, chat)
        shown = chat_lines(app)
        assert chat.pruned_count == before
        chat.scroll_to(y=view - 1, animate=False)  # within a screen of the top: earlier turns come
        await wait_until(pilot, lambda: chat.pruned_count < before)
        await settled(pilot, chat)
        assert chat_lines(app)[4:] == shown[:-4], "the view stayed on the lines it showed, four lines up"


async def test_home_goes_to_the_first_turn_and_end_back_to_the_last_which_the_view_follows_again() -> None:
    answer = "A new answer at the end."
    script = [AssistantTextDelta(answer), AssistantMessageDone(answer), TurnFinished(1, "end_turn", answer)]
    app = scripted_app(make_settings(), ScriptedSession(script), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = await resumed(pilot, conversation())
        await pilot.press("home")
        await wait_until(pilot, lambda: "Question 1: how did region 1 do?" in "\n".join(chat_lines(app)))
        assert chat.scroll_y == 0 and "Resumed conversation" in screen_text(app)
        assert f"in turn {TURNS}." not in screen_text(app)
        await pilot.press("end")
        await wait_until(pilot, lambda: f"grew {TURNS % 9}% in turn {TURNS}." in "\n".join(chat_lines(app)))
        await wait_until(pilot, lambda: chat.following)
        await to_the_prompt(pilot)
        await send(pilot, "one more question")
        await wait_until(pilot, lambda: answer in "\n".join(chat_lines(app)))
        assert [block.text for block in chat.query(UserMessage)][-1] == "one more question"


async def test_a_message_sent_while_reading_the_first_turns_shows_at_the_end() -> None:
    answer = "Answered."
    script = [AssistantTextDelta(answer), AssistantMessageDone(answer), TurnFinished(1, "end_turn", answer)]
    app = scripted_app(make_settings(), ScriptedSession(script), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await resumed(pilot, conversation())
        await pilot.press("home")
        await wait_until(pilot, lambda: "Question 1: how did" in "\n".join(chat_lines(app)))
        await to_the_prompt(pilot)
        await send(pilot, "back to the present")
        await wait_until(pilot, lambda: answer in "\n".join(chat_lines(app)))
        lines = chat_lines(app)
        assert any("back to the present" in line for line in lines)
        assert not any("Question 1: how did" in line for line in lines)


async def test_an_answer_streaming_while_the_user_reads_the_first_turns_goes_on_and_is_whole_at_the_end() -> None:
    from .app_support import Pause

    pause = Pause()
    first, rest = "The start of a long answer.\n\n", "".join(f"Paragraph {n} of the rest.\n\n" for n in range(40))
    script = [AssistantTextDelta(first), pause, *(AssistantTextDelta(rest[n : n + 50]) for n in range(0, len(rest), 50)),
              AssistantMessageDone(first + rest), TurnFinished(1, "end_turn", first + rest)]  # fmt: skip
    app = scripted_app(make_settings(), ScriptedSession(script), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        chat = await resumed(pilot, conversation())
        await to_the_prompt(pilot)
        await send(pilot, "a long answer please")
        await wait_until(pilot, pause.reached.is_set)
        await wait_until(pilot, lambda: "The start of a long answer." in screen_text(app))
        chat.focus()
        await pilot.pause()
        await pilot.press("home")
        await wait_until(pilot, lambda: "Question 1: how did region 1 do?" in "\n".join(chat_lines(app)))
        pause.gate.set()  # the answer goes on while the user reads the first turns
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        assert "Question 1: how did region 1 do?" in "\n".join(chat_lines(app)), "the view stayed on the first turns"
        await pilot.press("end")
        await wait_until(pilot, lambda: "Paragraph 39 of the rest." in "\n".join(chat_lines(app)))
        words = [chat.window.words(slot) for slot in chat.window.slots if slot.kind == "answer"]
        assert words[-1].endswith("Paragraph 39 of the rest.\n\n")
        answer = "".join(words[-3:])
        assert (first + rest) in answer, "the answer is whole, in order"


async def test_a_summary_with_its_ledger_keeps_the_ledger_when_it_leaves_the_chat_and_comes_back() -> None:
    folded = (FoldedTurn(1, "What did the first folded turn ask?", ()), FoldedTurn(2, "And the second one?", ()))
    ledger = Ledger("2026-11-25T09:00:00+00:00", "summary", folded)
    summary = TranscriptEntry("summary", "The earlier turns, summarised.", 0, ledgers=(ledger,))
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(160, 40)) as pilot:
        chat = await resumed(pilot, [summary, *conversation()])
        assert not chat.query(SummaryBlock), "the summary is far above the mounted turns"
        for trip in ("first", "again"):
            await pilot.press("home")
            await wait_until(pilot, lambda: "Earlier turns summarised" in "\n".join(chat_lines(app)))
            assert "ledger: 2 messages" in "\n".join(chat_lines(app)), f"the ledger is named ({trip})"
            await pilot.press("end")
            await wait_until(pilot, lambda: f"grew {TURNS % 9}% in turn {TURNS}." in "\n".join(chat_lines(app)))
            await settled(pilot, chat)
            assert not chat.query(SummaryBlock), "the summary left the chat"
        await pilot.press("home")
        await wait_until(pilot, lambda: "Earlier turns summarised" in "\n".join(chat_lines(app)))
        chat.query_one(SummaryBlock).collapsed = False
        await wait_until(pilot, lambda: "And the second one?" in "\n".join(chat_lines(app)))
