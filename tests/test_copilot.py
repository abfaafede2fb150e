"""Copilot mode: what the gate holds back is asked once, after the answer, and only what the user keeps is saved."""

from __future__ import annotations

import asyncio

import pytest

from anton_tui.agent.events import MemoryConfirmationNeeded, MemoryWritten, TurnFinished
from anton_tui.memory.learners.acc_detectors import RULE_NAME_SWITCH
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import (
    CODER,
    PLANNER,
    coder_requests,
    exec_call,
    exec_reply,
    make_session,
    of_type,
    planner_requests,
    quiet_coder,
    read,
    run_turn,
    settle,
)

LESSONS = ["Check that an input file exists before opening it", "Open text files with an explicit encoding",
           "Print the working folder when a relative path fails"]


def failing_turn(fake_llm, *, coder_delay: float = 0.0) -> None:  # noqa: F811
    fake_llm.queue(exec_reply("main", "open('missing.csv').read()", "read the file"),
                   Reply.text("The file is missing."), model=PLANNER)
    fake_llm.queue(Reply.tool_call("CerebellumReport", {"lessons": [{"text": t} for t in LESSONS]},
                                   delay=coder_delay), model=CODER)


async def next_background(session, kind=None, timeout: float = 5.0):
    while True:
        event = await asyncio.wait_for(session.background_events.get(), timeout)
        if kind is None or isinstance(event, kind):
            return event


@pytest.mark.parametrize(
    ("pick", "saved"),
    [
        (lambda engrams: list(engrams), LESSONS),
        (lambda engrams: [engrams[1]], LESSONS[1:2]),
        (lambda engrams: [], []),
    ],
    ids=["keep-all", "keep-one", "discard"],
)
async def test_held_lessons_are_saved_only_as_the_user_answers(fake_llm, pick, saved):  # noqa: F811
    session = make_session(fake_llm, memory_mode="copilot")
    lessons_path = session.cortex.project_hc.lessons_path
    failing_turn(fake_llm)

    events = await run_turn(session, "Read missing.csv")
    assert not of_type(events, MemoryConfirmationNeeded)  # the post-mortem had not finished: nothing asked mid-turn
    question = await next_background(session, MemoryConfirmationNeeded)
    assert [e.text for e in question.engrams] == LESSONS
    assert all(e.confidence == "medium" and e.kind == "lesson" for e in question.engrams)
    assert not lessons_path.exists()

    question.future.set_result(pick(question.engrams))
    await settle(session)

    text = read(lessons_path)
    assert [line for line in LESSONS if line in text] == saved
    if saved:
        written = await next_background(session, MemoryWritten)
        assert written.producer == "confirmation" and [e.text for e in written.engrams] == saved
    assert session.background_events.empty()
    await session.close()


async def test_closing_the_question_without_an_answer_saves_nothing(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="copilot")
    failing_turn(fake_llm)
    await run_turn(session, "Read missing.csv")
    question = await next_background(session, MemoryConfirmationNeeded)
    question.future.cancel()
    await settle(session)
    assert not session.cortex.project_hc.lessons_path.exists()
    await session.close()


async def test_engrams_arriving_during_a_turn_are_asked_once_at_its_end(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="copilot")
    failing_turn(fake_llm, coder_delay=0.6)  # the post-mortem of turn 1 ends while turn 2 is running
    await run_turn(session, "Read missing.csv")
    fake_llm.queue(Reply.text("Still missing.", delay=1.2), model=PLANNER)

    events = await run_turn(session, "Try again", answer=lambda engrams: [engrams[0]])

    names = [type(e).__name__ for e in events]
    assert names.count("MemoryConfirmationNeeded") == 1
    assert names.index("MemoryConfirmationNeeded") > names.index("TurnFinished")
    assert [e.text for e in of_type(events, MemoryConfirmationNeeded)[0].engrams] == LESSONS
    await settle(session)
    assert session.background_events.empty()
    text = read(session.cortex.project_hc.lessons_path)
    assert LESSONS[0] in text and LESSONS[1] not in text
    await session.close()


