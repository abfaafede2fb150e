"""The memory files and skill loading of the seed, through the real session, SDKs and scripted LLM server: the user's
``$ANTON_HOME/AGENTS.md``, the project's ``AGENTS.md`` and the personal ``AGENTS.local.md`` open every request, each
its own message and in that order, also after a forced summarisation; a ``[skill: label]`` in the model's text loads
the skill once for its next step; skills preloaded with ``--skill`` / ``/skill load`` are in the first request."""

from __future__ import annotations

import json

import pytest

from anton_tui.agent.summarise import COMPACTED_MARKER, SUMMARY_SYSTEM
from anton_tui.memory.skills.store import Skill
from tests.fakellm import Reply
from tests.fakellm.script import RecordedRequest
from tests.session_helpers import EMPTY_ANSWERS, PLANNER, forced_tool, make_session, run_turn

LONG_ANSWER = "The figures line up with last week's run. " * 60


def texts(request: RecordedRequest) -> list[str]:
    """Each message of a request as one string (without the system prompt OpenAI carries as a message)."""
    found = []
    for message in request.messages:
        if message.get("role") in ("system", "developer"):
            continue
        content = message.get("content")
        found.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    return found


def write_memory_files(anton_home, project_dir) -> None:
    (anton_home / "AGENTS.md").write_text("USER-LEVEL: answer in British English.\n")
    (project_dir / "AGENTS.md").write_text("PROJECT: run tests with make test.\n")
    (project_dir / "CLAUDE.md").write_text("CLAUDE: never read, AGENTS.md is there.\n")
    (project_dir / "AGENTS.local.md").write_text("LOCAL: I read on a phone, keep tables narrow.\n")


