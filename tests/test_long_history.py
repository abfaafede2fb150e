"""Long conversations through the real session, the real SDKs and the scripted LLM server: the older turns are
summarised before a request would pass its share of the window, and a "too long" refusal is recovered from."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from anton_tui.agent import events as ev
from anton_tui.agent.summarise import COMPACTED_MARKER, SUMMARY_SYSTEM
from tests.fakellm import Reply
from tests.fakellm.script import RecordedRequest
from tests.session_helpers import CODER, PLANNER, EMPTY_ANSWERS, forced_tool, make_session, of_type, run_turn

WINDOW = 8000
SHARE = 0.7
ANSWER = "Here is what I found. " + "The figures line up with last week's run. " * 60  # ~2,500 characters


def body_tokens(request: RecordedRequest) -> int:
    """What the scripted server charges for a request: 4 characters a token, everything sent counted."""
    return len(json.dumps(request.body)) // 4


class Script:
    """Answers the planner with `planner(request)` (default: a long answer), the summariser with `summaries`
    (in turn; a Reply or a text) and the learning loops' structured calls with empty results."""

    def __init__(self, fake_llm, summaries: list | None = None,
                 planner: Callable[[RecordedRequest], Reply | None] | None = None) -> None:
        self.summaries = list(summaries or [f"## Goal\n- record {n}" for n in range(1, 20)])
        self.planner = planner
        fake_llm.responder = self

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if request.model == PLANNER:
            reply = self.planner(request) if self.planner else None
            return reply or Reply.text(ANSWER, usage=(body_tokens(request), 600))
        if request.system == SUMMARY_SYSTEM:
            answer = self.summaries.pop(0)
            return answer if isinstance(answer, Reply) else Reply.text(answer)
        name = forced_tool(request)
        if name in EMPTY_ANSWERS:
            return Reply.tool_call(name, EMPTY_ANSWERS[name])
        return None


def summary_requests(fake_llm) -> list[RecordedRequest]:
    return [r for r in fake_llm.requests_for(CODER) if r.system == SUMMARY_SYSTEM]


def conversation(request: RecordedRequest) -> list[dict]:
    """The messages of a request without the system prompt (which OpenAI's format carries as a message)."""
    return [m for m in request.messages if m.get("role") not in ("system", "developer")]


