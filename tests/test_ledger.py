"""The ledger of every summarisation: a long scripted conversation with cells, `!` commands, `@` files and memory writes
is summarised again and again through the real session and SDK; whatever the folded turns held is in a ledger,
word for word, kept beside Anton's history file (which stays Anton's), shown to the summariser, and any folded turn
comes back verbatim into the next request with `unfold`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anton_tui.agent import events as ev
from anton_tui.agent.conversation_notes import ConversationNotes
from anton_tui.agent.history_store import HistoryStore
from anton_tui.agent.ledger import Ledger, build_ledger, files_opened, ledger_brief, unfold_note
from anton_tui.agent.messages import COMPACTED_MARKER
from anton_tui.agent.shell import ShellRecord
from anton_tui.agent.summarise import SUMMARY_SYSTEM
from anton_tui.memory.engrams.engram import Engram
from tests.conversation_script import ScriptedTurn, request_text, responder, scripted_turns, ticket
from tests.session_helpers import CODER, PLANNER, make_session, user_text_of

TURNS = 40
WINDOW = 8000


async def drive(session, turn: ScriptedTurn) -> list:
    events = []
    async for event in session.turn(turn.text, notes=turn.notes):
        events.append(event)
        if isinstance(event, ev.MemoryConfirmationNeeded):
            event.future.set_result(list(event.engrams))
    return events


def summarising_session(fake_llm, project: Path, turns: list[ScriptedTurn]):
    fake_llm.responder = responder(turns, PLANNER, lambda request: "## Goal\n- keep the regions in euros")
    return make_session(fake_llm, episodic_memory=True, context_window=WINDOW, context_pressure_threshold=0.7)


@pytest.fixture
async def long_conversation(fake_llm, project_dir):
    turns = scripted_turns(TURNS, project_dir)
    session = summarising_session(fake_llm, project_dir, turns)
    events = []
    for turn in turns:
        events += await drive(session, turn)
    yield session, turns, events
    await session.close()


async def test_everything_the_folded_turns_held_is_in_a_ledger_word_for_word(long_conversation, project_dir, fake_llm):
    session, turns, events = long_conversation
    summarised = [e for e in events if isinstance(e, ev.HistorySummarised)]
    assert len(summarised) >= 3, "the conversation was summarised several times"
    ledgers = ConversationNotes(project_dir / ".anton" / "episodes").ledgers(session.session_id)
    assert [ledger.to_json() for ledger in ledgers] == [e.ledger.to_json() for e in summarised]

    folded_numbers = [number for ledger in ledgers for number, _ in ledger.user_messages]
    kept = {t.text for t in session.user_turns()}
    folded = [turn for turn in turns if turn.text not in kept]
    assert folded and [t.number for t in folded] == folded_numbers == list(range(1, len(folded) + 1))
    by_number = {turn.number: turn for turn in turns}
    for number, text in (pair for ledger in ledgers for pair in ledger.user_messages):
        assert text == by_number[number].text  # every message typed, as typed

    commands = [(c.turn, c.command, c.status) for ledger in ledgers for c in ledger.commands]
    assert commands == [(t.number, t.command, "exit code 0") for t in folded if t.command]
    cells = [cell for ledger in ledgers for cell in ledger.cells]
    assert [(c.turn, c.code) for c in cells] == [(t.number, t.cell) for t in folded if t.cell]
    for cell in cells:  # each with its own output, as the model read it
        assert cell.success and f"{ticket(cell.turn)} 3 feb," in cell.output_head, cell.output_head
    files = {(f.turn, f.path, f.how) for ledger in ledgers for f in ledger.files}
    named = {(t.number, t.mentioned, "@") for t in folded if t.mentioned}
    opened = {(t.number, t.cell_file, "cell") for t in folded if t.cell_file and t.cell_file != t.mentioned}
    assert files == named | opened  # a file both named and opened in a turn is listed once, as named
    writes = [(w.turn, w.text) for ledger in ledgers for w in ledger.memory_writes]
    assert writes == [(t.number, t.memory) for t in folded if t.memory]
    assert {c.name for ledger in ledgers for c in ledger.tool_calls} == {"memorize"}

    # the folded turns themselves are kept exactly: the first one starts with the user's message as it was sent
    first = ledgers[0].turns[0]
    assert first.messages[0] == {"role": "user", "content": turns[0].text}


async def test_antons_history_file_holds_only_messages_and_the_ledgers_live_beside_it(long_conversation, project_dir):
    session, _turns, _events = long_conversation
    episodes = project_dir / ".anton" / "episodes"
    raw = (episodes / f"{session.session_id}_history.json").read_bytes()
    assert raw == json.dumps(session.history, ensure_ascii=False).encode()
    saved = json.loads(raw)
    assert saved[0]["content"].startswith(COMPACTED_MARKER)
    assert all(set(message) == {"role", "content"} for message in saved)
    assert b"LEDGER" not in raw
    assert sorted(p.name for p in episodes.glob("*_history.json")) == [f"{session.session_id}_history.json"]
    assert (episodes / "conversations" / f"{session.session_id}.ledgers.jsonl").is_file()
    listed = HistoryStore(episodes).list_sessions()
    assert [row.session_id for row in listed] == [session.session_id]


async def test_the_summariser_is_shown_the_ledger_before_the_turns(long_conversation, fake_llm):
    _session, turns, events = long_conversation
    requests = [r for r in fake_llm.requests_for(CODER) if r.system == SUMMARY_SYSTEM]
    first = request_text(requests[0])
    ledger = next(e for e in events if isinstance(e, ev.HistorySummarised)).ledger
    assert "LEDGER OF THE TURNS TO FOLD IN" in first
    assert first.index("LEDGER OF THE TURNS TO FOLD IN") < first.index("NEW TURNS TO FOLD IN")
    for command in ledger.commands:
        assert f"$ {command.command} (exit code 0)" in first
    for number, text in ledger.user_messages:
        assert f"{number}. {text}" in first


async def test_the_chat_is_told_before_older_turns_are_summarised(long_conversation):
    _session, _turns, events = long_conversation
    kinds = [type(e) for e in events if isinstance(e, ev.SummaryAhead | ev.HistorySummarising)]
    assert kinds[0] is ev.SummaryAhead
    ahead = next(e for e in events if isinstance(e, ev.SummaryAhead))
    assert ahead.tokens >= 0.8 * ahead.at_tokens


async def test_an_unfolded_turn_is_in_the_next_request_exactly_as_it_was(long_conversation, fake_llm):
    session, turns, _events = long_conversation
    folded = session.unfold(3)
    assert folded.text == turns[2].text and folded.messages[0]["content"] == turns[2].text
    next_turn = ScriptedTurn(TURNS + 1, f"Turn {TURNS + 1}: what did turn 3 do again?")
    await drive(session, next_turn)
    request = next(r for r in fake_llm.requests_for(PLANNER) if next_turn.text in json.dumps(r.messages[-1]))
    sent = user_text_of(request)
    for message in folded.messages:
        assert json.dumps(message, ensure_ascii=False) in sent
    with pytest.raises(LookupError, match="ledgers hold turns"):
        session.unfold(10_000)


async def test_a_resumed_conversation_brings_its_ledgers_back(long_conversation, fake_llm, project_dir):
    session, turns, _events = long_conversation
    count = len(session.conversation.ledgers.ledgers)
    other = summarising_session(fake_llm, project_dir, turns)
    try:
        resumed = await other.resume(session.session_id)
        assert resumed.ledgers == count
        assert other.unfold(1).text == turns[0].text
    finally:
        await other.close()


# ---- the ledger of given messages ----------------------------------------------------------------------------


def test_a_ledger_reads_notes_calls_and_results_word_for_word(project_dir):
    shell = ShellRecord("make test", "x" * 5000 + "\nFAILED", 2).note()
    folded = [
        {"role": "user", "content": [{"type": "text", "text": "[2026-11-25 08:50] run it, see @src/app.py"},
                                     {"type": "text", "text": shell}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "id": "a", "name": "scratchpad",
             "input": {"action": "exec", "name": "etl", "code": "import pandas as pd\ndf = pd.read_csv('in.csv')"}},
            {"type": "tool_use", "id": "b", "name": "recall", "input": {"query": "etl"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "H" * 700 + "T" * 700, "is_error": True},
            {"type": "tool_result", "tool_use_id": "b", "content": "nothing"},
        ]},
        {"role": "assistant", "content": "It failed."},
    ]
    ledger = build_ledger(folded, 5, memory_writes=[(0, _write("Prefer uv", "cerebellum"))])
    assert ledger.user_messages == ((5, "run it, see @src/app.py"),)  # without Anton's time stamp
    assert [(c.command, c.status) for c in ledger.commands] == [("make test", "exit code 2")]
    (cell,) = ledger.cells
    assert (cell.pad, cell.success, cell.output_head, cell.output_tail) == ("etl", False, "H" * 600, "T" * 600)
    assert [(f.path, f.how) for f in ledger.files] == [("src/app.py", "@"), ("in.csv", "cell")]
    assert [(c.name, c.arguments) for c in ledger.tool_calls] == [("recall", {"query": "etl"})]
    assert [(w.turn, w.text, w.producer) for w in ledger.memory_writes] == [(5, "Prefer uv", "cerebellum")]
    assert Ledger.from_json(json.loads(json.dumps(ledger.to_json()))) == ledger
    assert "$ make test (exit code 2)" in ledger_brief(ledger)
    assert unfold_note(ledger.turns[0]).splitlines()[1:] == [json.dumps(m, ensure_ascii=False) for m in folded]


def test_files_opened_by_code_are_found_even_when_it_does_not_parse():
    code = "from pathlib import Path\nx = Path('a.txt').read_text()\nwith open(\"b.json\") as f: pass\nnp.load('c.npy')"
    assert files_opened(code) == ["a.txt", "b.json", "c.npy"]
    assert files_opened("open('broken.txt'  # unclosed") == ["broken.txt"]


def _write(text: str, producer: str):
    from anton_tui.agent.ledger import MemoryWriteEntry

    engram = Engram(text=text, kind="lesson", scope="project")
    return MemoryWriteEntry(0, engram.text, engram.kind, engram.scope, producer)


def test_memory_a_learner_wrote_during_a_turn_goes_into_that_turns_ledger():
    from anton_tui.agent.ledger_book import LedgerBook

    book = LedgerBook()
    first = {"role": "user", "content": "read the sales file"}
    second = {"role": "user", "content": "now plot it"}
    history = [first, {"role": "assistant", "content": "Read."}, second, {"role": "assistant", "content": "Plotted."}]
    book.turn_began(first)
    book.memory_written([Engram(text="Sales files use ; as separator", kind="lesson")], "cerebellum")
    book.memory_written([Engram(text="Asked to remember", kind="lesson")], "memorize")  # read from the calls instead
    book.turn_began(second)
    book.memory_written([Engram(text="Plots go in plots/", kind="lesson", scope="global")], "consolidator")

    ledger = book.build(history[:2])
    assert [(w.turn, w.text, w.producer) for w in ledger.memory_writes] == [
        (1, "Sales files use ; as separator", "cerebellum")]  # fmt: skip
    book.add(ledger)
    later = book.build(history[2:])
    assert [(w.turn, w.text, w.scope) for w in later.memory_writes] == [(2, "Plots go in plots/", "global")]
    assert book.folded_turns == 1 and later.first_turn == 2
