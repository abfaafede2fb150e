"""Conversations that end in a summary, with the scripted LLM server: when a conversation ends (a new one, a resume
of another, the app quitting) its summary is written beside it, never into Anton's history file, and the next
conversation's request carries it with the titles and dates of the last three conversations; a summary cut short at
exit is written at the next start."""

from __future__ import annotations

import asyncio
import time

from anton_tui.agent.conversation_summary import SUMMARY_SYSTEM
from anton_tui.memory.episodes.summaries import ConversationSummary, SummaryFiles
from anton_tui.runtime import Runtime
from tests.fakellm import Reply
from tests.session_helpers import CODER, PLANNER, make_session, quiet_coder, run_turn, settle

RECORD = {
    "title": "Invoices import plan",
    "topics": ["importing the shop's invoices"],
    "decisions": ["read the CSV with sep=';' (the export uses it)"],
    "preferences": ["the user wants totals in EUR"],
    "pending": ["match the totals against the PDFs"],
}


def answer_summaries(fake_llm, records: list[dict], *, delay: float = 0.0) -> list:
    """The coder answers the learners with nothing, and each SummaryDraft request with the next record."""
    quiet_coder(fake_llm)
    learners = fake_llm.responder
    asked: list = []

    def respond(request):
        if request.model == CODER and request.system == SUMMARY_SYSTEM:
            asked.append(request)
            record = records.pop(0) if records else RECORD
            return Reply.tool_call("SummaryDraft", record, delay=delay)
        return learners(request)

    fake_llm.responder = respond
    return asked


def earlier(project_dir, session_id: str, title: str, day: str) -> None:
    SummaryFiles(project_dir / ".anton" / "conversations").write(ConversationSummary(
        session_id, title, f"{day}T09:00:00+00:00", f"{day}T10:00:00+00:00", 3, "## Topics\n- something"))  # fmt: skip


async def test_the_next_conversation_starts_with_the_summary_and_the_last_three_titles(fake_llm, project_dir):
    earlier(project_dir, "20261101_090000", "Coingecko prices", "2026-11-01")
    earlier(project_dir, "20261110_090000", "Plotting sales by region", "2026-11-10")
    asked = answer_summaries(fake_llm, [dict(RECORD)])
    session = make_session(fake_llm, episodic_memory=True)
    fake_llm.queue(Reply.text("Let's read the invoices with pandas."), model=PLANNER)
    await run_turn(session, "How should we import the shop's invoices?")
    ended = session.session_id
    history_file = session.history_store.history_path(ended)
    saved = history_file.read_bytes()

    session.new_conversation()
    await settle(session)

    summary_file = project_dir / ".anton" / "conversations" / f"{ended}.md"
    text = summary_file.read_text()
    assert text.startswith("---\nsession: ") and "title: Invoices import plan" in text
    assert "## Decisions\n- read the CSV with sep=';' (the export uses it)" in text
    assert "## Pending\n- match the totals against the PDFs" in text
    assert history_file.read_bytes() == saved, "Anton's history file is left as it was"
    assert "How should we import the shop's invoices?" in str(asked[0].messages)

    fake_llm.queue(Reply.text("Yes."), model=PLANNER)
    await run_turn(session, "Shall we go on?")
    system = fake_llm.requests_for(PLANNER)[-1].system
    today = SummaryFiles(summary_file.parent).read(ended).date
    assert (f'"Invoices import plan" ({today}), "Plotting sales by region" (2026-11-10), '
            f'"Coingecko prices" (2026-11-01)') in system  # fmt: skip
    assert '### The previous conversation: "Invoices import plan"' in system
    assert "- the user wants totals in EUR" in system
    await session.close()


async def test_resuming_another_conversation_ends_this_one(fake_llm, project_dir):
    answer_summaries(fake_llm, [dict(RECORD, title="First talk"), dict(RECORD, title="Second talk")])
    session = make_session(fake_llm, episodic_memory=True)
    fake_llm.queue(Reply.text("One."), Reply.text("Two."), model=PLANNER)
    await run_turn(session, "first")
    first = session.session_id
    session.new_conversation()
    await settle(session)
    await run_turn(session, "second")
    second = session.session_id
    await session.resume(first)
    await settle(session)
    folder = project_dir / ".anton" / "conversations"
    assert "title: First talk" in (folder / f"{first}.md").read_text()
    assert "title: Second talk" in (folder / f"{second}.md").read_text()
    fake_llm.queue(Reply.text("Back."), model=PLANNER)
    await run_turn(session, "and now?")
    system = fake_llm.requests_for(PLANNER)[-1].system
    assert '"Second talk"' in system and "### The previous conversation" not in system, (
        "a resumed conversation has its own history: no previous summary is added"
    )
    await session.close()


