"""Replays of realistic turns through the real session: the error monitor's modes, its rules, and its nudges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from anton_tui.agent import prompts
from anton_tui.agent.events import AccEventObserved, AccNudge, MemoryWritten, TurnFinished
from anton_tui.memory.learners.acc_detectors import (
    RULE_CAP_EXHAUSTED,
    RULE_KILL_LOOP_HEAVY,
    RULE_NAME_SWITCH,
    RULE_REPEATED_TOOL_ERROR,
)
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import (
    exec_reply,
    make_session,
    of_type,
    planner_requests,
    quiet_coder,
    read,
    run_turn,
    settle,
    user_text_of,
)

SELF_CHECK = "[Automatic self-check: {}]"


@dataclass
class Scenario:
    replies: Callable[[], list[Reply]]
    rule: str
    detector: str
    nudge_request: int | None  # which planner request of the turn (0-based) carries the nudge
    options: dict
    stop_reason: str = "end_turn"


SCENARIOS = {
    "switches-scratchpad-names": Scenario(
        lambda: [
            exec_reply("load", "prices = [3, 5, 8]", "load the prices"),
            exec_reply("report", "print(sum(prices))", "total the prices"),
            Reply.text("The second scratchpad did not have the prices."),
        ],
        RULE_NAME_SWITCH, "detect_name_switch", 2, {},
    ),
    "retries-the-same-failing-tool": Scenario(
        lambda: [
            exec_reply("main", "import json; json.loads('{oops')", "parse the settings"),
            exec_reply("main", "import json; json.loads('{oops')", "parse the settings again"),
            Reply.text("The settings are not valid JSON."),
        ],
        RULE_REPEATED_TOOL_ERROR, "detect_repeated_tool_error", 2, {},
    ),
    "two-killed-cells": Scenario(
        lambda: [
            exec_reply("main", "import time\ntime.sleep(30)", "wait for the export"),
            exec_reply("main", "import time\ntime.sleep(30)", "wait for the export again"),
            Reply.text("The export never finished."),
        ],
        RULE_KILL_LOOP_HEAVY, "detect_kill_loop", 2, {"limits": {"timeout_default": 0.5}},
    ),
    "hits-the-round-cap": Scenario(
        lambda: [
            exec_reply("main", "print('step 1')", "first step"),
            exec_reply("main", "print('step 2')", "second step"),
            Reply.text("I ran out of rounds: two steps are done, the rest is not."),
        ],
        RULE_CAP_EXHAUSTED, "detect_cap_exhausted", None, {"max_tool_rounds": 2}, "cap_exhausted",
    ),
}


def nudges_in(requests) -> list[str]:
    """The self-check notes each request's newest user message carries."""
    return [user_text_of(request) for request in requests]


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_replayed_turn_yields_its_rule_its_nudge_and_no_duplicate(fake_llm, name):  # noqa: F811
    scenario = SCENARIOS[name]
    session = make_session(fake_llm, acc_mode="active", **scenario.options)
    quiet_coder(fake_llm)
    rules = session.cortex.global_hc.rules_path

    for turn in (1, 2):
        before = len(planner_requests(fake_llm))
        fake_llm.queue(*scenario.replies(), model="planner")
        events = await run_turn(session, "Run the task")
        await settle(session)
        requests = planner_requests(fake_llm)[before:]

        assert of_type(events, TurnFinished)[0].stop_reason == scenario.stop_reason
        assert read(rules).count(scenario.rule) == 1, f"turn {turn}"
        marker = SELF_CHECK.format(scenario.detector)
        carried = [i for i, text in enumerate(nudges_in(requests)) if marker in text]
        if scenario.nudge_request is None:
            assert carried == []
        else:
            assert carried == [scenario.nudge_request]  # the very next request, once
            assert scenario.rule in user_text_of(requests[scenario.nudge_request])
            assert "not written by the user" in user_text_of(requests[scenario.nudge_request])
        drained = [e.lesson.detector for e in of_type(events, AccNudge) if not e.nudged]
        assert (scenario.detector in drained) is (turn == 1)  # known rules are not drained twice

    if name == "hits-the-round-cap":
        assert prompts.CAP_POSTMORTEM.format(cap=2) in user_text_of(requests[-1])  # asked for a post-mortem
        assert "two steps are done" in of_type(events, TurnFinished)[0].text
    await session.close()


