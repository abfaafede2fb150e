"""Whether the ACC's rules work, and which rules go unused, over scripted runs of real turns: a rule written for a
repeated tool error remembers its pattern, and the pattern's count before the rule and since (in turns that carried
it) is right; a rule left out of a long stretch of prompts is shown as dormant and offered to compaction, which
leaves it in place unless the model drops it."""

from __future__ import annotations

import pytest

from anton_tui.memory.engrams.engram import entry_id
from anton_tui.memory.learners.acc_detectors import RULE_REPEATED_TOOL_ERROR
from tests.fakellm import Reply
from tests.fakellm.script import ToolCallSpec
from tests.session_helpers import CODER, PLANNER, make_session, quiet_coder, run_turn, settle

DETECTOR = "detect_repeated_tool_error"


def failing_round() -> Reply:
    """Two calls of one tool whose arguments are not JSON: two failures in a row, the same error twice."""
    return Reply(calls=[ToolCallSpec("recall_skill", raw_arguments="{bad"), ToolCallSpec("recall_skill",
                                                                                         raw_arguments="{bad")])


async def test_the_pattern_of_an_acc_rule_is_counted_before_it_and_since_while_it_was_loaded(fake_llm, anton_home):
    quiet_coder(fake_llm)
    session = make_session(fake_llm, acc_mode="passive", memory_mode="autopilot")
    outcomes = session.cortex.global_hc.outcomes
    rule = entry_id(RULE_REPEATED_TOOL_ERROR)

    async def turn(text: str, *replies: Reply) -> None:
        fake_llm.queue(*replies, model=PLANNER)
        await run_turn(session, text)
        await settle(session)

    await turn("fetch the skill", failing_round(), Reply.text("It failed."))
    assert RULE_REPEATED_TOOL_ERROR in session.cortex.global_hc.recall_rules()
    assert outcomes.figures()[rule].before == 1 and outcomes.figures()[rule].since == 0

    await turn("try again", failing_round(), Reply.text("Failed again."))  # the rule was in this turn's prompt
    assert (outcomes.figures()[rule].since, outcomes.pattern_count(DETECTOR)) == (1, 2)

    await turn("something that works", Reply.text("Fine."))
    assert (outcomes.figures()[rule].since, outcomes.pattern_count(DETECTOR)) == (1, 2)

    session.turn_memory.budget_tokens = 1  # the rule no longer fits: the pattern comes back while it is left out
    await turn("unrelated words entirely", failing_round(), Reply.text("Hm."))
    assert rule not in session.turn_memory.selection.loaded_ids("global")
    assert (outcomes.figures()[rule].since, outcomes.pattern_count(DETECTOR)) == (1, 3)

    session.turn_memory.budget_tokens = 2000
    await turn("once more", failing_round(), Reply.text("Still failing."))
    found = outcomes.figures()[rule]
    assert (found.detector, found.before, found.since) == (DETECTOR, 1, 2)
    assert outcomes.pattern_count(DETECTOR) == 4
    assert session.cortex.global_hc.recall_rules().count(RULE_REPEATED_TOOL_ERROR) == 1, "written once"
    use = session.cortex.global_hc.counters.figures("rules")[rule]
    assert (use.loaded, use.left_out) == (3, 1), "loaded in turns 2, 3 and 5; turn 4 left it out (over the budget)"
    rules_md = (anton_home / "memory" / "rules.md").read_text()
    assert "detect_" not in rules_md and "since" not in rules_md, "the figures live beside rules.md, not in it"
    await session.close()


@pytest.fixture
def short_stretch(monkeypatch):
    monkeypatch.setattr("anton_tui.memory.engrams.counters.DORMANT_AFTER", 3)


async def test_a_rule_never_loaded_is_dormant_shown_and_offered_but_never_removed(fake_llm, anton_home, short_stretch):
    quiet_coder(fake_llm)
    memory = anton_home / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    rules = ["Always quote the invoice number in replies about billing"]
    rules += [f"When the {name} dashboard is slow, check its cache first" for name in (
        "sales", "stock", "payroll", "orders", "returns", "traffic", "churn", "support", "ads")]  # fmt: skip
    (memory / "rules.md").write_text("# Rules\n\n## Always\n" + "".join(f"- {text}\n" for text in rules[:1])
                                     + "\n## When\n" + "".join(f"- {text}\n" for text in rules[1:]))  # fmt: skip
    session = make_session(fake_llm, memory_budget_tokens=20)
    for name in ("sales", "stock", "sales", "stock"):
        fake_llm.queue(Reply.text("Checked."), model=PLANNER)
        await run_turn(session, f"the {name} dashboard is slow today")
    await settle(session)
    invoice = entry_id(rules[0])
    from anton_tui.memory.engrams.rule_figures import rule_figures

    figures = rule_figures(session.cortex.global_hc)
    assert figures[invoice].dormant and figures[invoice].use.loaded == 0
    assert not figures[entry_id(rules[1])].dormant, "a rule of the turns' topic stays awake"

    before = len(fake_llm.requests_for(CODER))
    outcomes = await session.cortex.compact_now()
    [request] = fake_llm.requests_for(CODER)[before:]
    offered = str(request.messages)
    assert f"{rules[0]} (dormant)" in offered and f"{rules[1]} (dormant)" not in offered
    assert "(dormant)" in request.system
    assert rules[0] in (memory / "rules.md").read_text(), "the model kept nothing: the file is left as it was"
    assert all(outcome.problem for outcome in outcomes)
    await session.close()
