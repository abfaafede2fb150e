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