def first_text(request: RecordedRequest) -> str:
    content = request.messages[0]["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content


def long_session(fake_llm, provider: str = "anthropic", **overrides):
    overrides.setdefault("context_window", WINDOW)
    return make_session(fake_llm, provider=provider, context_pressure_threshold=SHARE, **overrides)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_older_turns_are_summarised_before_a_request_would_pass_its_share_of_the_window(fake_llm, provider):
    Script(fake_llm)
    session = long_session(fake_llm, provider)
    seen = []
    for number in range(1, 13):
        seen.append(await run_turn(session, f"question {number}: how do the figures compare?"))

    budget = int(WINDOW * SHARE)
    for request in fake_llm.requests_for(PLANNER):
        assert body_tokens(request) <= budget, "a request passed its share of the window"
    assert summary_requests(fake_llm), "nothing was summarised"

    summarised = [(n, e) for n, events in enumerate(seen, 1) for e in of_type(events, ev.HistorySummarised)]
    number, event = summarised[0]
    assert event.summary == "## Goal\n- record 1" and event.reason == "long"
    assert event.tokens_after < event.tokens_before and event.folded >= 2 and event.kept >= 4
    started = of_type(seen[number - 1], ev.HistorySummarising)
    assert started and seen[number - 1].index(started[0]) < seen[number - 1].index(event)

    # the request that followed starts with the record and ends with the question of its turn, word for word
    after = [r for r in fake_llm.requests_for(PLANNER)
             if COMPACTED_MARKER in json.dumps(conversation(r)[0], ensure_ascii=False)][0]
    assert "## Goal\n- record 1" in json.dumps(conversation(after)[0], ensure_ascii=False).replace("\\n", "\n")
    last = after.messages[-1]["content"]
    assert f"question {number}: how do the figures compare?" in json.dumps(last)
    assert session.summary.startswith("## Goal")
    assert all(e.stop_reason == "end_turn" for events in seen for e in of_type(events, ev.TurnFinished))


async def test_a_later_summary_updates_the_earlier_one_instead_of_summarising_it(fake_llm):
    Script(fake_llm)
    session = long_session(fake_llm)
    for number in range(1, 25):
        await run_turn(session, f"question {number}")
        if len(summary_requests(fake_llm)) >= 2:
            break
    first, second = summary_requests(fake_llm)[:2]
    assert not first_text(first).startswith("PREVIOUS RECORD")
    asked = first_text(second)
    assert asked.startswith("PREVIOUS RECORD") and "## Goal\n- record 1" in asked
    new_turns = asked.split("NEW TURNS TO FOLD IN:\n", 1)[1]
    assert COMPACTED_MARKER not in new_turns  # the old record is not summarised as if it were a turn
    markers = [m for m in session.history if COMPACTED_MARKER in json.dumps(m, ensure_ascii=False)]
    assert len(markers) == 1 and session.summary == "## Goal\n- record 2"


@pytest.mark.parametrize("failure", [
    Reply.error(500, "summariser down", headers={"x-should-retry": "false"}),
    Reply.text("   "),
], ids=["error", "empty"])
async def test_when_summarising_fails_the_oldest_turns_are_dropped_with_a_notice(fake_llm, failure):
    Script(fake_llm, summaries=[failure] * 20)
    session = long_session(fake_llm)
    trimmed = []
    for number in range(1, 13):
        trimmed += of_type(await run_turn(session, f"question {number}"), ev.HistoryTrimmed)
    assert trimmed, "nothing made room"
    notice = trimmed[0]
    assert notice.dropped > 0 and notice.notice.startswith("Summarising failed:")
    assert f"the {notice.dropped} oldest messages were dropped" in notice.notice
    assert notice.tokens_after < notice.tokens_before
    for request in fake_llm.requests_for(PLANNER):
        assert body_tokens(request) <= int(WINDOW * SHARE)
    text = json.dumps(session.history[0], ensure_ascii=False)
    assert COMPACTED_MARKER in text and "earlier messages were dropped" in text
    # one failure per turn is enough: the turn does not ask the summariser again
    per_turn = len(summary_requests(fake_llm)) / len(trimmed)
    assert per_turn <= 1


def too_long(provider: str) -> Reply:
    if provider == "anthropic":
        return Reply.error(400, "prompt is too long: 31000 tokens > 20000 maximum")
    return Reply.error(400, "This model's maximum context length is 20000 tokens. However, your messages "
                            "resulted in 31000 tokens. Please reduce the length of the messages.",
                       error_type="context_length_exceeded")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_prompt_too_long_refusal_on_the_first_try_summarises_and_sends_again(fake_llm, provider):
    refusals = [too_long(provider)]
    script = Script(fake_llm)
    session = long_session(fake_llm, provider, context_window=None)  # the table says more than the model holds
    for number in range(1, 5):
        await run_turn(session, f"question {number}")
    assert not summary_requests(fake_llm)
    script.planner = lambda request: refusals.pop(0) if refusals else None

    events = await run_turn(session, "question 5")

    summarised = of_type(events, ev.HistorySummarised)
    assert summarised and summarised[0].reason == "overflow"
    finished = of_type(events, ev.TurnFinished)[0]
    assert finished.stop_reason == "end_turn" and finished.text.startswith("Here is what I found")
    assert not of_type(events, ev.ErrorOccurred)
    planner = fake_llm.requests_for(PLANNER)
    assert planner[-2].outcome == "error" and planner[-1].outcome == "answered"
    assert COMPACTED_MARKER in json.dumps(conversation(planner[-1])[0], ensure_ascii=False)
    assert session.context.learned_window == 20000  # what the provider said it holds


async def test_refused_again_after_summarising_it_keeps_only_the_last_messages_then_gives_up(fake_llm):
    refusals = [too_long("anthropic"), too_long("anthropic")]
    script = Script(fake_llm)
    session = long_session(fake_llm, context_window=None)
    for number in range(1, 5):
        await run_turn(session, f"question {number}")
    script.planner = lambda request: refusals.pop(0) if refusals else None
    events = await run_turn(session, "question 5")
    trimmed = of_type(events, ev.HistoryTrimmed)
    assert trimmed and trimmed[-1].reason == "overflow"
    assert of_type(events, ev.TurnFinished)[0].stop_reason == "end_turn"
    assert len(conversation(fake_llm.requests_for(PLANNER)[-1])) <= 6

    refusals[:] = [too_long("anthropic")] * 5
    before = len(fake_llm.requests_for(PLANNER))
    events = await run_turn(session, "question 6")
    errors = of_type(events, ev.ErrorOccurred)
    assert errors and "too long" in errors[0].message
    assert of_type(events, ev.TurnFinished)[0].stop_reason == "error"
    refused = fake_llm.requests_for(PLANNER)[before:]
    assert 2 <= len(refused) <= 3 and all(r.outcome == "error" for r in refused)
    bodies = [json.dumps(r.body) for r in refused]
    assert len(set(bodies)) == len(bodies)  # the same refused request is never sent again unchanged


async def test_a_huge_tool_result_is_cut_down_rather_than_sent_to_be_refused(fake_llm):
    from anton_tui.agent.summarise import RESULT_STUB

    Script(fake_llm)
    session = long_session(fake_llm)
    session.history[:] = [
        {"role": "user", "content": "dump the table"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_big", "name": "scratchpad",
                                           "input": {"action": "exec", "name": "main", "code": "print(rows)"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big", "content": "row\n" * 50_000}]},
        {"role": "assistant", "content": "That is 50,000 rows."},
    ]
    events = await run_turn(session, "how many were empty?")
    trimmed = of_type(events, ev.HistoryTrimmed)
    assert trimmed and trimmed[0].stubbed == 1 and not trimmed[0].notice.startswith("Summarising failed")
    assert "1 large tool result cut down" in trimmed[0].notice
    request = fake_llm.requests_for(PLANNER)[-1]
    assert RESULT_STUB in json.dumps(request.body) and body_tokens(request) <= int(WINDOW * SHARE)
    assert request.outcome == "answered"