async def test_quitting_waits_a_moment_at_most_and_the_next_start_writes_the_summary(fake_llm, project_dir):
    asked = answer_summaries(fake_llm, [dict(RECORD, title="Cut short")], delay=6.0)
    session = make_session(fake_llm, episodic_memory=True)
    runtime = Runtime(make_settings_for(fake_llm), session, control=session)
    await runtime.warm_up()
    fake_llm.queue(Reply.text("Done."), model=PLANNER)
    await run_turn(session, "summarise the invoices")
    ended = session.session_id
    started = time.monotonic()
    await runtime.close()
    assert time.monotonic() - started < 3.0, "quitting does not wait for the model"
    summary_file = project_dir / ".anton" / "conversations" / f"{ended}.md"
    assert asked and not summary_file.exists()

    answer_summaries(fake_llm, [dict(RECORD, title="Written at the next start")])
    restarted = make_session(fake_llm, episodic_memory=True)
    again = Runtime(make_settings_for(fake_llm), restarted, control=restarted)
    await again.warm_up()
    await asyncio.wait_for(restarted.wait_background(), 10)
    assert "title: Written at the next start" in summary_file.read_text()
    await again.close()


def make_settings_for(fake_llm):
    from tests.session_helpers import make_settings

    return make_settings(fake_llm, episodic_memory=True)


class FakeTime:
    """Stands in for the `time` module of the reflection service: its clock moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_a_conversation_left_idle_is_summarised_and_again_after_more_turns(fake_llm, project_dir, monkeypatch):
    from anton_tui.runtime import reflection as service

    clock = FakeTime()
    monkeypatch.setattr(service, "time", clock)
    monkeypatch.setattr(service, "IDLE_CHECK", 0.05)
    answer_summaries(fake_llm, [dict(RECORD, title="Before the break"), dict(RECORD, title="After the break")])
    settings = make_settings_for(fake_llm).model_copy(update={"conversation_idle_minutes": 30, "reflection": False})
    session = make_session(fake_llm, episodic_memory=True)
    runtime = Runtime(settings, session, control=session)
    await runtime.warm_up()
    fake_llm.queue(Reply.text("One."), Reply.text("Two."), model=PLANNER)
    await run_turn(session, "first question")
    await asyncio.sleep(0.5)  # the idle watch sees the turn at its clock's time before the test moves the clock
    summary_file = project_dir / ".anton" / "conversations" / f"{session.session_id}.md"

    async def idle_for(minutes: float, title: str | None) -> None:
        """Let `minutes` pass; with `title`, wait (up to 20 s) for the summary to carry it."""
        clock.now += minutes * 60
        if title is None:
            await asyncio.sleep(0.5)  # ten looks at the clock
            return
        for _ in range(400):
            await asyncio.sleep(0.05)
            if summary_file.exists() and f"title: {title}" in summary_file.read_text():
                return

    await idle_for(10, None)
    assert not summary_file.exists(), "ten minutes is no idle gap yet"
    await idle_for(25, "Before the break")
    assert "title: Before the break" in summary_file.read_text()
    await run_turn(session, "back again")  # taken up again: out of date, summarised at the next gap
    await asyncio.sleep(0.5)
    await idle_for(31, "After the break")
    assert "title: After the break" in summary_file.read_text()
    await runtime.close()


async def test_a_summarised_conversation_is_listed_by_its_title(fake_llm, project_dir):
    answer_summaries(fake_llm, [dict(RECORD)])
    session = make_session(fake_llm, episodic_memory=True)
    runtime = Runtime(make_settings_for(fake_llm), session, control=session)
    fake_llm.queue(Reply.text("One."), Reply.text("Two."), model=PLANNER)
    await run_turn(session, "How should we import the shop's invoices?")
    ended = session.session_id
    session.new_conversation()
    await settle(session)
    await run_turn(session, "Something else entirely")
    rows = {row.session_id: row.preview for row in await runtime.list_conversations()}
    assert rows[ended] == "Invoices import plan"
    assert rows[session.session_id] == "Something else entirely", "not summarised yet: its first message"
    await session.close()