async def test_one_question_for_all_learners_and_high_confidence_needs_none(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="copilot", acc_mode="passive")
    cells = [exec_call("main", "print(1)", "one"), exec_call("main", "print(2)", "two"),
             exec_call("main", "1/0", "divide"), exec_call("main", "print(3)", "three"),
             exec_call("main", "print(4)", "four"), exec_call("extra", "print(5)", "five")]
    fake_llm.queue(Reply(calls=cells), Reply.text("Done, one division failed."), model=PLANNER)
    quiet_coder(
        fake_llm,
        CerebellumReport=Reply.tool_call("CerebellumReport", {"lessons": [{"text": "Guard divisions by zero"}]},
                                         delay=0.3),
        ConsolidatedMemories=Reply.tool_call("ConsolidatedMemories", {"items": [
            {"text": "Always print results in scratchpad cells", "kind": "always", "scope": "global",
             "confidence": "high"},
            {"text": "Division results need a zero check", "kind": "lesson", "confidence": "medium"},
        ]}),
    )

    events = await run_turn(session, "Compute a few things")

    assert RULE_NAME_SWITCH in read(session.cortex.global_hc.rules_path)  # the monitor's rules are high confidence
    assert not of_type(events, MemoryConfirmationNeeded)
    question = await next_background(session, MemoryConfirmationNeeded)
    assert sorted(e.text for e in question.engrams) == ["Division results need a zero check",
                                                        "Guard divisions by zero"]
    assert "Always print results in scratchpad cells" in read(session.cortex.global_hc.rules_path)
    question.future.set_result([])
    await settle(session)
    assert len(coder_requests(fake_llm)) == 2
    assert not session.cortex.project_hc.lessons_path.exists()
    await session.close()


async def test_autopilot_asks_nothing(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="autopilot")
    failing_turn(fake_llm)
    events = await run_turn(session, "Read missing.csv")
    await settle(session)
    background = []
    while not session.background_events.empty():
        background.append(session.background_events.get_nowait())
    assert not of_type(events + background, MemoryConfirmationNeeded)
    assert [e.producer for e in of_type(background, MemoryWritten)] == ["cerebellum"]
    assert all(line in read(session.cortex.project_hc.lessons_path) for line in LESSONS)
    await session.close()


async def test_off_writes_nothing_but_still_reads_memory(fake_llm, anton_home):  # noqa: F811
    rules = anton_home / "memory" / "rules.md"
    rules.parent.mkdir(parents=True)
    rules.write_text("# Rules\n\n## Always\n- Answer in metric units\n\n## Never\n\n## When\n")
    before = rules.read_bytes()
    session = make_session(fake_llm, memory_mode="off", acc_mode="active")
    fake_llm.queue(exec_reply("a", "1/0", "divide"), exec_reply("b", "1/0", "divide again"),
                   Reply.text("Both failed."), model=PLANNER)

    events = await run_turn(session, "Divide twice")
    await settle(session)

    assert of_type(events, TurnFinished)[0].stop_reason == "end_turn"
    assert not of_type(events, MemoryWritten) and not of_type(events, MemoryConfirmationNeeded)
    assert session.background_events.empty()
    assert coder_requests(fake_llm) == []
    assert rules.read_bytes() == before and not session.cortex.project_hc.lessons_path.exists()
    assert "- Answer in metric units" in planner_requests(fake_llm)[0].system
    await session.close()


async def test_closing_the_session_mid_question_loses_no_engram(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="copilot")
    failing_turn(fake_llm)
    await run_turn(session, "Read missing.csv")
    question = await next_background(session, MemoryConfirmationNeeded)

    await session.close()
    await session.wait_background(timeout=2)

    assert not question.future.done()
    assert [e.text for e in session.pending_confirmations] == LESSONS
    assert not session.cortex.project_hc.lessons_path.exists()


async def test_a_kept_lesson_names_its_learner_in_the_history_even_after_a_restart(fake_llm, tmp_path):  # noqa: F811
    from anton_tui.memory.trust import HeldMemories

    held = HeldMemories(tmp_path / "held.json")
    first = make_session(fake_llm, memory_mode="copilot")
    first.trust.store = held
    failing_turn(fake_llm)
    await run_turn(first, "Read missing.csv")
    question = await next_background(first, MemoryConfirmationNeeded)
    question.future.set_result(None)  # "not now": they wait, kept for the next start
    await settle(first)
    await first.close()

    second = make_session(fake_llm, memory_mode="copilot")
    assert second.restore_held(held) == len(LESSONS)
    second.ask_between_turns()
    question = await next_background(second, MemoryConfirmationNeeded)
    question.future.set_result([question.engrams[0]])
    await settle(second)
    recorder = second.cortex.project_hc.recorder
    [kept] = [change for change in recorder.log("project") if "lessons.md" in change.files]
    assert kept.producer == "confirmation"
    assert kept.why == "kept by the user after review (proposed by cerebellum)"
    assert LESSONS[0] in read(second.cortex.project_hc.lessons_path)
    await second.close()
