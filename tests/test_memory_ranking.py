"""Memory ranked to the turn, through the real session, SDK and scripted LLM server: with 2,000 learned rules on
200 topics the request's ranked memory stays within ANTON_MEMORY_BUDGET_TOKENS, a turn about one topic carries that
topic's rules, every rule the user wrote (source:user) is carried whatever the turn, and ``anton-tui memory context
--json`` predicts exactly what the server then received."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from anton_tui.memory.engrams.selection import tokens_of
from tests.fakellm import Reply
from tests.session_helpers import PLANNER, make_session, run_turn

TOPICS = 200
PER_TOPIC = 10
BUDGET = 800
ACTIONS = (
    "restart the workers before a deploy",
    "read the logs under /var/log first",
    "pin the client library version",
    "run the smoke tests after a change",
    "never edit the generated files by hand",
    "ask before dropping a table",
    "keep the retry count at three",
    "use the staging credentials only",
    "write the migration as a new file",
    "check the dashboard after a release",
)


def topic_names(count: int) -> list[str]:
    """Made-up one-word product names, distinct after stemming."""
    rng = random.Random(7)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    names: set[str] = set()
    while len(names) < count:
        names.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(3)) + "ix")
    return sorted(names)


def write_rules(memory: Path) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """2,000 rules in rules.md: (topics, each topic's rule texts, the source:user ones)."""
    topics = topic_names(TOPICS)
    by_topic: dict[str, list[str]] = {topic: [] for topic in topics}
    user, lines = [], ["# Rules\n", "\n## Always\n"]
    for number in range(TOPICS * PER_TOPIC):
        topic = topics[number % TOPICS]
        text = f"On {topic}, {ACTIONS[number // TOPICS]} (rule {number})"
        source = "user" if number % 97 == 0 else "consolidation"
        lines.append(f"- {text} <!-- confidence:high source:{source} ts:2026-{1 + number % 12:02d}-01 -->\n")
        by_topic[topic].append(text)
        if source == "user":
            user.append(text)
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "rules.md").write_text("".join(lines), encoding="utf-8")
    return topics, by_topic, user


def memory_lines(system: str) -> set[str]:
    """The rule texts the system prompt carries."""
    return {line[2:] for line in system.splitlines() if line.startswith("- On ")}


async def test_two_thousand_rules_load_the_turns_topic_within_the_budget_and_every_user_rule(fake_llm, anton_home):
    topics, by_topic, user = write_rules(anton_home / "memory")
    session = make_session(fake_llm, memory_budget_tokens=BUDGET)
    topic = topics[42]
    fake_llm.queue(Reply.text("Done."), Reply.text("Done too."), model=PLANNER)
    await run_turn(session, f"The {topic} deploy failed again, what should I do?")
    system = str(fake_llm.requests_for(PLANNER)[-1].body["system"])
    carried = memory_lines(system)

    assert set(by_topic[topic]) <= carried, "a turn about one topic carries that topic's rules"
    assert set(user) <= carried, "every rule the user wrote is carried"
    ranked = carried - set(user)
    assert sum(tokens_of(f"- {text}") for text in ranked) <= BUDGET
    assert len(carried) < 200, "nowhere near all 2,000"
    other = topics[137]
    assert not set(by_topic[other]) - set(user) & carried

    report = session.context_reports.latest()
    assert report.budget_tokens == BUDGET and report.ranked_tokens <= BUDGET
    ranked_items = [item for item in report.items if item.status == "ranked"]
    assert {item.text[2:] for item in ranked_items} == ranked and all(item.score for item in ranked_items)
    assert report.count("left out") == TOPICS * PER_TOPIC - len(carried)

    await run_turn(session, f"And how do I pin the library for {other}?")
    carried = memory_lines(str(fake_llm.requests_for(PLANNER)[-1].body["system"]))
    assert set(by_topic[other]) <= carried and set(user) <= carried
    scores = {item.text[2:]: item.score for item in session.context_reports.latest().items if item.score}
    best = sorted(scores, key=lambda text: -scores[text])[:PER_TOPIC]
    assert sum(text in by_topic[other] for text in best) >= PER_TOPIC - 1, "the turn's own topic ranks first"
    await session.close()


