"""The chat transcript: streaming answers, tool blocks, notices, errors with Retry, cancelling, pruning, anchoring."""

from __future__ import annotations

import asyncio

import pytest
from textual.content import Content
from textual.widgets import Button, SelectionList

from anton_tui.agent.events import (
    AccNudge,
    MemoryConfirmationNeeded,
    AssistantMessageDone,
    AssistantTextDelta,
    ErrorOccurred,
    MemoryWritten,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from anton_tui.memory.learners.acc import Lesson
from anton_tui.memory.engrams.engram import Engram
from anton_tui.tui.app import AntonApp
from anton_tui.tui.screens.confirm_memory import ConfirmMemoryScreen
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.chat import ChatView, ErrorBlock, Notice, UserMessage
from anton_tui.tui.widgets.tool_block import ToolCallBlock

from .app_support import Pause, Raise, ScriptedSession, scripted_app, make_settings, screen_text, send, wait_until

SIZE = (120, 40)


def answer(*chunks: str) -> list:
    text = "".join(chunks)
    return [
        TurnStarted(1, "q"),
        *(AssistantTextDelta(chunk) for chunk in chunks),
        AssistantMessageDone(text),
        TurnFinished(1, "end_turn", text),
    ]


async def test_sent_message_and_streamed_answer_appear_in_the_chat() -> None:
    session = ScriptedSession(answer("The capital ", "of France ", "is **Paris**."))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "capital of France?")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "is Paris." in screen_text(app))
        assert session.prompts == ["capital of France?"]
        users = app.screen.query(UserMessage)
        assert [u.text for u in users] == ["capital of France?"]
        answers = app.screen.query(AssistantMessage)
        assert len(answers) == 1, "the deltas of one message stream into one Markdown block"
        assert answers.first().source == "The capital of France is **Paris**."
        assert "capital of France?" in screen_text(app)


async def test_copy_answer_puts_the_markdown_of_the_last_answer_on_the_clipboard() -> None:
    session = ScriptedSession(answer("Use `df.describe()` ", "for a summary."))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "how?")
        await app.workers.wait_for_complete()
        app.screen.query_one(ChatView).focus()
        await pilot.press("c")
        assert app.clipboard == "Use `df.describe()` for a summary."


async def test_answer_is_visible_while_it_is_still_streaming() -> None:
    pause = Pause()
    session = ScriptedSession([AssistantTextDelta("Working on "), AssistantTextDelta("it"), pause])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await wait_until(pilot, pause.reached.is_set)
        await wait_until(pilot, lambda: "Working on it" in screen_text(app))
        pause.gate.set()
        await app.workers.wait_for_complete()


async def test_an_empty_delta_before_a_tool_call_does_not_break_the_chat() -> None:
    call = {"query": "x"}
    session = ScriptedSession(
        [
            AssistantTextDelta(""),
            ToolCallStarted("a", "recall", call),
            ToolCallFinished("a", "recall", call, "found", True, 0.1),
            AssistantTextDelta("after"),
            AssistantMessageDone("after"),
            TurnFinished(1, "end_turn", "after"),
        ],
        step_delay=0,
    )  # back to back, as the engine sends them
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "after" in screen_text(app))
        assert app.screen.query_one(ToolCallBlock).state == "ok"


async def test_tool_calls_appear_collapsed_with_a_summary_and_their_outcome() -> None:
    code = "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df.shape)"
    scratch = {"action": "exec", "name": "main", "code": code, "one_line_description": "load the sales file"}
    memo = {"entries": [{"text": "User prefers metric units", "kind": "profile", "scope": "global"}]}
    session = ScriptedSession(
        [
            ToolCallStarted("a", "scratchpad", scratch),
            ToolCallFinished("a", "scratchpad", scratch, "[output]\n(120, 4)", True, 0.8),
            ToolCallStarted("b", "memorize", memo),
            ToolCallFinished("b", "memorize", memo, "Memory updated", True, 0.1),
            ToolCallStarted("c", "recall", {"query": "sales report"}),
            ToolCallFinished("c", "recall", {"query": "sales report"}, "nothing found", False, 0.2),
            TurnFinished(1, "end_turn", ""),
        ]
    )
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "load it")
        await app.workers.wait_for_complete()
        await pilot.pause()
        blocks = list(app.screen.query(ToolCallBlock))
        assert [b.tool_name for b in blocks] == ["scratchpad", "memorize", "recall"]
        assert all(b.collapsed for b in blocks)
        text = screen_text(app)
        assert "scratchpad · main: load the sales file ✓ 0.8s" in text
        assert "memorize · User prefers metric units ✓" in text
        assert "recall · “sales report” ✗ failed" in text
        assert "read_csv" not in text, "details stay hidden until the block is expanded"

        blocks[0].collapsed = False
        await pilot.pause()
        assert "read_csv" in screen_text(app)
        assert "(120, 4)" in screen_text(app)


