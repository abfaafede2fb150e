"""A skill's `allowed-tools` limit holds in every turn that recalls it, also when the recall only gets the short
"already recalled" reminder, and it ends with the turn."""

from __future__ import annotations

from anton_tui.agent import events as ev
from tests.fakellm.script import Reply
from tests.test_session import make_session, run_turn

MEMORIZE = {"entries": [{"text": "x", "kind": "always", "scope": "global"}]}


def finished(events) -> list:
    return [e for e in events if isinstance(e, ev.ToolCallFinished)]


async def test_a_repeated_recall_still_limits_the_tools_of_its_turn(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    folder = tmp_path / "home" / "skills" / "look-only"
    folder.mkdir(parents=True)
    skill_md = "---\nname: look-only\ndescription: Only look\nallowed-tools: recall\n---\n1. Look.\n"
    (folder / "SKILL.md").write_text(skill_md)
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "look-only"}), Reply.text("Looked."), model="planner")
    first = finished(await run_turn(session, "look at it"))
    assert "1. Look." in first[0].result

    fake_llm.queue(
        Reply.tool_call("recall_skill", {"label": "look-only"}),
        Reply.tool_call("memorize", MEMORIZE),
        Reply.text("Done."),
        model="planner",
    )
    recall, memorize = finished(await run_turn(session, "look again"))
    assert "already recalled" in recall.result and "1. Look." not in recall.result
    assert "only these tools may be used: `recall`" in recall.result
    assert not memorize.success and "allows only these tools: recall" in memorize.result

    fake_llm.queue(Reply.tool_call("memorize", {"entries": []}), Reply.text("Free."), model="planner")
    [free] = finished(await run_turn(session, "something else"))  # a turn without the recall is not limited
    assert "allows only" not in free.result
    assert (folder / "SKILL.md").read_text() == skill_md