def memory_context(message: str, project: Path, *extra: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "anton_tui", "memory", "context", message, "--json", *extra],
        capture_output=True, text=True, timeout=120, env={**os.environ, "ANTON_MEMORY_BUDGET_TOKENS": str(BUDGET)},
        cwd=project, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


async def test_memory_context_json_agrees_with_what_the_server_received(fake_llm, anton_home, project_dir):
    topics, by_topic, user = write_rules(anton_home / "memory")
    (anton_home / "AGENTS.md").write_text("Answer in British English.\n")
    (project_dir / "AGENTS.local.md").write_text("I read on a phone: keep tables narrow.\n")
    message = f"Why does {topics[7]} keep timing out after the release?"
    predicted = memory_context(message, project_dir)

    assert predicted["budget_tokens"] == BUDGET
    assert {"kind", "scope", "text", "tokens", "score"} <= set(predicted["loaded"][0])
    assert {"kind", "scope", "text", "tokens", "why"} <= set(predicted["left_out"][0])
    assert predicted["total_tokens"] == sum(item["tokens"] for name in ("pinned", "loaded") for item in predicted[name])
    assert sum(item["tokens"] for item in predicted["loaded"]) == predicted["ranked_tokens"] <= BUDGET
    assert [item["scope"] for item in predicted["pinned"] if item["kind"] == "memory_file"] == ["user", "local"]

    session = make_session(fake_llm, memory_budget_tokens=BUDGET)
    fake_llm.queue(Reply.text("Looking."), model=PLANNER)
    await run_turn(session, message)
    request = fake_llm.requests_for(PLANNER)[-1]
    carried = memory_lines(str(request.body["system"]))
    given = {item["text"] for name in ("pinned", "loaded") for item in predicted[name] if item["kind"] == "always"}
    assert carried == given
    assert not carried & {item["text"] for item in predicted["left_out"]}
    assert set(by_topic[topics[7]]) <= carried and set(user) <= carried
    files = [item["text"] for item in predicted["pinned"] if item["kind"] == "memory_file"]
    front = [json.dumps(m) for m in request.messages[: len(files)]]
    assert all(text.strip() in sent for text, sent in zip(files, front, strict=True))
    await session.close()


def test_memory_context_in_text_says_the_budget_and_what_was_left_out(anton_home, project_dir):
    topics, _by_topic, _user = write_rules(anton_home / "memory")
    done = subprocess.run(
        [sys.executable, "-m", "anton_tui", "memory", "context", f"restart {topics[3]}"], capture_output=True,
        text=True, timeout=120, cwd=project_dir, check=True,
    )  # fmt: skip
    assert done.stdout.startswith("Budget 2,000 tokens: ranked in ")
    assert "Left out (" in done.stdout and "more (--json lists them all)" in done.stdout
    assert not (anton_home / "memory" / ".retrieval.sqlite3").exists(), "showing what would be sent counts nothing"


async def test_a_small_memory_is_loaded_whole_whatever_the_turn(fake_llm, anton_home):
    session = make_session(fake_llm)
    session.cortex.global_hc.encode_rule("Prefer httpx over requests", "always", "high", "llm")
    session.cortex.project_hc.encode_lesson("The sales export uses semicolons", "data")
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    await run_turn(session, "hello there")
    system = str(fake_llm.requests_for(PLANNER)[-1].body["system"])
    assert "Prefer httpx over requests" in system and "The sales export uses semicolons" in system
    await session.close()


def test_the_budget_setting_defaults_to_the_measured_budget():
    from anton_tui.config import Settings
    from anton_tui.memory.engrams.selection import DEFAULT_BUDGET_TOKENS

    assert Settings.model_fields["memory_budget_tokens"].default == DEFAULT_BUDGET_TOKENS == 2000
