"""`anton-tui ask` in real processes against the scripted LLM server: the answer on stdout, JSON events, a cell that
runs, memory written or held for review as in the app, the conversation saved and continued, and the exit status
with one clear line (2 for a setting or usage problem, 1 for a failed turn), never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakellm import Reply, ToolCallSpec
from tests.session_helpers import CODER, PLANNER, quiet_coder


def ask(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anton_tui", "ask", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip


def events(result: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def history_files(project: Path) -> list[Path]:
    return sorted((project / ".anton" / "episodes").glob("*_history.json"))


def test_the_answer_goes_to_stdout_and_the_conversation_is_saved(fake_llm, project_dir):
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Canberra — not Sydney."), Reply.text("About 470,000."), model=PLANNER)
    first = ask("Capital of Australia?", env=fake_llm.env())
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Canberra — not Sydney.\n"
    assert "Traceback" not in first.stderr
    (saved,) = history_files(project_dir)
    assert json.loads(saved.read_text())[0] == {"role": "user", "content": "Capital of Australia?"}

    second = ask("Population?", "--continue", env=fake_llm.env())
    assert second.returncode == 0, second.stderr
    assert second.stdout == "About 470,000.\n"
    assert history_files(project_dir) == [saved]
    assert [m["role"] for m in json.loads(saved.read_text())] == ["user", "assistant"] * 2
    assert fake_llm.requests_for(PLANNER)[-1].messages[0]["content"] == "Capital of Australia?"


def test_json_events_one_per_line_and_a_cell_that_runs(fake_llm, project_dir):
    quiet_coder(fake_llm)
    code = "print(sum(range(10)))"
    fake_llm.queue(Reply(content="Adding.", calls=[ToolCallSpec("scratchpad", {"action": "exec", "name": "main",
                                                                                "code": code})]),
                   Reply.text("It is 45."), model=PLANNER)  # fmt: skip
    result = ask("Add 0..9", "--json", env=fake_llm.env())
    assert result.returncode == 0, result.stderr
    lines = events(result)
    assert all("type" in line for line in lines)
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "turn_started" and kinds[-1] == "done"
    finished = next(line for line in lines if line["type"] == "tool_call_finished")
    assert finished["name"] == "scratchpad" and finished["success"] and "45" in finished["result"]
    assert "scratchpad_cell_finished" in kinds
    assert [line["text"] for line in lines if line["type"] == "assistant_message_done"] == ["Adding.", "It is 45."]
    assert lines[-1]["session_id"] and lines[-1]["exit"] == 0


def test_memory_is_written_in_autopilot_and_held_for_review_in_copilot(fake_llm, project_dir, anton_home):
    quiet_coder(fake_llm)
    remember = {"entries": [{"text": "Reports use euros", "kind": "lesson", "scope": "project"}]}
    lessons = project_dir / ".anton" / "memory" / "lessons.md"
    fake_llm.queue(Reply(calls=[ToolCallSpec("memorize", remember)]), Reply.text("Noted."), model=PLANNER)
    written = ask("Remember: euros", env={**fake_llm.env(), "ANTON_MEMORY_MODE": "autopilot"})
    assert written.returncode == 0, written.stderr
    assert "Reports use euros" in lessons.read_text()

    # in copilot a learner's lessons wait for the user: here nobody is asked, they are kept for the app
    lesson = "Check that an input file exists before opening it"
    fake_llm.queue(Reply(calls=[ToolCallSpec("scratchpad", {"action": "exec", "name": "main",
                                                            "code": "open('missing.csv').read()"})]),
                   Reply.text("The file is missing."), model=PLANNER)  # fmt: skip
    fake_llm.queue(Reply.tool_call("CerebellumReport", {"lessons": [{"text": lesson}]}), model=CODER)
    asked = ask("Read missing.csv", "--json", env={**fake_llm.env(), "ANTON_MEMORY_MODE": "copilot"})
    assert asked.returncode == 0, asked.stderr
    assert lesson not in lessons.read_text(), "never approved without the user"
    review = next(line for line in events(asked) if line["type"] == "memory_held_for_review")
    assert [engram["text"] for engram in review["engrams"]] == [lesson]
    held_files = list(project_dir.rglob("*.held.json")) + list(anton_home.rglob("*.held.json"))
    assert any(lesson in path.read_text() for path in held_files), "kept for the app to ask about"


def test_no_key_is_a_setting_problem_exit_2_with_one_line(fake_llm, project_dir):
    env = {key: value for key, value in fake_llm.env().items() if "API_KEY" not in key}
    result = ask("hello", env=env)
    assert result.returncode == 2
    assert result.stderr.startswith("anton-tui ask: no API key for the planning model (anthropic)")
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not fake_llm.requests and history_files(project_dir) == []

    bad = ask("hello", env={**fake_llm.env(), "ANTON_MEMORY_MODE": "sometimes"})
    assert bad.returncode == 2 and "ANTON_MEMORY_MODE" in bad.stderr and "Traceback" not in bad.stderr
    unknown = ask("hello", "--resume", "20200101_000000", env=fake_llm.env())
    assert unknown.returncode == 2 and "No saved conversation" in unknown.stderr


def test_a_provider_that_cannot_be_reached_fails_the_turn_with_exit_1(fake_llm, project_dir):
    env = {**fake_llm.env(), "ANTON_ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # nothing listens on port 9
    result = ask("hello", "--json", env=env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = events(result)
    assert any(line["type"] == "error_occurred" for line in lines)
    assert lines[-1] == {"type": "done", "session_id": lines[-1]["session_id"], "exit": 1}

