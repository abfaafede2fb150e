"""No secret is kept: memory writes of every producer, the episode log and what the model reads of a cell are
scrubbed, and the user is told what was taken out."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from anton_tui.agent import events as ev
from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.engrams.hippocampus import Hippocampus
from tests.fakellm import Reply
from tests.session_helpers import exec_reply, make_session, run_turn
from tests.test_redact import GITHUB_PAT, SHAPES

AWS_SECRET = SHAPES["AWS secret key"]
ASIA = SHAPES["AWS session key id"]
GOOGLE = SHAPES["Google API key"]
STRIPE = SHAPES["Stripe live key"]
EVERY_SECRET = (GITHUB_PAT, AWS_SECRET, ASIA, GOOGLE, STRIPE)


class EpisodeRecorder:
    def __init__(self) -> None:
        self.turns: list[tuple] = []

    def log_turn(self, turn: int, role: str, content: str, **meta) -> None:
        self.turns.append((turn, role, content, meta))


def tool_results(body: dict) -> str:
    """The tool results a request carried back to the model (its own calls and the user's words are not ours)."""
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    return json.dumps([b["content"] for b in blocks if b.get("type") == "tool_result"])


def memory_text(*folders: Path) -> str:
    return "".join(p.read_text() for folder in folders if folder.exists() for p in sorted(folder.glob("*.md")))


def test_secrets_are_taken_out_of_every_memory_file_and_its_episode(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    episodes = EpisodeRecorder()
    cortex = Cortex(Hippocampus(home, scope="global"), Hippocampus(project), episodic=episodes)
    encoded = cortex.encode_all([
        Engram(f"The deploy token is {GITHUB_PAT}", "lesson", "project", topic="deploy"),
        Engram(f"Always sign S3 calls with {AWS_SECRET}", "always", "project", confidence="high"),
        Engram(f"When the session key {ASIA} expires, refresh it", "when", "global"),
        Engram(f"Maps key: {GOOGLE}", "profile", "global"),
        Engram(f"Billing runs on {STRIPE}", "lesson", "global"),
    ])
    written = memory_text(home, project)
    assert not [secret for secret in EVERY_SECRET if secret in written]
    assert written.count("[REDACTED_API_KEY]") == 5
    assert "The deploy token is [REDACTED_API_KEY]" in written and "Maps key: [REDACTED_API_KEY]" in written
    assert dict(encoded.removed) == {
        "project lessons.md": ("GitHub fine-grained token",),
        "project rules.md": ("AWS secret key",),
        "global rules.md": ("AWS Access Key",),
        "global profile.md": ("Google API key",),
        "global lessons.md": ("Stripe Access Key",),
    }
    assert not [secret for secret in EVERY_SECRET if secret in " ".join(encoded.actions)]
    assert not [e for e in encoded.engrams if any(secret in e.text for secret in EVERY_SECRET)]
    logged = json.dumps(episodes.turns)
    assert [t[1] for t in episodes.turns] == ["memory_write", "memory_write"]
    assert "[REDACTED_API_KEY]" in logged and not [secret for secret in EVERY_SECRET if secret in logged]


def test_writes_that_bypass_the_cortex_are_scrubbed_too(tmp_path: Path) -> None:
    hc = Hippocampus(tmp_path)
    assert hc.encode_lesson("a lesson to edit")
    lesson = hc.get_lessons()[0]
    assert hc.update_entry("lessons", lesson.id, f"edited with {GITHUB_PAT}")  # the inspector's edit
    assert hc.rewrite_file(  # a rewrite that adds a line, as a merging compaction would
        "lessons", lambda parsed: [*parsed.lines, f"- merged: use {STRIPE} for billing <!-- ts:2026-11-25 -->\n"]
    )
    assert hc.rewrite_identity([f"Key: {GOOGLE}"])
    text = memory_text(tmp_path)
    assert not [secret for secret in EVERY_SECRET if secret in text]
    assert [e.text for e in hc.get_lessons()] == [
        "edited with [REDACTED_API_KEY]", "merged: use [REDACTED_API_KEY] for billing"
    ]


def test_a_secret_alone_is_not_worth_a_memory(tmp_path: Path) -> None:
    cortex = Cortex(Hippocampus(tmp_path / "g", scope="global"), Hippocampus(tmp_path / "p"))
    encoded = cortex.encode_all([Engram(GITHUB_PAT, "lesson")])
    assert encoded.actions[0].startswith("Not saved (lesson): nothing to save")
    assert not (tmp_path / "p" / "lessons.md").exists()


@pytest.mark.parametrize("producer", ["cerebellum", "consolidator", "acc", "identity"])
async def test_each_learner_writes_through_the_scrub_and_the_chat_is_told(fake_llm, tmp_path, producer) -> None:
    session = make_session(fake_llm)
    kind = "profile" if producer == "identity" else "always" if producer == "acc" else "lesson"
    engram = Engram(f"Use {GITHUB_PAT} to push", kind, "global", confidence="high", source="consolidation")
    assert session.encode_through_gate([engram], producer) == []
    queued = []
    while not session.background_events.empty():
        queued.append(session.background_events.get_nowait())
    written, removed = queued
    assert isinstance(written, ev.MemoryWritten) and written.engrams[0].text == "Use [REDACTED_API_KEY] to push"
    assert removed == ev.SecretsRemoved(
        kinds=("GitHub fine-grained token",),
        where=f"global {'profile' if kind == 'profile' else 'rules' if kind == 'always' else 'lessons'}.md",
        producer=producer,
    )
    assert GITHUB_PAT not in memory_text(session.cortex.global_hc.base_dir)


async def test_a_memorized_key_reaches_no_file_and_no_episode(fake_llm, tmp_path) -> None:
    session = make_session(fake_llm, episodic_memory=True)
    fake_llm.queue(
        Reply.tool_call("memorize", {"entries": [
            {"text": f"Deploy with token {GITHUB_PAT}", "kind": "lesson", "scope": "project"},
        ]}),
        Reply.text("Saved."),
        model="planner",
    )
    events = await run_turn(session, f"remember my deploy token {GITHUB_PAT}")
    await session.close()
    removed = [e for e in events if isinstance(e, ev.SecretsRemoved)]
    assert removed == [ev.SecretsRemoved(("GitHub fine-grained token",), "project lessons.md", "memorize")]
    memory = memory_text(session.cortex.project_hc.base_dir)
    assert "Deploy with token [REDACTED_API_KEY]" in memory and GITHUB_PAT not in memory
    episodes = "".join(p.read_text() for p in session.episodic.episodes_dir.glob("*.jsonl"))
    assert "memory_write" in episodes and GITHUB_PAT not in episodes
    assert GITHUB_PAT not in tool_results(fake_llm.requests_for("planner")[1].body)


async def test_the_model_reads_cell_output_scrubbed_while_the_pane_keeps_it_raw(fake_llm, monkeypatch) -> None:
    password = "hunter2hunter2"
    monkeypatch.setenv("DS_POSTGRES_PROD__PASSWORD", password)
    session = make_session(fake_llm, episodic_memory=True)
    code = (
        "import base64\n"
        f"print('password', {password!r})\n"
        f"print('encoded', base64.b64encode({password!r}.encode()).decode())\n"
        f"print('token', 'ghp_' + {SHAPES['GitHub token'][4:]!r})\n"
    )
    fake_llm.queue(exec_reply("main", code, "print the secrets"), Reply.text("Done."), model="planner")
    try:
        events = await run_turn(session, "show me")
        raw = session.scratchpads.get("main").cells[-1].stdout
    finally:
        await session.close()
    assert password in raw and SHAPES["GitHub token"] in raw  # the pane is fed the raw cell
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.result.splitlines()[1:4] == [
        "password [DS_POSTGRES_PROD__PASSWORD]", "encoded [DS_POSTGRES_PROD__PASSWORD]", "token [REDACTED_API_KEY]"
    ]
    hidden = next(e for e in events if isinstance(e, ev.SecretsRemoved))
    assert (hidden.pad, hidden.cell, hidden.producer) == ("main", 1, "scratchpad")
    assert hidden.kinds == ("DS_POSTGRES_PROD__PASSWORD value", "DS_POSTGRES_PROD__PASSWORD value", "GitHub Token")
    seen = tool_results(fake_llm.requests_for("planner")[1].body)
    encoded = base64.b64encode(password.encode()).decode()
    assert password not in seen and encoded not in seen and SHAPES["GitHub token"] not in seen
    episodes = "".join(p.read_text() for p in session.episodic.episodes_dir.glob("*.jsonl"))
    assert password not in episodes and SHAPES["GitHub token"] not in episodes
