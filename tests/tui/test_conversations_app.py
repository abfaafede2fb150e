"""Handling conversations in the app: the notice before older turns are summarised, the summary block that opens to
its ledger (Enter on a message brings that turn back into the next request, as `/unfold` does), `/conversation
rename|fork|export|delete|restore`, the resume screen's rename, fork, export, delete and undo, and forking at a
message picked in the chat. Snapshots of the summary block with its ledger at 120×40 and 80×24."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from anton_tui.agent.conversation_notes import ConversationNotes
from anton_tui.agent.conversation_shelf import ConversationShelf
from anton_tui.agent.ledger import build_ledger
from anton_tui.agent.shell import ShellRecord
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.edit_entry import EditEntryScreen
from anton_tui.tui.screens.resume import ResumeScreen
from anton_tui.tui.widgets.summary_block import LedgerMessages, SummaryBlock
from tests.fakellm import Reply
from tests.session_helpers import answer_summaries, user_text_of
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    build_app,
    command_replies,
    main_screen,
    notices,
    project_dir,
    save_global_env,
    send_and_wait,
    type_in_prompt,
    user_messages,
    wait_for,
)

LONG_ANSWER = "The figures line up with last week's run. " * 60


def episodes() -> Path:
    return project_dir() / ".anton" / "episodes"


def last_reply(app) -> str:
    replies = command_replies(app)
    return replies[-1][1] if replies else ""


async def test_a_summary_opens_to_its_ledger_and_a_message_there_comes_back_in_the_next_request(fake_llm) -> None:
    save_global_env(fake_llm, ANTON_CONTEXT_WINDOW="6000", ANTON_CONTEXT_PRESSURE_THRESHOLD="0.5")
    answer_summaries(fake_llm, ["## Goal\n- compare the figures"] * 3)
    fake_llm.queue(*[Reply.text(LONG_ANSWER) for _ in range(14)], model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        for number in range(1, 13):
            await send_and_wait(pilot, f"question {number}: keep region {number} in euros")
            if app.screen.query(SummaryBlock):
                break
        ahead = [text for text in notices(app, "info") if "Older turns will be summarised at about" in text]
        assert ahead, "said before it happened"
        [block] = app.screen.query(SummaryBlock)
        assert "ledger: " in str(block.title)
        block.collapsed = False
        await wait_for(pilot, lambda: bool(block.query(LedgerMessages)), what="the ledger")
        options = block.query_one(LedgerMessages)
        assert "question 1: keep region 1 in euros" in str(options.get_option_at_index(0).prompt)
        options.focus()
        options.highlighted = 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Turn 2 goes back" in text for text in notices(app, "info")),
                       what="the notice that turn 2 comes back")  # fmt: skip
        folded = app.runtime.conversations.ledgers()[0].turn(2)
        await send_and_wait(pilot, "and what did turn 2 say?")
    sent = user_text_of(fake_llm.requests_for(PLANNER)[-1])
    assert all(json.dumps(message, ensure_ascii=False) in sent for message in folded.messages)


async def test_conversation_commands_rename_fork_export_delete_and_restore(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), Reply.text("In the fork."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "What is the capital of France?")
        await send_and_wait(pilot, "How many people live there?")
        first = app.runtime.conversations.current
        await type_in_prompt(pilot, "/conversation rename France facts")
        await wait_for(pilot, lambda: "titled 'France facts'" in last_reply(app), what="renamed")
        assert ConversationNotes(episodes()).about(first).title == "France facts"

        await type_in_prompt(pilot, "/conversation export")
        await wait_for(pilot, lambda: "Exported this conversation" in last_reply(app), what="exported")
        exported = project_dir() / f"conversation-{first}.md"
        assert exported.read_text().startswith("# France facts\n")
        assert "How many people live there?" in exported.read_text()

        await type_in_prompt(pilot, "/conversation fork 1")
        await wait_for(pilot, lambda: app.runtime.conversations.current != first, what="the fork continued")
        fork = app.runtime.conversations.current
        await wait_for(pilot, lambda: user_messages(app) == ["What is the capital of France?"], what="fork shown")
        await send_and_wait(pilot, "And in the fork?")
        shelf = ConversationShelf(episodes())
        assert [m["role"] for m in shelf.show(first).history] == ["user", "assistant"] * 2, "the original stays"
        assert len(shelf.show(fork).history) == 4 and shelf.row(fork).parent == first

        await type_in_prompt(pilot, f"/conversation delete {first}")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: f"Deleted {first}" in last_reply(app), what="deleted")
        assert first not in [row.session_id for row in shelf.rows()]
        await type_in_prompt(pilot, "/conversation restore")
        await wait_for(pilot, lambda: f"Restored {first}" in last_reply(app), what="restored")
        assert shelf.row(first).title == "France facts"


async def test_the_resume_screen_renames_forks_exports_and_deletes_with_undo(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("Paris."), Reply.text("Canberra."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "What is the capital of France?")
        first = app.runtime.conversations.current
        await type_in_prompt(pilot, "/clear")
        await send_and_wait(pilot, "What is the capital of Australia?")
        await type_in_prompt(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the list")
        screen = app.screen
        await pilot.press(*"france")
        await wait_for(pilot, lambda: screen.query_one("DataTable").row_count == 1, what="filtered")

        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen), what="the title box")
        await pilot.press(*"Capitals", "enter")
        await wait_for(pilot, lambda: "Renamed" in screen.said, what="renamed")
        await pilot.press("ctrl+e")
        await wait_for(pilot, lambda: "Exported" in screen.said, what="exported")
        assert (project_dir() / f"conversation-{first}.md").read_text().startswith("# Capitals\n")

        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: "Deleted" in screen.said, what="deleted")
        assert first not in [str(key.value) for key in screen.query_one("DataTable").rows]
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: "Restored" in screen.said, what="restored")
        assert first in [str(key.value) for key in screen.query_one("DataTable").rows]

        await pilot.press(*"france")
        await wait_for(pilot, lambda: screen.query_one("DataTable").row_count == 1, what="filtered again")
        await pilot.press("ctrl+f")
        await wait_for(pilot, lambda: app.runtime.conversations.current not in (None, first) and
                       user_messages(app) == ["What is the capital of France?"], what="the fork resumed")  # fmt: skip
        assert ConversationShelf(episodes()).row(app.runtime.conversations.current).parent == first


async def test_f_on_a_picked_message_forks_there_and_continues_in_the_fork(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "What is the capital of France?")
        await send_and_wait(pilot, "How many people live there?")
        first = app.runtime.conversations.current
        main_screen(app).chat.focus()
        await pilot.press("alt+up", "alt+up", "f")
        await wait_for(pilot, lambda: app.runtime.conversations.current != first, what="the fork")
        await wait_for(pilot, lambda: user_messages(app) == ["What is the capital of France?"], what="fork shown")
        assert ConversationShelf(episodes()).row(app.runtime.conversations.current).forked_at == 1


# ---- snapshots of a summary block opened to its ledger -----------------------------------------------------------


def sample_ledger():
    shell = ShellRecord("pytest -q tests/test_regions.py", "12 passed in 0.4s", 0).note()
    folded = [
        {"role": "user", "content": [{"type": "text", "text": "Load @data/sales.csv and keep the amounts in euros"},
                                     {"type": "text", "text": "[Files mentioned by the user with @, paths relative "
                                      "to the workspace folder. Read each one in a scratchpad before answering; they "
                                      "are not in this message.]\n- data/sales.csv (2.1 KB)"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "scratchpad", "input": {
            "action": "exec", "name": "main", "code": "import pandas as pd\ndf = pd.read_csv('data/sales.csv')"
                                                      "\nprint(df.shape)"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "(1204, 6)"}]},
        {"role": "assistant", "content": "Loaded 1,204 rows."},
        {"role": "user", "content": [{"type": "text", "text": "Never round before summing; group by region"},
                                     {"type": "text", "text": shell}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "memorize", "input": {
            "entries": [{"text": "Never round before summing", "kind": "never", "scope": "project"}]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "Memory updated"}]},
        {"role": "assistant", "content": "Grouped by region; the tests pass."},
    ]  # fmt: skip
    return build_ledger(folded, 1)


class SummaryHost(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield SummaryBlock("## Goal\n- regional sales in euros\n## Decisions\n- never round before summing",
                               "(8 messages, about 5,800 → 1,200 tokens)", [sample_ledger()])  # fmt: skip


async def _open(pilot) -> None:
    block = pilot.app.query_one(SummaryBlock)
    block.collapsed = False
    await pilot.pause()
    await pilot.pause()


def test_summary_block_with_its_ledger_snapshot(snap_compare) -> None:
    assert snap_compare(SummaryHost(), terminal_size=(120, 40), run_before=_open)


def test_summary_block_with_its_ledger_snapshot_small(snap_compare) -> None:
    assert snap_compare(SummaryHost(), terminal_size=(80, 24), run_before=_open)


async def test_enter_on_a_ledger_message_asks_for_that_turn() -> None:
    asked: list[int] = []

    class Host(SummaryHost):
        def on_summary_block_unfold_requested(self, message: SummaryBlock.UnfoldRequested) -> None:
            asked.append(message.number)

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        messages = app.query_one(LedgerMessages)
        messages.focus()
        messages.highlighted = 1
        await pilot.press("u")
        await pilot.pause()
    assert asked == [2]