async def test_memory_writes_and_self_check_nudges_show_where_they_happened() -> None:
    engram = Engram("Always load CSVs with an explicit encoding", kind="always", scope="project")
    lesson = Lesson(rule="Check the file exists before reading it", kind="always", detector="repeated_tool_error")
    session = ScriptedSession(
        [
            AssistantTextDelta("First part."),
            AssistantMessageDone("First part."),
            AccNudge(lesson, nudged=True),
            MemoryWritten((engram,), ("Encoded always: ...",), "memorize"),
            AssistantTextDelta("Second part."),
            AssistantMessageDone("Second part."),
            TurnFinished(1, "end_turn", ""),
        ]
    )
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await pilot.pause()
        chat = app.screen.query_one(ChatView)
        kinds = [type(b).__name__ + (f":{b.kind}" if isinstance(b, Notice) else "") for b in chat.blocks]
        assert kinds == ["UserMessage", "AssistantMessage", "Notice:acc", "Notice:memory", "AssistantMessage"]
        acc, memory = (str(notice.render()) for notice in chat.query(Notice))
        assert acc == "Self-check (repeated_tool_error) Check the file exists before reading it"
        assert memory == "Remembered (memorize)\nproject·always Always load CSVs with an explicit encoding"
        assert "Remembered (memorize)" in screen_text(app)


async def test_held_back_memories_are_confirmed_in_a_dialog_while_the_turn_waits() -> None:
    keep = Engram("Reports go to finance@example.com", kind="profile", scope="global")
    drop = Engram("The user dislikes pie charts", kind="lesson", scope="project")
    future = asyncio.get_running_loop().create_future()
    session = ScriptedSession(
        [
            MemoryConfirmationNeeded((keep, drop), future),
            AssistantTextDelta("Saved what you chose."),
            AssistantMessageDone("Saved what you chose."),
            TurnFinished(1, "end_turn", ""),
        ]
    )
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "remember this")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmMemoryScreen))
        assert "Saved what you chose." not in screen_text(app), "the turn waits for the answer"
        app.screen.query_one(SelectionList).deselect(1)
        app.screen.action_save_checked()
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "Saved what you chose." in screen_text(app))
        assert session.confirmed == [[keep]]
        assert future.result() == [keep]
        assert "Kept 1 of 2 memories waiting for confirmation." in screen_text(app)


async def test_error_event_shows_an_error_block_and_retry_resends_the_last_message() -> None:
    session = ScriptedSession(
        [ErrorOccurred("anthropic/claude-test: overloaded (529)"), TurnFinished(1, "error", "")],
        answer("Done now."),
    )
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "summarise the report")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "overloaded (529)" in screen_text(app)
        assert len(app.screen.query(ErrorBlock)) == 1
        await pilot.click(app.screen.query_one(ErrorBlock).query_one(Button))
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "Done now." in screen_text(app))
        assert session.prompts == ["summarise the report", "summarise the report"]


async def test_retry_key_resends_after_an_error_and_is_off_otherwise() -> None:
    session = ScriptedSession([ErrorOccurred("network down"), TurnFinished(1, "error", "")], answer("ok"))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+r")
        assert session.prompts == [], "nothing to retry before the first message"
        await send(pilot, "hello")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.prompts == ["hello", "hello"]
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert session.prompts == ["hello", "hello"], "after a good answer there is nothing to retry"


async def test_a_failing_session_is_reported_once_with_retry() -> None:
    session = ScriptedSession([AssistantTextDelta("partial"), Raise(RuntimeError("socket closed"))])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await pilot.pause()
        errors = app.screen.query(ErrorBlock)
        assert len(errors) == 1
        assert errors.first().message == "RuntimeError: socket closed"
        assert errors.first().retryable
        assert app.is_running, "a failed turn does not take the app down"