def assert_front(request: RecordedRequest) -> list[str]:
    sent = texts(request)
    assert [marker in text for text, marker in zip(sent, ("USER-LEVEL", "PROJECT:", "LOCAL:"), strict=False)] == [
        True, True, True,
    ], sent[:3]  # fmt: skip
    assert not any("CLAUDE: never read" in text for text in sent)
    assert not any(marker in text for text in sent[3:] for marker in ("USER-LEVEL", "PROJECT:", "LOCAL:"))
    return sent[3:]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_memory_files_open_every_request_in_order_and_survive_a_forced_summarisation(
    fake_llm, anton_home, project_dir, provider
):
    write_memory_files(anton_home, project_dir)

    def answer(request: RecordedRequest) -> Reply | None:
        if request.model == PLANNER:
            return Reply.text(LONG_ANSWER, usage=(len(json.dumps(request.body)) // 4, 600))
        if request.system == SUMMARY_SYSTEM:
            return Reply.text("## Goal\n- compare the figures")
        name = forced_tool(request)
        return Reply.tool_call(name, EMPTY_ANSWERS[name]) if name in EMPTY_ANSWERS else None

    fake_llm.responder = answer
    session = make_session(fake_llm, provider=provider, context_window=8000, context_pressure_threshold=0.7)
    for number in range(1, 10):
        await run_turn(session, f"question {number}: how do the figures compare?")
    requests = fake_llm.requests_for(PLANNER)
    assert any(r.system == SUMMARY_SYSTEM for r in fake_llm.requests), "the history was summarised"
    for request in requests:
        assert_front(request)
    rest = assert_front(requests[-1])
    assert COMPACTED_MARKER in rest[0], "the summary comes right after the memory files"
    assert not any("USER-LEVEL" in json.dumps(m) for m in session.history), "the files are never in the history"
    report = session.context_reports.latest()
    assert [(item.section, item.scope) for item in report.items[:3]] == [
        ("memory file", "user"), ("memory file", "project"), ("memory file", "local")]  # fmt: skip
    await session.close()


def save_deploy_skill(session) -> None:
    session.skills.save(Skill(label="deploy", description="Ship the staging branch",
                              declarative_md="1. Run make test.\n2. Run bin/deploy."))  # fmt: skip


async def test_the_skill_sentinel_loads_the_skill_once_for_the_next_step(fake_llm):
    session = make_session(fake_llm)
    save_deploy_skill(session)
    fake_llm.queue(
        Reply.text("I'll [skill: deploy] this branch."), Reply.text("Running make test first."),
        Reply.text("Again: [skill: deploy]."), model=PLANNER,
    )  # fmt: skip
    await run_turn(session, "ship it")
    first, second = fake_llm.requests_for(PLANNER)
    assert "Run bin/deploy" not in json.dumps(first.messages)
    body = [text for text in texts(second) if "Run bin/deploy" in text]
    assert len(body) == 1 and "# Skill recalled: `deploy`" in body[0], "the body comes for the model's next step"

    await run_turn(session, "and once more")
    third = fake_llm.requests_for(PLANNER)[-1]
    assert sum("Run bin/deploy" in text for text in texts(third)) == 1, "loaded once, not again"
    assert len(fake_llm.requests_for(PLANNER)) == 3, "a sentinel for a skill already there starts no new round"
    assert session.skills.load("deploy").stats.total_recalls == 1
    await session.close()


async def test_a_sentinel_beside_tool_calls_and_one_for_a_loaded_skill_get_the_reminder(fake_llm):
    session = make_session(fake_llm)
    save_deploy_skill(session)
    fake_llm.queue(
        Reply.tool_call("recall_skill", {"label": "deploy"}),
        Reply.tool_call("recall_skill", {"label": "deploy"}, text_before="Following [skill: deploy] now."),
        Reply.text("Done."), model=PLANNER,
    )  # fmt: skip
    await run_turn(session, "ship it")
    last = fake_llm.requests_for(PLANNER)[-1]
    sent = "".join(texts(last))
    assert sent.count("## Procedure") == 1
    assert sent.count("was already recalled in this conversation") == 2, "the tool's and the sentinel's reminder"
    await session.close()


async def test_preloaded_skills_are_in_the_first_request_and_every_one_after(fake_llm):
    session = make_session(fake_llm)
    save_deploy_skill(session)
    session.skills.save(Skill(label="audit", description="Audit permissions", declarative_md="1. List the roles."))
    assert session.turn_memory.preload(session.skills, "deploy") == "deploy"
    assert session.turn_memory.preload(session.skills, "audti") == "audit", "a typo finds the closest skill"
    with pytest.raises(ValueError, match="no skill labelled"):
        session.turn_memory.preload(session.skills, "zzzz-nothing-like-it")
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "audit"}), Reply.text("Audited."), Reply.text("Ok."),
                   model=PLANNER)  # fmt: skip
    await run_turn(session, "check the roles")
    first = fake_llm.requests_for(PLANNER)[0]
    sent = texts(first)
    assert "Run bin/deploy" in sent[0] and "List the roles" in sent[1] and sent[2] == "check the roles"
    recall = next(json.dumps(m) for m in fake_llm.requests_for(PLANNER)[1].messages if "tool_result" in json.dumps(m))
    assert "was already recalled in this conversation" in recall, "the recall tool sees the preloaded skill"
    session.new_conversation()
    await run_turn(session, "new topic")
    assert "List the roles" not in json.dumps(fake_llm.requests_for(PLANNER)[-1].messages)
    await session.close()


def test_skill_flag_preloads_through_the_runtime_starter(anton_home, project_dir, fake_llm):
    import os

    from anton_tui.memory.skills.store import SkillStore
    from anton_tui.runtime.start import RuntimeStarter
    from anton_tui.settings_sources import read_env_layers

    SkillStore(anton_home / "skills").save(Skill(label="deploy", description="Ship", declarative_md="1. Ship."))
    layers = read_env_layers(project_dir=project_dir, environ={**os.environ, **fake_llm.env()})
    runtime = RuntimeStarter(layers, skills=("deploy", "nope-nothing")).build()
    assert list(runtime.session.turn_memory.preloaded) == ["deploy"]
    event = runtime.session.background_events.get_nowait()
    assert "--skill nope-nothing" in event.message
