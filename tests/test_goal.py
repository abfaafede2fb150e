"""Goal runs without the UI: what `/goal` accepts, and how a run over a real session ends (the model's own
`mark_goal_complete`, a stop between turns, a failed turn), through the Runtime as the app drives it."""

from __future__ import annotations

import pytest

from anton_tui.agent.events import ErrorOccurred, TurnFinished, TurnStarted
from anton_tui.agent.goal import (
    DEFAULT_GOAL_TURNS,
    GoalFinished,
    GoalMarkedComplete,
    GoalTurnStarted,
    GoalUsageError,
    parse_goal,
)
from anton_tui.agent.transcript import transcript
from anton_tui.runtime import Runtime
from tests.fakellm import Reply
from tests.session_helpers import PLANNER, make_session


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Tidy the data folder", ("Tidy the data folder", DEFAULT_GOAL_TURNS)),
        ('"Tidy the data folder" --turns 7', ("Tidy the data folder", 7)),
        ("--turns 3 write the report", ("write the report", 3)),
        ("write the\nreport --turns=12", ("write the report", 12)),
    ],
)
def test_goal_words_give_the_objective_and_the_turns(raw: str, expected: tuple[str, int]) -> None:
    assert parse_goal(raw) == expected


@pytest.mark.parametrize(("raw", "says"), [("", "Usage: /goal"), ("do it --turns", "needs a number"),
                                           ("do it --turns 0", "1 or more"), ("do it --turns x", "(got x)")])
def test_goal_words_that_cannot_run_say_why(raw: str, says: str) -> None:
    with pytest.raises(GoalUsageError) as caught:
        parse_goal(raw)
    assert says in str(caught.value)


def test_anton_default_is_fifty_turns() -> None:
    assert DEFAULT_GOAL_TURNS == 50  # anton-agent 2.26.10.26.1: parse_goal_args(raw, default_turns=50)


async def collect(runtime: Runtime, objective: str, turns: int, *, stop_after_first: bool = False) -> list:
    events = []
    async for event in runtime.goal(objective, turns):
        events.append(event)
        if stop_after_first and isinstance(event, TurnFinished):
            assert runtime.stop_goal()
    return events


def goal_lines(history: list) -> list:
    """What a resumed conversation shows of the goal runs in `history`: each turn's start and each run's end."""
    return [entry.goal for entry in transcript(history) if entry.kind == "goal"]


def test_a_message_of_the_users_own_that_names_a_goal_stays_the_users() -> None:
    history = [
        {"role": "user", "content": "Goal: tidy the data folder\n\nWork on this goal on your own, please."},
        {"role": "assistant", "content": [{"type": "text", "text": "On it."}]},
        {"role": "user", "content": "Goal turn 2 of 2. Carry on."},
    ]
    entries = transcript(history)
    assert [(entry.kind, entry.text) for entry in entries] == [
        ("user", history[0]["content"]),
        ("answer", "On it."),
        ("user", "Goal turn 2 of 2. Carry on."),
    ]


async def test_a_goal_marked_complete_ends_with_the_models_summary(fake_llm) -> None:
    fake_llm.queue(
        Reply.tool_call("mark_goal_complete", {"summary": "The report is written."}),
        Reply.text("Done."),
        model=PLANNER,
    )
    session = make_session(fake_llm)
    runtime = Runtime(None, session)
    try:
        events = await collect(runtime, "Write the report", 4)
    finally:
        await session.close()
    assert [e for e in events if isinstance(e, GoalTurnStarted)] == [GoalTurnStarted(1, 4, "Write the report")]
    assert GoalMarkedComplete("The report is written.") in events
    assert events[-1] == GoalFinished("complete", 1, 4, "The report is written.")
    assert goal_lines(session.history) == [GoalTurnStarted(1, 4, "Write the report"), events[-1]]
    assert "mark_goal_complete" not in session.tools.names
    assert not runtime.goal_running


async def test_a_stop_between_turns_starts_no_further_turn(fake_llm) -> None:
    fake_llm.queue(Reply.text("One."), Reply.text("Never asked."), model=PLANNER)
    session = make_session(fake_llm)
    runtime = Runtime(None, session)
    try:
        events = await collect(runtime, "Count", 3, stop_after_first=True)
    finally:
        await session.close()
    assert events[-1] == GoalFinished("stopped", 1, 3)
    assert goal_lines(session.history)[-1] == events[-1]
    assert len(fake_llm.requests_for(PLANNER)) == 1


async def test_a_failed_turn_ends_the_goal(fake_llm) -> None:
    fake_llm.queue(Reply.error(400, "invalid request: the model refused"), model=PLANNER)
    session = make_session(fake_llm)
    runtime = Runtime(None, session)
    try:
        events = await collect(runtime, "Count", 3)
    finally:
        await session.close()
    assert any(isinstance(e, ErrorOccurred) for e in events)
    assert sum(isinstance(e, TurnStarted) for e in events) == 1
    assert events[-1] == GoalFinished("failed", 1, 3)
    assert goal_lines(session.history)[-1] == events[-1]