async def test_escape_cancels_a_running_turn() -> None:
    pause = Pause()
    scratch = {"action": "exec", "name": "main", "code": "while True: pass"}
    session = ScriptedSession([ToolCallStarted("a", "scratchpad", scratch), pause, AssistantTextDelta("never shown")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "spin")
        await wait_until(pilot, pause.reached.is_set)
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.cancel_calls == 1
        assert session.closed_turns == 1, "the turn's event stream was closed"
        text = screen_text(app)
        assert "Turn cancelled." in text
        assert "never shown" not in text
        assert app.screen.query_one(ToolCallBlock).state == "cancelled"
        assert "cancelled" in str(app.screen.query_one("#turn-status").render())


async def test_escape_does_nothing_when_no_turn_runs() -> None:
    session = ScriptedSession(answer("hi"))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.pause()
        assert session.cancel_calls == 0
        assert not app.screen.query(Notice)


async def test_usage_updates_the_header() -> None:
    session = ScriptedSession([UsageUpdated(100, 20, 12_345, 678), TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "12.3k in · 678 out" in screen_text(app)


async def test_old_blocks_are_pruned_past_the_budget() -> None:
    session = ScriptedSession(answer("reply"))
    app = scripted_app(make_settings(), session, max_blocks=6)
    async with app.run_test(size=SIZE) as pilot:
        for n in range(5):
            await send(pilot, f"message {n}")
            await app.workers.wait_for_complete()
            await pilot.pause()
        chat = app.screen.query_one(ChatView)
        assert len(chat.blocks) == 6
        assert [u.text for u in chat.query(UserMessage)] == ["message 2", "message 3", "message 4"]
        assert chat.pruned_count == 4
        assert "4 earlier blocks are hidden" in screen_text(app)
        assert len(session.prompts) == 5


@pytest.mark.parametrize("scrolled_up", [False, True])
async def test_view_follows_new_text_only_while_at_the_bottom(scrolled_up: bool) -> None:
    session = ScriptedSession(answer("line\n\n" * 30))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "fill the screen")
        await app.workers.wait_for_complete()
        await pilot.pause()
        chat = app.screen.query_one(ChatView)
        assert chat.max_scroll_y > 0
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y)
        if scrolled_up:
            chat.focus()
            await pilot.press("home")
            await wait_until(pilot, lambda: chat.scroll_y == 0)  # Home scrolls there smoothly, over a few frames
        before = chat.scroll_y
        await chat.add_notice(Content("a notice"), "info")
        await chat.append_answer("more text\n\n" * 10)
        await chat.end_answer()
        await pilot.pause()
        if scrolled_up:
            assert chat.scroll_y == before == 0, "reading older messages is not interrupted"
            await pilot.press("end")
            await chat.append_answer("even more\n\n" * 5)
            await chat.end_answer()
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y > before)  # however slow the machine


async def test_a_long_answer_continues_in_new_blocks_at_paragraph_breaks_never_inside_code() -> None:
    from anton_tui.tui.streaming import SPLIT_ANSWER_AT

    paragraphs = [f"Paragraph {i}: " + "words " * 60 for i in range(12)]
    code = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(200)) + "\n```"
    text = "\n\n".join(paragraphs[:6]) + "\n\n" + code + "\n\n" + "\n\n".join(paragraphs[6:])
    chunks = [text[i : i + 50] for i in range(0, len(text), 50)]
    session = ScriptedSession(answer(*chunks))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write a lot")
        await app.workers.wait_for_complete()
        window = app.screen.query_one(ChatView).window  # every part, also those that left the widget tree

        def answer_parts() -> tuple[list, list[str]]:
            slots = [slot for slot in window.slots if slot.kind == "answer"]
            return slots, [window.words(slot) for slot in slots]

        # (the last words reach the chat at its next hand-off, which a busy machine may put off a little)
        await wait_until(pilot, lambda: "".join(answer_parts()[1]) == text)
        answer_slots, parts = answer_parts()
        assert len(parts) > 2
        assert all(part.count("```") % 2 == 0 for part in parts), "a code fence was cut in two"
        assert all(len(part) <= SPLIT_ANSWER_AT + 500 for part in parts if "```" not in part)  # + a paragraph
        assert [slot.continued for slot in answer_slots] == [False] + [True] * (len(parts) - 1)
        assert all(block.has_class("-continued") for block in app.screen.query(AssistantMessage)[1:])
        app.screen.query_one(ChatView).focus()
        await pilot.press("c")
        assert app.clipboard == text


async def test_a_very_long_transcript_is_pruned_by_lines_not_only_by_blocks() -> None:
    from anton_tui.tui.widgets.chat_window import LINES_HIGH

    paragraphs = "\n\n".join(f"Paragraph {i}: " + "words " * 40 for i in range(400))
    chunks = [paragraphs[i : i + 400] for i in range(0, len(paragraphs), 400)]
    session = ScriptedSession(answer(*chunks))
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write a book")
        await app.workers.wait_for_complete()
        await pilot.pause()
        chat = app.screen.query_one(ChatView)
        await wait_until(pilot, lambda: chat.pruned_count > 0)

        def within_budget() -> bool:
            return sum(block.outer_size.height for block in chat.blocks[:-1]) <= LINES_HIGH

        await wait_until(pilot, within_budget)
        assert "earlier blocks are hidden" in screen_text(app) or chat.scroll_y > 0


async def test_the_footer_stops_offering_cancel_once_the_answer_is_done() -> None:
    """The session's generator may still wind down after its last event (as the real one does): the footer follows
    the turn's end, not only the event that announced it."""
    after_the_end = Pause()
    session = ScriptedSession([*answer("All done."), after_the_end])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        footer = lambda: screen_text(app).splitlines()[-1]  # noqa: E731
        await send(pilot, "anything?")
        await wait_until(pilot, lambda: "All done." in screen_text(app) and after_the_end.reached.is_set())
        assert "Cancel" in footer(), "the turn's worker still runs"
        after_the_end.gate.set()
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "Cancel" not in footer())
        assert "Send" in footer()
