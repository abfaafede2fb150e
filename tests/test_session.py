"""Whole turns through the real session, the real SDKs and the scripted local LLM server."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from pathlib import Path

import pytest

from anton_tui.agent import events as ev
from anton_tui.agent.factory import build_tools
from anton_tui.redact import Redactor
from anton_tui.agent.session import ChatSession
from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.episodes.store import EpisodicMemory
from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.memory.skills.store import Skill, SkillStore
from tests.fakellm.script import Reply


def make_session(fake_llm, tmp_path: Path, *, provider: str = "anthropic", mode: str = "autopilot", **kwargs):
    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir(parents=True, exist_ok=True)
    episodic = EpisodicMemory(project / ".anton" / "episodes")
    episodic.start_session()
    cortex = Cortex(Hippocampus(home / "memory"), Hippocampus(project / ".anton" / "memory"), mode=mode)
    session = ChatSession(
        llm=fake_llm.llm_client(provider=provider),
        project_dir=project,
        tools=build_tools(episodic_enabled=True),
        cortex=cortex,
        episodic=episodic,
        skills=SkillStore(home / "skills"),
        **kwargs,
    )
    return session


async def run_turn(session: ChatSession, text: str) -> list:
    return [event async for event in session.turn(text)]


def kinds(events: list) -> list[str]:
    return [type(e).__name__ for e in events]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_memorize_then_answer_writes_the_lesson_and_streams_in_order(fake_llm, tmp_path, provider):
    fake_llm.queue(
        Reply.tool_call(
            "memorize",
            {"entries": [{"text": "The staging DB is read-only", "kind": "lesson", "scope": "project", "topic": "db"}]},
            text_before="Noting that.",
        ),
        Reply.text("Saved. The staging database is read-only, so I will query prod replicas instead.",
                   chunk_delay=0.02),
        model="planner",
    )
    session = make_session(fake_llm, tmp_path, provider=provider)
    events = await run_turn(session, "Remember: staging is read-only")

    lessons = (tmp_path / "proj" / ".anton" / "memory" / "lessons.md").read_text()
    assert "- The staging DB is read-only <!-- " in lessons and "topic:db" in lessons
    assert not (tmp_path / "home" / "memory" / "lessons.md").exists()

    names = kinds(events)
    assert names[0] == "TurnStarted" and names[-1] == "TurnFinished"
    order = [n for n in names if n in ("ToolCallStarted", "MemoryWritten", "ToolCallFinished", "AssistantTextDelta")]
    first_tool = order.index("ToolCallStarted")
    assert order[first_tool : first_tool + 3] == ["ToolCallStarted", "MemoryWritten", "ToolCallFinished"]
    assert order[-1] == "AssistantTextDelta"
    streamed = "".join(e.text for e in events if isinstance(e, ev.AssistantTextDelta))
    assert "read-only, so I will query prod replicas" in streamed
    assert sum(isinstance(e, ev.AssistantTextDelta) for e in events) > 2
    finished = events[-1]
    assert finished.stop_reason == "end_turn"
    # the second request carried the tool result back to the model
    second = fake_llm.requests_for("planner")[1]
    assert "Memory updated" in json.dumps(second.body)


async def test_recall_skill_with_a_typo_loads_the_right_skill_and_bumps_its_counter(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    session.skills.save(
        Skill(label="csv_summary", name="CSV Summary", when_to_use="user asks to summarise a csv",
              declarative_md="1. Load\n2. describe()")
    )
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "csv_sumary"}), Reply.text("Following it."),
                   model="planner")
    events = await run_turn(session, "summarise data.csv")

    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.success and "1. Load" in finished.result and "csv-summary" in finished.result
    assert session.skills.load("csv_summary").stats.total_recalls == 1
    assert session.skills.load("csv_summary").stats.stage(1).recommended == 1
    first = fake_llm.requests_for("planner")[0]
    assert "`csv-summary` — user asks to summarise a csv" in first.system


async def test_a_failing_tool_becomes_a_failed_result_and_the_turn_goes_on(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "../../etc"}), Reply.text("Sorry."), model="planner")
    events = await run_turn(session, "hi")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert not finished.success and "ERROR" in finished.result
    assert events[-1].stop_reason == "end_turn"


async def test_system_prompt_puts_project_notes_after_memory_and_reads_agents_md(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    session.cortex.global_hc.encode_rule("Prefer httpx over requests", "always", "high", "user")
    (tmp_path / "proj" / ".anton").mkdir(exist_ok=True)
    (tmp_path / "proj" / ".anton" / "anton.md").write_text("# Anton Workspace\n\nUse metric units.\n")
    (tmp_path / "proj" / "AGENTS.md").write_text("Run tests with make test.\n")
    prompt = session.system_prompt()
    assert prompt.index("Prefer httpx over requests") < prompt.index("Use metric units.")
    fake_llm.queue(Reply.text("Noted."))
    await run_turn(session, "hi")
    [request] = fake_llm.requests
    first = request.messages[0]  # AGENTS.md is its own message at the front of the request
    assert first["role"] == "user" and "Run tests with make test." in json.dumps(first)
    assert "Run tests with make test." not in str(request.body.get("system"))


async def test_cancel_mid_stream_keeps_a_consistent_history(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    fake_llm.queue(Reply.text("word " * 400, chunk_size=20, chunk_delay=0.02), model="planner")
    seen, cancelled = [], False
    async for event in session.turn("write a lot"):
        seen.append(event)
        if not cancelled and sum(isinstance(e, ev.AssistantTextDelta) for e in seen) == 3:
            cancelled = session.cancel()
            assert cancelled
    assert isinstance(seen[-1], ev.TurnFinished) and seen[-1].stop_reason == "cancelled"
    assert [m["role"] for m in session.history] == ["user", "assistant"]
    assert session.history[-1]["content"][0]["text"].startswith("word")

    fake_llm.queue(Reply.text("Back again."), model="planner")
    events = await run_turn(session, "continue")
    assert events[-1].text == "Back again."
    roles = [m["role"] for m in session.history]
    assert roles == ["user", "assistant", "user", "assistant"]


async def test_an_unanswered_tool_use_is_sealed_before_the_next_request(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    session.history = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "recall", "input": {"query": "x"}}]},
    ]
    fake_llm.queue(Reply.text("ok"), model="planner")
    events = await run_turn(session, "second")
    repaired = [e for e in events if isinstance(e, ev.HistoryRepaired)]
    assert repaired and repaired[0].sealed_count == 1
    sent = fake_llm.requests_for("planner")[0].messages
    assert sent[2]["role"] == "user" and sent[2]["content"][0]["type"] == "tool_result"


async def test_round_cap_asks_for_a_post_mortem(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path, max_tool_rounds=2)
    fake_llm.queue(
        Reply.tool_call("recall", {"query": "a"}),
        Reply.tool_call("recall", {"query": "b"}),
        Reply.text("I ran out of rounds: here is where things stand."),
        model="planner",
    )
    events = await run_turn(session, "dig")
    assert events[-1].stop_reason == "cap_exhausted"
    last = fake_llm.requests_for("planner")[-1]
    assert "post-mortem" in json.dumps(last.messages[-1])


async def test_tool_calls_asked_for_after_the_cap_are_answered_as_not_run(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path, max_tool_rounds=1)
    fake_llm.queue(
        Reply.tool_call("recall", {"query": "a"}),
        Reply.tool_calls([("recall", {"query": "b"}), ("recall", {"query": "c"})], text_before="One more look."),
        Reply.text("Where things stand."),
        model="planner",
    )
    events = await run_turn(session, "dig")
    assert events[-1].stop_reason == "cap_exhausted"
    assert [e.input["query"] for e in events if isinstance(e, ev.ToolCallStarted)] == ["a"], "no call past the cap"
    asked = session.history[-3]["content"]
    answers = session.history[-2]["content"]
    assert [b["tool_use_id"] for b in answers] == [b["id"] for b in asked if b["type"] == "tool_use"]
    assert all(b["is_error"] and b["content"].startswith("Not run") for b in answers)
    assert session.history[-1] == {"role": "assistant", "content": [{"type": "text", "text": "One more look."}]}
    events = await run_turn(session, "go on")
    assert events[-1].text == "Where things stand."
    assert not any(isinstance(e, ev.HistoryRepaired) for e in events), "every call was answered already"


async def test_each_request_reports_its_tokens_and_the_conversations_running_totals(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    fake_llm.queue(
        Reply.tool_call("recall", {"query": "a"}, usage=(100, 10)),
        Reply.text("Found it.", usage=(150, 20)),
        Reply.text("Again.", usage=(200, 5)),
        model="planner",
    )
    first = [e for e in await run_turn(session, "look") if isinstance(e, ev.UsageUpdated)]
    second = [e for e in await run_turn(session, "again") if isinstance(e, ev.UsageUpdated)]
    figures = [(e.input_tokens, e.output_tokens, e.total_input_tokens, e.total_output_tokens) for e in first + second]
    assert figures == [(100, 10, 100, 10), (150, 20, 250, 30), (200, 5, 450, 35)]


async def test_model_errors_are_one_clear_message_and_the_session_survives(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    fake_llm.queue(Reply.error(401), model="planner")
    events = await run_turn(session, "hi")
    error = next(e for e in events if isinstance(e, ev.ErrorOccurred))
    assert "ANTON_ANTHROPIC_API_KEY" in error.message and "\n" not in error.message
    assert events[-1].stop_reason == "error"
    fake_llm.queue(Reply.text("Working now."), model="planner")
    assert (await run_turn(session, "again"))[-1].text == "Working now."


async def test_episodes_are_logged_with_secrets_redacted(fake_llm, tmp_path):
    secret = "sk-ant-api03-" + "x" * 40
    session = make_session(fake_llm, tmp_path, redactor=Redactor(["my-very-private-value"]))
    fake_llm.queue(
        Reply.tool_call("recall", {"query": "key my-very-private-value"}),
        Reply.text(f"Your key is {secret}"),
        model="planner",
    )
    await run_turn(session, f"my key is {secret}")
    lines = [json.loads(l) for l in next((tmp_path / "proj" / ".anton" / "episodes").glob("*.jsonl")).read_text().splitlines()]
    roles = [l["role"] for l in lines]
    assert roles[:1] == ["user"] and "tool_call" in roles and "tool_result" in roles and roles[-1] == "assistant"
    text = json.dumps(lines)
    assert secret not in text and "my-very-private-value" not in text and "[REDACTED_SECRET]" in text and "[REDACTED_API_KEY]" in text
    assert all(l["turn"] == 1 for l in lines)


async def test_memory_mode_off_writes_nothing_but_still_reads(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path, mode="off")
    session.cortex.global_hc.encode_rule("Answer in French", "always", "high", "user")
    fake_llm.queue(
        Reply.tool_call("memorize", {"entries": [{"text": "x", "kind": "lesson", "scope": "project"}]}),
        Reply.text("ok"),
        model="planner",
    )
    events = await run_turn(session, "remember x")
    assert "Answer in French" in fake_llm.requests_for("planner")[0].system
    assert not (tmp_path / "proj" / ".anton" / "memory" / "lessons.md").exists()
    assert not any(isinstance(e, ev.MemoryWritten) for e in events)


async def test_scratchpad_cells_stream_live_and_bad_requests_fail_cleanly(fake_llm, tmp_path):
    from anton_tui.scratchpad.events import CellFinished, CellOutput
    from anton_tui.scratchpad.runtime import ScratchpadManager

    pads = ScratchpadManager(tmp_path / "proj", tmp_path / "venvs")
    session = make_session(fake_llm, tmp_path, scratchpads=pads)
    fake_llm.queue(
        Reply.tool_call("scratchpad", {"action": "exec", "name": "main", "code": "x = 21\nprint(x * 2)",
                                        "one_line_description": "double it"}),
        Reply.tool_call("scratchpad", {"action": "exec", "name": "main", "code": "   "}),
        Reply.tool_call("scratchpad", {"action": "install", "name": "main", "packages": ["--index-url=http://x"]}),
        Reply.tool_call("scratchpad", {"action": "exec", "name": "main", "code": "print(x + 1)"}),
        Reply.text("Done."),
        model="planner",
    )
    try:
        events = await run_turn(session, "compute")
    finally:
        await pads.close_all()
    activity = [e.event for e in events if isinstance(e, ev.ScratchpadActivity)]
    assert any(isinstance(a, CellOutput) and a.text.strip() == "42" for a in activity)
    results = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert results[0].success and "[output]\n42" in results[0].result
    assert not results[1].success and "no code was provided" in results[1].result
    assert not results[2].success and results[2].result.startswith("ERROR:")
    assert results[3].success and "22" in results[3].result
    assert sum(isinstance(a, CellFinished) for a in activity) == 2


async def test_a_second_recall_in_the_conversation_gets_the_short_reminder_and_no_count(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    session.skills.save(
        Skill(label="csv-summary", name="CSV Summary", when_to_use="user asks to summarise a csv",
              declarative_md="1. Load\n2. describe()")
    )
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "csv-summary"}),
                   Reply.tool_call("recall_skill", {"label": "csv_sumary"}), Reply.text("Done."), model="planner")
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "csv-summary"}), Reply.text("Again."), model="planner")
    events = await run_turn(session, "summarise data.csv")
    events += await run_turn(session, "and other.csv")

    results = [e.result for e in events if isinstance(e, ev.ToolCallFinished)]
    assert "## Procedure (Stage 1 — declarative)" in results[0] and "1. Load" in results[0]
    reminder = (
        "Skill 'csv-summary' was already recalled in this conversation — its full procedure is in your context "
        "above, under the '# Skill: CSV Summary' heading, and still applies. Not re-sending the body."
    )
    assert results[1:] == [reminder, reminder]  # a typo resolving to the same skill gets it too, without a warning
    stats = session.skills.load("csv-summary").stats
    assert stats.total_recalls == 1 and stats.stage(1).recommended == 1 and stats.stage(1).last_used

    session.history.clear()  # the full text has left the conversation: the next recall sends it again
    fake_llm.queue(Reply.tool_call("recall_skill", {"label": "csv-summary"}), Reply.text("Fresh."), model="planner")
    events = await run_turn(session, "summarise data.csv")
    [fresh] = [e.result for e in events if isinstance(e, ev.ToolCallFinished)]
    assert "1. Load" in fresh and session.skills.load("csv-summary").stats.total_recalls == 2


async def test_a_recalled_skill_with_allowed_tools_refuses_the_others_for_the_rest_of_the_turn(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    folder = tmp_path / "home" / "skills" / "look-only"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: look-only\ndescription: Only look\nallowed-tools: recall\n---\n1. Look.\n")
    fake_llm.queue(
        Reply.tool_call("recall_skill", {"label": "look-only"}),
        Reply.tool_call("memorize", {"entries": [{"text": "x", "kind": "always", "scope": "global"}]}),
        Reply.text("Done."),
        model="planner",
    )
    fake_llm.queue(Reply.tool_call("memorize", {"entries": []}), Reply.text("Next turn."), model="planner")
    events = await run_turn(session, "look at it")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].success and "only these tools may be used: `recall`" in finished[0].result
    assert not finished[1].success and "allows only these tools: recall" in finished[1].result
    assert "`memorize` was not run" in finished[1].result

    events = await run_turn(session, "now something else")  # the limit ends with the turn
    [memorize] = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert "allows only" not in memorize.result


def test_the_skill_list_comes_before_the_memory_snapshot_as_in_anton(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    session.cortex.global_hc.encode_rule("Always answer in British English", "always")
    session.skills.save(Skill(label="csv-summary", description="Summarise a CSV", declarative_md="1. Load"))
    prompt = session.system_prompt()
    assert 0 < prompt.index("## Procedural memory (skills available)") < prompt.index("## Your Memory")


async def test_a_skills_folder_that_cannot_be_listed_leaves_the_list_out_with_one_warning(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    skills = tmp_path / "home" / "skills"
    skills.parent.mkdir(parents=True, exist_ok=True)
    skills.symlink_to(skills)  # a link to itself: listing it fails, whoever runs the tests
    fake_llm.queue(Reply.text("First."), Reply.text("Second."), model="planner")
    events = await run_turn(session, "hello")
    events += await run_turn(session, "again")

    warnings = [e for e in events if isinstance(e, ev.ErrorOccurred)]
    assert len(warnings) == 1 and "skills" in warnings[0].message and not warnings[0].retryable
    assert [e.stop_reason for e in events if isinstance(e, ev.TurnFinished)] == ["end_turn", "end_turn"]
    assert all("Procedural memory" not in r.system for r in fake_llm.requests_for("planner"))


async def test_skill_save_drafts_from_recent_work_and_never_overwrites(fake_llm, tmp_path):
    from anton_tui.agent.skill_draft import draft_skill

    session = make_session(fake_llm, tmp_path)
    fake_llm.queue(Reply.text("The file has 3 columns."), model="planner")
    await run_turn(session, "look at data.csv")
    draft = {"label": "csv_summary", "name": "CSV Summary", "description": "Summarise a CSV",
             "when_to_use": "user asks to summarise a csv", "declarative_md": "1. Load\n2. Describe"}
    fake_llm.queue(Reply.tool_call("SkillDraft", draft), Reply.tool_call("SkillDraft", draft), model="planner")
    first = await draft_skill(session, "csv summary")
    second = await draft_skill(session)
    assert (first.skill.label, second.skill.label) == ("csv-summary", "csv-summary-2")
    assert (tmp_path / "home" / "skills" / "csv-summary" / "SKILL.md").read_text().endswith("\n---\n1. Load\n2. Describe")
    sent = fake_llm.requests_for("planner")[1]
    assert sent.tool_choice == {"type": "tool", "name": "SkillDraft"}
    assert "look at data.csv" in json.dumps(sent.messages) and "csv summary" in json.dumps(sent.messages)


async def test_settings_apply_to_a_running_session_without_losing_the_conversation(fake_llm, project_dir, monkeypatch):
    from anton_tui.agent.factory import apply_settings, build_session
    from anton_tui.config import load_settings

    for key, value in fake_llm.env(provider="anthropic").items():
        monkeypatch.setenv(key, value)
    session = build_session(load_settings())
    try:
        fake_llm.queue(Reply.text("first"), model="planner")
        await run_turn(session, "hello")
        monkeypatch.setenv("ANTON_PLANNING_MODEL", "planner-two")
        monkeypatch.setenv("ANTON_MEMORY_MODE", "copilot")
        monkeypatch.setenv("ANTON_EPISODIC_MEMORY", "false")
        apply_settings(session, load_settings())
        fake_llm.queue(Reply.text("second"), model="planner-two")
        events = await run_turn(session, "again")
        assert events[-1].text == "second"
        assert fake_llm.requests_for("planner-two")[0].messages[0]["content"] == "hello"
        assert session.cortex.mode == "copilot" and session.episodic is None
        assert "recall" not in session.tools.names
    finally:
        await session.close()


async def test_the_user_can_reset_and_remove_pads_and_cells_stream_get_llm(fake_llm, project_dir, monkeypatch):
    from anton_tui.agent.factory import build_session
    from anton_tui.config import load_settings

    for key, value in fake_llm.env(provider="openai").items():
        monkeypatch.setenv(key, value)
    session = build_session(load_settings())
    fake_llm.queue(Reply.text("a haiku about data"), model="coder")
    fake_llm.queue(
        Reply.tool_call("scratchpad", {"action": "exec", "name": "main",
                                        "code": "answer = get_llm().complete('write a haiku')\nprint(answer)"}),
        Reply.text("done"),
        model="planner",
    )
    try:
        events = await run_turn(session, "ask the model from a cell")
        result = next(e for e in events if isinstance(e, ev.ToolCallFinished))
        assert result.success and "a haiku about data" in result.result
        assert session.cancel_cell("main") is False
        assert await session.reset_pad("main") is True
        assert session.scratchpads.get("main").cells == []
        assert await session.remove_pad("main") is True and session.scratchpads.get("main") is None
        assert await session.remove_pad("nope") is False
    finally:
        await session.close()


async def test_warm_up_builds_the_episode_index_ahead_of_the_first_recall(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    session.episodic.log_turn(1, "user", "the quarterly revenue report")
    index_file = tmp_path / "proj" / ".anton" / "episodes" / ".recall-index.sqlite3"
    assert not index_file.exists()
    await session.warm_up()
    assert index_file.exists()
    await session.warm_up_recall()
    assert session.episodic.recall("revenue")[0].content == "the quarterly revenue report"


async def test_cancel_during_a_tool_call_closes_the_round_at_once(fake_llm, tmp_path):
    from anton_tui.scratchpad.runtime import ScratchpadManager

    pads = ScratchpadManager(tmp_path / "proj", tmp_path / "venvs")
    session = make_session(fake_llm, tmp_path, scratchpads=pads)
    fake_llm.queue(
        Reply.tool_call("scratchpad", {"action": "exec", "name": "main", "code": "import time\ntime.sleep(30)"}),
        model="planner",
    )
    try:
        async for event in session.turn("wait a while"):
            if isinstance(event, ev.ToolCallStarted):
                session.cancel()
        kinds_ = [m["role"] for m in session.history]
        assert kinds_ == ["user", "assistant", "user", "assistant"]
        sealed = session.history[2]["content"][0]
        assert sealed["type"] == "tool_result" and sealed["is_error"] and "Cancelled" in sealed["content"]
        fake_llm.queue(Reply.text("Fine."), model="planner")
        events = await run_turn(session, "never mind")
        assert not any(isinstance(e, ev.HistoryRepaired) for e in events)
        assert events[-1].text == "Fine."
    finally:
        await pads.close_all()


async def test_leaving_a_turns_stream_early_stops_the_turn_and_keeps_the_history_whole(fake_llm, tmp_path):
    session = make_session(fake_llm, tmp_path)
    fake_llm.queue(Reply.text("word " * 400, chunk_size=20, chunk_delay=0.02), model="planner")
    stream = session.turn("write a lot")
    deltas = 0
    async for event in stream:
        deltas += isinstance(event, ev.AssistantTextDelta)
        if deltas == 3:
            break
    await stream.aclose()
    assert not session.running, "the turn stops with its stream"
    assert [m["role"] for m in session.history] == ["user", "assistant"]
    assert session.history[-1]["content"][0]["text"].startswith("word")
    fake_llm.queue(Reply.text("Back again."), model="planner")
    events = await run_turn(session, "continue")
    assert events[-1].text == "Back again."


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_every_piece_of_a_fast_answer_arrives_in_order(fake_llm, tmp_path, provider):
    """Pieces streamed faster than anyone reads them each come out as they were sent (the viewer batches them),
    none lost, none run together, none out of place around a tool call."""
    before = [f"look {n:03d} " for n in range(60)]
    after = [f"piece {n:03d} " for n in range(300)]
    fake_llm.queue(
        Reply.tool_call("recall_skill", {"label": "none"}, text_before="".join(before), chunk_size=len(before[0])),
        Reply.text("".join(after), chunk_size=len(after[0])),
        model="planner",
    )
    session = make_session(fake_llm, tmp_path, provider=provider)
    events = await run_turn(session, "stream fast")
    texts = [e.text for e in events if isinstance(e, ev.AssistantTextDelta)]
    assert texts == before + after
    tool_at = next(i for i, e in enumerate(events) if isinstance(e, ev.ToolCallStarted))
    assert [e.text for e in events[:tool_at] if isinstance(e, ev.AssistantTextDelta)] == before


async def test_background_work_cancelled_before_it_began_is_closed_not_left_dangling(fake_llm, tmp_path: Path):
    """Quitting right after a turn queued work (a memory question, say) must not leave its coroutine unstarted and
    unclosed: Python would print "coroutine ... was never awaited" on the way out."""
    session = make_session(fake_llm, tmp_path)
    ran = []

    async def work() -> None:
        ran.append(True)

    pending = work()
    session.start_background(pending, "work")
    await session.close()
    await asyncio.sleep(0)
    assert not ran
    assert inspect.getcoroutinestate(pending) == inspect.CORO_CLOSED


async def test_a_closed_session_holds_none_of_its_memory_files_open(fake_llm, tmp_path):
    """An app that starts and closes sessions (a new project, a restart of the runtime) must not pile up open files."""
    fake_llm.queue(Reply.text("Noted."), model="planner")
    session = make_session(fake_llm, tmp_path)
    await run_turn(session, "What do you remember?")

    def open_under(folder: Path) -> list[str]:
        targets = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                targets.append(os.readlink(f"/proc/self/fd/{fd}"))
            except FileNotFoundError:  # the listing's own descriptor, closed by now
                continue
        return [t for t in targets if t.startswith(str(folder))]

    assert any(".retrieval.sqlite3" in t for t in open_under(tmp_path)), "the turn counted its memory"
    await session.close()
    assert [t for t in open_under(tmp_path) if ".retrieval.sqlite3" in t] == []
