"""What the agent saw: the lines of memory and skills a request carried, counted, from a real turn."""

from __future__ import annotations

from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import PLANNER, make_session, run_turn


async def test_a_turn_reports_the_rules_lessons_profile_and_skills_it_sent(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="autopilot")
    cortex = session.cortex
    cortex.global_hc.encode_rule("Answer in English", "always")
    cortex.project_hc.encode_lesson("The sales export uses semicolons")
    cortex.global_hc.rewrite_identity(["Name: Ada"])
    fake_llm.queue(Reply.text("Hello Ada."), model=PLANNER)
    await run_turn(session, "hi")
    report = session.context_reports.latest()
    assert report.turn == 1
    found = {(item.section, item.scope, item.text) for item in report.items}
    assert ("rules", "global", "- Answer in English") in found
    assert any(section == "lessons" and scope == "project" and text.startswith("- The sales export uses semicolons")
               for section, scope, text in found)  # as the prompt shows it, date comment included
    assert ("identity", "global", "- Name: Ada") in found
    rule = next(item for item in report.items if item.text == "- Answer in English")
    assert rule.chars == len("- Answer in English") + 1 and rule.tokens >= 1
    sent = [r for r in fake_llm.requests if r.model == PLANNER][-1]
    assert "Answer in English" in str(sent.body.get("system")) and report.system_chars > report.chars
    await session.close()


async def test_every_turn_of_the_conversation_keeps_its_own_report_until_it_leaves_it(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="autopilot")
    session.cortex.global_hc.encode_rule("Answer in English", "always")
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), Reply.text("Mild."), model=PLANNER)
    await run_turn(session, "What is the capital of France?")
    session.cortex.global_hc.encode_rule("Use metric units", "always")
    await run_turn(session, "How many people live there?")
    await run_turn(session, "And the weather?")
    turns = session.user_turns()
    assert [turn.turn for turn in turns] == [1, 2, 3]
    first = {item.text for item in session.context_reports.by_turn[turns[0].turn].items}
    second = {item.text for item in session.context_reports.by_turn[turns[1].turn].items}
    assert first == {"- Answer in English"}, "the first turn keeps what it saw, not today's memory"
    assert second == {"- Answer in English", "- Use metric units"}
    session.rewind(turns[1].index)
    assert sorted(session.context_reports.by_turn) == [1], "the turns that left the conversation are forgotten"
    fake_llm.queue(Reply.text("About 2.1 million people."), model=PLANNER)
    await run_turn(session, "How many people live in Paris?")
    assert [(t.text, t.turn) for t in session.user_turns()] == [
        ("What is the capital of France?", 1), ("How many people live in Paris?", 4)]
    session.new_conversation()
    assert session.context_reports.by_turn == {} and session.user_turns() == []
    await session.close()


def test_messages_pair_from_the_newest_and_skip_what_is_missing_on_either_side():
    from anton_tui.agent.context_report import match_from_end

    history = ["hi", "yes", "plot it", "yes"]
    shown = ["plot it", "yes"]  # the older ones were pruned from the screen
    assert match_from_end(shown, history) == {1: 3, 0: 2}
    reports = ["yes", "plot it", "gone", "yes"]  # "gone" was rewound away without its report being dropped
    assert match_from_end(["hi", "yes", "plot it", "yes"], reports) == {3: 3, 2: 1, 1: 0}
