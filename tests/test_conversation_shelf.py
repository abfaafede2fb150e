"""Handling saved conversations without the app: rename, delete to a 30-day trash and restore, fork at one of the
user's messages (a fork Anton itself lists and resumes), a tree of forks, export to Markdown with the ledgers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from anton_tui.agent.conversation_shelf import ConversationShelf, fork_tree
from anton_tui.agent.history_store import HistoryStore
from anton_tui.agent.messages import COMPACTED_MARKER
from anton_tui.agent.trash import KEEP_DAYS
from tests.conversation_script import ScriptedTurn, responder, scripted_turns
from tests.fakellm import Reply
from tests.session_helpers import PLANNER, make_session, run_turn
from tests.test_ledger import drive

FIXTURES = Path(__file__).parent / "fixtures" / "anton_histories"
ANTON_PYTHON = Path(os.environ.get("ANTON_AGENT_PYTHON", "/work/anton-venv/bin/python"))


@pytest.fixture
def episodes(project_dir: Path) -> Path:
    return project_dir / ".anton" / "episodes"


async def converse(fake_llm, project: Path, count: int, **settings) -> tuple[str, list[ScriptedTurn]]:
    """A saved conversation of `count` scripted turns (cells, commands, files); returns its id."""
    turns = scripted_turns(count, project)
    fake_llm.responder = responder(turns, PLANNER, lambda request: "## Goal\n- keep the regions in euros")
    session = make_session(fake_llm, episodic_memory=True, **settings)
    try:
        for turn in turns:
            await drive(session, turn)
        return str(session.session_id), turns
    finally:
        await session.close()


async def test_rename_keeps_the_title_beside_antons_file(fake_llm, project_dir, episodes):
    session_id, _ = await converse(fake_llm, project_dir, 2)
    history = episodes / f"{session_id}_history.json"
    before = history.read_bytes()
    shelf = ConversationShelf(episodes)
    shelf.rename(session_id, "  Regions   in euros ")
    assert [row.title for row in shelf.rows()] == ["Regions in euros"]
    assert history.read_bytes() == before
    shelf.rename(session_id, "")
    assert shelf.rows()[0].title is None
    with pytest.raises(LookupError):
        shelf.rename("20200101_000000", "nothing")


async def test_delete_goes_to_the_trash_and_restore_brings_it_back_byte_for_byte(fake_llm, project_dir, episodes):
    session_id, _ = await converse(fake_llm, project_dir, 2)
    shelf = ConversationShelf(episodes)
    shelf.rename(session_id, "kept")
    files = {path.name: path.read_bytes() for path in shelf.files(session_id)}
    assert set(files) == {f"{session_id}_history.json", f"{session_id}.jsonl", f"{session_id}.json"}

    trashed = shelf.delete(session_id)
    assert trashed.expires - trashed.deleted == timedelta(days=KEEP_DAYS)
    assert shelf.rows() == [] and shelf.files(session_id) == []
    assert not list(episodes.glob("*.jsonl")), "gone from episode search too"

    shelf.restore(session_id)
    assert {path.name: path.read_bytes() for path in shelf.files(session_id)} == files
    assert [(row.session_id, row.title) for row in shelf.rows()] == [(session_id, "kept")]
    with pytest.raises(LookupError, match="trash"):
        shelf.restore(session_id)


async def test_a_deleted_conversation_is_kept_thirty_days_and_not_restored_over_a_new_one(episodes):
    store = HistoryStore(episodes)
    store.save("20261125_085000", json.loads((FIXTURES / "20261125_085000_history.json").read_text()))
    shelf = ConversationShelf(episodes)
    shelf.delete("20261125_085000")
    soon = datetime.now(UTC) + timedelta(days=KEEP_DAYS - 1)
    assert [item.session_id for item in shelf.trash.items(now=soon)] == ["20261125_085000"]

    store.save("20261125_085000", [{"role": "user", "content": "a new one"}, {"role": "assistant", "content": "ok"}])
    with pytest.raises(FileExistsError):
        shelf.restore("20261125_085000")
    assert store.load("20261125_085000")[0][0]["content"] == "a new one"

    later = datetime.now(UTC) + timedelta(days=KEEP_DAYS, minutes=1)
    assert shelf.trash.items(now=later) == []
    assert not (episodes / "trash" / "20261125_085000").exists()


async def test_a_fork_holds_the_conversation_up_to_the_chosen_message_and_links_to_it(fake_llm, project_dir, episodes):
    session_id, turns = await converse(fake_llm, project_dir, 3)
    shelf = ConversationShelf(episodes)
    parent = shelf.show(session_id).history
    fork = shelf.fork(session_id, at=2)
    forked = shelf.show(fork.session_id)
    third = next(i for i, m in enumerate(parent) if m["role"] == "user" and m["content"] == turns[2].text)
    assert forked.history == parent[:third]  # turns 1 and 2, with every call and result
    assert (forked.row.parent, forked.row.forked_at, fork.at) == (session_id, 2, 2)
    assert shelf.show(session_id).history == parent, "the original stays as it was"

    whole = shelf.fork(session_id)  # at the last message: the whole conversation
    assert shelf.show(whole.session_id).history == parent
    nested = shelf.fork(fork.session_id, at=1)
    tree = [(row.session_id, depth) for row, depth in shelf.tree()]
    assert tree[0] == (session_id, 0)
    assert (fork.session_id, 1) in tree and (whole.session_id, 1) in tree
    assert tree.index((nested.session_id, 2)) == tree.index((fork.session_id, 1)) + 1
    with pytest.raises(ValueError, match="no message 4"):
        shelf.fork(session_id, at=4)

    shelf.delete(session_id)  # a fork whose parent went stands at the top
    assert (fork.session_id, 0) in [(row.session_id, depth) for row, depth in fork_tree(shelf.rows())]


async def test_a_fork_of_a_summarised_conversation_keeps_its_summary_and_ledgers(fake_llm, project_dir, episodes):
    session_id, turns = await converse(fake_llm, project_dir, 14, context_window=8000, context_pressure_threshold=0.7)
    shelf = ConversationShelf(episodes)
    view = shelf.show(session_id)
    assert view.ledgers and view.history[0]["content"].startswith(COMPACTED_MARKER)
    fork = shelf.fork(session_id, at=1)
    forked = shelf.show(fork.session_id)
    assert forked.ledgers == view.ledgers
    assert forked.summary == view.summary

    session = make_session(fake_llm, episodic_memory=True)
    try:
        resumed = await session.resume(fork.session_id)
        assert resumed.ledgers == len(view.ledgers)
        assert session.unfold(1).text == turns[0].text
    finally:
        await session.close()


@pytest.mark.skipif(not ANTON_PYTHON.exists(), reason="no anton-agent 2.26.10.26.1 venv (set ANTON_AGENT_PYTHON)")
async def test_anton_lists_and_resumes_a_fork_made_here(fake_llm, project_dir, episodes):
    session_id, turns = await converse(fake_llm, project_dir, 3)
    fork = ConversationShelf(episodes).fork(session_id, at=2)
    result = subprocess.run(
        [str(ANTON_PYTHON), str(FIXTURES / "anton_side.py"), "resume", str(episodes), fork.session_id],
        capture_output=True, text=True, timeout=300, env={"PATH": os.environ["PATH"], "HOME": str(project_dir)},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["listed"] and report["loaded"] and report["unchanged_on_load"] and report["saved_prefix_kept"]
    assert report["answer"] == "Carrying on from the fork."
    assert report["model_saw_first"]["content"] == turns[0].text
    assert report["saved_messages"] == fork.messages + 2  # Anton's own turn went on in the fork's file


async def test_export_is_markdown_with_messages_cells_tool_calls_and_ledgers(fake_llm, project_dir, episodes):
    session_id, turns = await converse(fake_llm, project_dir, 14, context_window=8000, context_pressure_threshold=0.7)
    shelf = ConversationShelf(episodes)
    shelf.rename(session_id, "Regions in euros")
    text = shelf.export(session_id)
    view = shelf.show(session_id)
    assert text.startswith("# Regions in euros\n")
    assert "## Earlier turns, summarised" in text and "### Ledger 1: turns 1–" in text
    assert turns[0].text in text, "a folded message, from the ledger"
    assert f"`{turns[3].command}` (exit code 0)" in text
    last = view.entries[-1]
    assert last.text.strip() in text
    kept_cells = [t for t in turns if t.cell and t.text in {e.text for e in view.entries if e.kind == "user"}]
    assert kept_cells and f"```python\n{kept_cells[-1].cell}\n```" in text
    assert "**Tool call `memorize`**" in text or "#### Memory written" in text


async def test_a_turn_cancelled_before_any_answer_is_exported_and_shown_as_cancelled(fake_llm, project_dir, episodes):
    fake_llm.queue(Reply.text("Too late.", delay=30), Reply.text("Paris."), model=PLANNER)
    session = make_session(fake_llm, episodic_memory=True)
    try:
        cancelled = asyncio.create_task(run_turn(session, "Write me a long essay."))
        while not fake_llm.requests_for(PLANNER):
            await asyncio.sleep(0.01)
        assert session.cancel()
        await cancelled
        await run_turn(session, "What is the capital of France?")
        session_id = str(session.session_id)
    finally:
        await session.close()
    shelf = ConversationShelf(episodes)

    assert [(entry.kind, entry.text) for entry in shelf.show(session_id).entries] == [
        ("user", "Write me a long essay."), ("cancelled", "Turn cancelled."),
        ("user", "What is the capital of France?"), ("answer", "Paris.")]  # fmt: skip
    exported = shelf.export(session_id)
    assert "*Turn cancelled.*" in exported and "(cancelled)" not in exported
