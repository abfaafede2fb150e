"""A request too long for the model's window says what was cut to make it fit: a huge pasted message is cut in the
middle (its head and tail kept) and the notice names the message and by how much; a huge tool result is still cut
down and named as a tool result; a `!` command's long output is named as such. Real session, real SDKs, the
scripted LLM server."""

from __future__ import annotations

import json

import pytest

from anton_tui.agent import events as ev
from anton_tui.agent.context_cuts import cut_largest
from anton_tui.agent.mentions import MentionCheck
from anton_tui.agent.shell import ShellRecord
from anton_tui.agent.summarise import RESULT_STUB
from tests.fakellm import Reply
from tests.fakellm.script import RecordedRequest
from tests.session_helpers import PLANNER, make_session, of_type, run_turn

WINDOW = 32_768  # what a model missing from the table is taken to hold
SHARE = 0.7
QUESTION = "Please read this build log and tell me what failed first."
CLOSING = "What failed first, and why?"
LOG_LINE = 'step {n:05d}: compiling module "core/part_{n}.py" ... ok\n'


def pasted_log(size: int = 300_000) -> str:
    lines, total, number = [], 0, 0
    while total < size:
        line = LOG_LINE.format(n=number)
        lines.append(line)
        total += len(line)
        number += 1
    return "".join(lines)


def body_tokens(request: RecordedRequest) -> int:
    """What the scripted server charges for a request: 4 characters a token, everything sent counted."""
    return len(json.dumps(request.body)) // 4


def sent_text(request: RecordedRequest) -> str:
    return json.dumps(request.messages, ensure_ascii=False)


def answering(fake_llm) -> None:
    fake_llm.responder = lambda request: Reply.text("Step 4 failed first.") if request.model == PLANNER else None


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_300_kb_pasted_message_is_cut_in_the_middle_and_the_notice_names_the_message(fake_llm, provider):
    answering(fake_llm)
    session = make_session(fake_llm, provider=provider, context_window=WINDOW, context_pressure_threshold=SHARE)
    await run_turn(session, "first, which branch are we on?")
    pasted = f"{QUESTION}\n\n{pasted_log()}\n{CLOSING}"

    events = await run_turn(session, pasted)

    [trimmed] = of_type(events, ev.HistoryTrimmed)
    [cut] = trimmed.cut
    assert cut.what == "your message" and cut.kind == "message"
    assert cut.chars_before == len(pasted) and cut.chars_after < len(pasted) // 4
    assert f"your message was cut from {len(pasted):,} to {cut.chars_after:,} characters" in trimmed.notice
    assert "tool result" not in trimmed.notice and "dropped" not in trimmed.notice
    assert trimmed.stubbed == 0 and trimmed.dropped == 0
    assert not of_type(events, ev.HistorySummarised), "the conversation is not folded for one long paste"

    request = fake_llm.requests_for(PLANNER)[-1]
    assert request.outcome == "answered" and body_tokens(request) <= int(WINDOW * SHARE)
    text = sent_text(request)
    assert QUESTION in text and CLOSING in text, "the head and the tail of the message are sent"
    assert "characters of this message were cut here" in text
    assert "first, which branch are we on?" in text, "the earlier turn is still sent word for word"
    assert of_type(events, ev.TurnFinished)[0].stop_reason == "end_turn"

    saved = session.history
    assert [m["role"] for m in saved] == ["user", "assistant", "user", "assistant"]
    assert isinstance(saved[2]["content"], str) and saved[2]["content"].endswith(CLOSING)


async def test_a_huge_tool_result_is_named_as_a_tool_result_not_as_the_message(fake_llm):
    answering(fake_llm)
    session = make_session(fake_llm, context_window=WINDOW, context_pressure_threshold=SHARE)
    session.history[:] = [
        {"role": "user", "content": "dump the table"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_big", "name": "scratchpad",
                                           "input": {"action": "exec", "name": "main", "code": "print(rows)"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big",
                                      "content": "row\n" * 75_000}]},
        {"role": "assistant", "content": "That is 75,000 rows."},
    ]

    events = await run_turn(session, "how many were empty?")

    [trimmed] = of_type(events, ev.HistoryTrimmed)
    assert trimmed.stubbed == 1 and trimmed.cut == ()
    assert "1 large tool result cut down" in trimmed.notice and "your message" not in trimmed.notice
    request = fake_llm.requests_for(PLANNER)[-1]
    assert RESULT_STUB in sent_text(request) and "how many were empty?" in sent_text(request)
    assert request.outcome == "answered"


async def test_a_long_command_output_added_to_the_message_is_named_as_the_command_output(fake_llm):
    answering(fake_llm)
    session = make_session(fake_llm, context_window=WINDOW, context_pressure_threshold=SHARE)
    note = ShellRecord("cat huge.log", pasted_log(), exit_code=0).note()  # output capped by the caller, as if not
    events = []
    async for event in session.turn("what does the log say?", [note]):
        events.append(event)

    [trimmed] = of_type(events, ev.HistoryTrimmed)
    [cut] = trimmed.cut
    assert cut.what == "the output of your ! command" and cut.kind == "note"
    assert "the output of your ! command was cut from" in trimmed.notice and "your message" not in trimmed.notice
    request = fake_llm.requests_for(PLANNER)[-1]
    assert "what does the log say?" in sent_text(request) and request.outcome == "answered"


def test_the_largest_part_goes_first_whichever_kind_it_is():
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 5_000}
    history = [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "scratchpad", "input": {}}]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "y" * 60_000},
    ]
    turn = history[-1]
    cuts = cut_largest(history, 40_000, turn_message=turn)
    assert cuts.stubbed == 0, "the small tool result stays: the message was the cause"
    assert [cut.what for cut in cuts.texts] == ["your message"]
    assert cuts.history[2]["content"] == [result]
    assert len(json.dumps(cuts.history)) <= 40_000 and turn["content"].startswith("y" * 1000)


def test_a_long_note_on_the_at_files_is_named_as_that_note_and_the_typed_text_stays_whole():
    note = MentionCheck(files=tuple((f"src/module_{n}.py", 100) for n in range(3_000)), refused=()).note
    assert note is not None and len(note) > 60_000
    typed = "compare all of these, please"
    turn = {"role": "user", "content": [{"type": "text", "text": typed}, {"type": "text", "text": note}]}
    cuts = cut_largest([turn], 30_000, turn_message=turn)
    [cut] = cuts.texts
    assert cut.what == "the note on your @ files" and cut.kind == "note" and cut.chars_before == len(note)
    assert turn["content"][0] == {"type": "text", "text": typed}
    assert "characters of this note were cut here" in turn["content"][1]["text"]