async def test_off_observes_nothing(fake_llm):  # noqa: F811
    session = make_session(fake_llm, acc_mode="off")
    quiet_coder(fake_llm)
    fake_llm.queue(*SCENARIOS["switches-scratchpad-names"].replies(), model="planner")

    events = await run_turn(session, "Total the prices")
    await settle(session)

    assert not of_type(events, AccEventObserved) and not of_type(events, AccNudge)
    assert RULE_NAME_SWITCH not in read(session.cortex.global_hc.rules_path)
    assert not any("Automatic self-check" in text for text in nudges_in(planner_requests(fake_llm)))
    await session.close()


async def test_passive_writes_rules_at_the_end_of_the_turn_only(fake_llm):  # noqa: F811
    session = make_session(fake_llm, acc_mode="passive")
    quiet_coder(fake_llm)
    fake_llm.queue(*SCENARIOS["switches-scratchpad-names"].replies(), model="planner")

    events = await run_turn(session, "Total the prices")

    kinds = [e.event.kind for e in of_type(events, AccEventObserved)]
    assert kinds.count("scratchpad_call") == 2 and kinds.count("tool_result") == 2
    assert "scratchpad_result" in kinds and "tool_call" in kinds
    names = [type(e).__name__ for e in events]
    assert names.index("AccNudge") < names.index("TurnFinished")
    assert [e.producer for e in of_type(events, MemoryWritten)] == ["acc"]
    requests = planner_requests(fake_llm)
    assert not any("Automatic self-check" in text for text in nudges_in(requests))
    assert RULE_NAME_SWITCH not in requests[-1].system  # not known while the turn ran
    assert RULE_NAME_SWITCH in read(session.cortex.global_hc.rules_path)

    fake_llm.queue(Reply.text("Understood."), model="planner")
    await run_turn(session, "Next time, keep one scratchpad")
    await settle(session)
    assert RULE_NAME_SWITCH in planner_requests(fake_llm)[-1].system  # the rule is in the prompt from now on
    await session.close()


async def test_active_nudges_once_per_detector_per_turn(fake_llm):  # noqa: F811
    session = make_session(fake_llm, acc_mode="active")
    quiet_coder(fake_llm)
    fake_llm.queue(
        exec_reply("a", "print(1)", "one"),
        exec_reply("b", "print(2)", "two"),
        exec_reply("c", "print(3)", "three"),
        Reply.text("Three scratchpads later, done."),
        model="planner",
    )

    events = await run_turn(session, "Count")

    marker = SELF_CHECK.format("detect_name_switch")
    assert [marker in text for text in nudges_in(planner_requests(fake_llm))] == [False, False, True, False]
    assert len([e for e in of_type(events, AccNudge) if e.nudged]) == 1
    await settle(session)
    await session.close()


async def test_the_nudge_reaches_an_openai_model_after_the_tool_results(fake_llm):  # noqa: F811
    session = make_session(fake_llm, provider="openai", acc_mode="active")
    quiet_coder(fake_llm)
    fake_llm.queue(*SCENARIOS["switches-scratchpad-names"].replies(), model="planner")

    await run_turn(session, "Total the prices")
    await settle(session)

    third = planner_requests(fake_llm)[2]
    assert third.api == "openai"
    tail = third.messages[-2:]
    assert tail[0]["role"] == "tool" and "NameError" in tail[0]["content"]
    assert tail[1]["role"] == "user" and RULE_NAME_SWITCH in tail[1]["content"]
    assert RULE_NAME_SWITCH in read(session.cortex.global_hc.rules_path)
    await session.close()
