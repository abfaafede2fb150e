"""`anton-tui reflect --json` and `anton-tui recall --json` run as a user's script runs them: in a real process,
against the scripted LLM server, reading and writing the project's files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from tests.fakellm import Reply
from tests.test_reflection import seed_week

PLANNER = "planner"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anton_tui", *args], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip


def script(fake_llm) -> None:
    """Drafts naming their period (Monday and Thursday propose a lesson), and an AI reviewer approving all."""

    def respond(request):
        name = (request.tool_choice or {}).get("name")
        if name == "ReviewVerdict":
            return Reply.tool_call(name, {"approve": True, "reason": "Supported by the week's work."})
        if name != "ReflectionDraft":
            return None
        label = re.search(r"period (\S+)", str(request.messages[0]["content"])).group(1)
        proposals = []
        if label in ("2026-11-16", "2026-11-19"):
            proposals = [{"kind": "lesson", "text": f"Invoices of {label} use sep=';'", "why": "seen that day"}]
        return Reply.tool_call(name, {"title": f"Invoices {label}", "notes": f"Notes of {label}.",
                                      "proposals": proposals})  # fmt: skip

    fake_llm.responder = respond


def test_reflect_and_recall_from_a_script(anton_home, project_dir, fake_llm):
    seed_week(project_dir / ".anton" / "episodes")
    script(fake_llm)
    env = {**os.environ, **fake_llm.env(), "TZ": "CET-1"}

    done = cli("--folder", str(project_dir), "reflect", "--json", "--date", "2026-11-23", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    reflections = project_dir / ".anton" / "reflections"
    assert sorted(report["written"]) == sorted(
        [str(reflections / "daily" / f"2026-11-{day}.md") for day in (16, 17, 19, 20, 21, 22)]
        + [str(reflections / "weekly" / "2026-W47.md")]
    )
    assert report["quiet"] == ["daily 2026-11-18"]
    by_text = {p["reflection"].rsplit("/", 1)[1]: p for p in report["proposals"]}
    monday, thursday = by_text["2026-11-16.md"], by_text["2026-11-19.md"]
    assert (monday["kind"], monday["target"], monday["status"]) == ("lesson", "project lessons.md", "applied")
    assert monday["why"] == "applied: approved by the AI reviewer: Supported by the week's work."
    assert thursday["status"] == "held" and "untrusted input" in thursday["why"]  # ANTON_REVIEW_TAINTED: human
    assert set(monday) >= {"id", "kind", "target", "status", "why"}
    assert len(fake_llm.requests_for(PLANNER)) == 6 + 1 + 1  # six days, the week, one review (none for Wednesday)

    again = json.loads(cli("--folder", str(project_dir), "reflect", "--json", "--date", "2026-11-23", env=env).stdout)
    assert again == {"written": [], "quiet": [], "proposals": [], "failed": []}

    found = cli("--folder", str(project_dir), "recall", "notes", "of", "2026-11-20", "--json", "--max", "3", env=env)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits[0]["source"] == "reflection" and hits[0]["session"] == "daily/2026-11-20"
    assert hits[0]["path"] == str(reflections / "daily" / "2026-11-20.md")
    assert hits[0]["title"] == "Daily reflection: 2026-11-20 — Invoices 2026-11-20"
    turns = json.loads(cli("--folder", str(project_dir), "recall", "Friday question", "--json", env=env).stdout)
    assert turns and all(hit["source"] == "episode" for hit in turns if hit["role"] == "user")
    assert any(hit["content"] == "Friday question 1 about invoices" for hit in turns)


def test_reflect_without_a_model_says_so_and_fails(anton_home, project_dir):
    seed_week(project_dir / ".anton" / "episodes")
    env = {key: value for key, value in os.environ.items() if "API_KEY" not in key} | {"TZ": "CET-1"}
    done = cli("--folder", str(project_dir), "reflect", "--period", "daily", "--date", "2026-11-18", env=env)
    assert done.returncode == 1
    assert "Not written: daily 2026-11-16: there is no model to write it with" in done.stderr
    assert not (project_dir / ".anton" / "reflections" / "daily" / "2026-11-16.md").exists()


def test_a_bad_review_level_is_one_line_and_exit_code_two(anton_home, project_dir):
    env = {**os.environ, "ANTON_REVIEW_LEVEL": "sometimes"}
    done = cli("--folder", str(project_dir), "reflect", env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == ("anton-tui: ANTON_REVIEW_LEVEL='sometimes' (from the environment) is not valid: "
                                   "expected one of ai, human, none")  # fmt: skip
