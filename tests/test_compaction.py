"""Compaction: the model picks entries to keep by number; kept lines stay byte for byte, doubt changes nothing."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from anton_tui.agent.events import MemoryWritten
from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.engrams.hippocampus import Hippocampus
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import (
    CODER,
    PLANNER,
    coder_requests,
    forced_tool,
    make_session,
    run_turn,
    settle,
    user_text_of,
)

KINDS = ("Always", "Never", "When")


def rules_file(count: int, extra: str = "") -> str:
    """A rules.md as Anton writes it: rules 0-1 under Always, 2-11 under Never, the rest under When."""
    sections = {kind: [] for kind in KINDS}
    for i in range(count):
        kind = "Always" if i < 2 else "Never" if i < 12 else "When"
        day = f"2026-01-{i % 28 + 1:02d}"
        sections[kind].append(f"- {kind} rule number {i} <!-- confidence:medium source:llm ts:{day} -->\n")
    text = "# Rules\n"
    for kind in KINDS:
        text += f"\n## {kind}\n" + "".join(sections[kind])
    return text + extra


def keep(*numbers: int, **options) -> Reply:
    return Reply.tool_call("CompactionResult", {"keep": list(numbers)}, **options)


@pytest.fixture
def memory(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "home" / "memory", tmp_path / "project" / "memory"


def make_cortex(memory, fake_llm) -> Cortex:  # noqa: F811
    return Cortex(Hippocampus(memory[0]), Hippocampus(memory[1]), llm=fake_llm.llm_client())


def offered(request) -> list[str]:
    return re.findall(r"^(\d+)\. (.*)$", user_text_of(request), flags=re.M)


async def test_kept_entries_stay_byte_identical_under_their_headings_with_a_backup(fake_llm, memory):  # noqa: F811
    rules = memory[0] / "rules.md"
    rules.parent.mkdir(parents=True)
    original = rules_file(25)
    rules.write_text(original)
    fake_llm.queue(keep(0, 2), model=CODER)

    outcomes = await make_cortex(memory, fake_llm).compact_all()

    [request] = fake_llm.requests
    assert forced_tool(request) == "CompactionResult"
    numbers = offered(request)
    assert [int(n) for n, _ in numbers] == list(range(25))
    entry_lines = [line for line in original.splitlines() if line.startswith("- ")]
    assert numbers[0][1] == "[always] " + entry_lines[0][2:]  # the model sees the entry as written, comment and all
    first, third = entry_lines[0], entry_lines[2]
    assert "rule number 0 " in first and "rule number 2 " in third
    assert rules.read_text() == f"# Rules\n\n## Always\n{first}\n\n## Never\n{third}\n\n## When\n"
    [outcome] = outcomes
    assert (outcome.scope, outcome.file, outcome.before, outcome.kept) == ("global", "rules", 25, 2)
    backup = Path(outcome.backup)
    assert backup.parent == memory[0] / "backups" and backup.read_text() == original
    assert "kept 2 of 25" in str(outcome)


@pytest.mark.parametrize(
    "reply",
    [
        Reply.error(400, "this request is malformed"),
        keep(25, -1),  # numbers of no entry only (a bad number among good ones is ignored: test_anton_parity)
        keep(),
        Reply.text("I would rather not."),  # asked twice, never answers with the tool
    ],
    ids=["model-error", "no-existing-entry", "nothing-kept", "no-answer"],
)
async def test_doubt_leaves_the_file_untouched(fake_llm, memory, reply):  # noqa: F811
    rules = memory[0] / "rules.md"
    rules.parent.mkdir(parents=True)
    original = rules_file(25)
    rules.write_text(original)
    fake_llm.queue(reply, reply, model=CODER)

    [outcome] = await make_cortex(memory, fake_llm).compact_all()

    assert rules.read_text() == original
    assert outcome.problem and not outcome.changed and "left unchanged" in str(outcome)
    assert not (memory[0] / "backups").exists()


async def test_unreadable_lines_and_unknown_sections_are_never_dropped(fake_llm, memory):  # noqa: F811
    """(A rule above the first heading is offered as an Always rule, as Anton offers it: test_anton_parity.)"""
    rules = memory[0] / "rules.md"
    rules.parent.mkdir(parents=True)
    odd = (
        "- a bullet before any heading\n"
        "# Rules\n"
        "this line is not an entry\n"
        "\n## Someday\n- an entry under a heading Anton does not know\n"
    )
    bad_date = "- a rule with a bad date <!-- ts:yesterday -->\n"
    rules.write_text(odd + rules_file(22).removeprefix("# Rules\n") + bad_date)
    fake_llm.queue(keep(2), model=CODER)  # 0 is the bullet before any heading, then rule number 0, 1, ...

    await make_cortex(memory, fake_llm).compact_all()

    text = rules.read_text()
    assert len(offered(fake_llm.requests[0])) == 23
    assert "- a bullet before any heading" not in text
    for survivor in ("this line is not an entry", "## Someday",
                     "- an entry under a heading Anton does not know", bad_date.strip()):
        assert survivor in text
    assert [line for line in text.splitlines() if "rule number" in line] == [
        "- Always rule number 1 <!-- confidence:medium source:llm ts:2026-01-02 -->"
    ]


async def test_lessons_are_compacted_the_same_way(fake_llm, memory):  # noqa: F811
    lessons = memory[1] / "lessons.md"
    lessons.parent.mkdir(parents=True)
    lines = [f"- lesson {i} <!-- topic:t{i % 3} ts:2026-02-01 -->\n" for i in range(22)]
    lessons.write_text("# Lessons\n" + "".join(lines))
    fake_llm.queue(keep(5, 1), model=CODER)

    await make_cortex(memory, fake_llm).compact_all()

    assert lessons.read_text() == "# Lessons\n" + lines[1] + lines[5]
    assert len(list((memory[1] / "backups").glob("lessons.md.*.bak"))) == 1


async def test_thresholds_small_scopes_wait_and_vacuum_skips_only_tiny_files(fake_llm, memory):  # noqa: F811
    memory[1].mkdir(parents=True)
    (memory[1] / "rules.md").write_text(rules_file(7))
    (memory[1] / "lessons.md").write_text("# Lessons\n" + "".join(f"- lesson {i}\n" for i in range(12)))
    cortex = make_cortex(memory, fake_llm)

    assert not cortex.needs_compaction()
    assert await cortex.compact_all() == [] and fake_llm.requests == []

    fake_llm.queue(keep(*range(11)), model=CODER)
    [outcome] = await cortex.compact_now()  # 19 entries in the scope, but /memory vacuum asks for it

    assert outcome.file == "lessons" and outcome.kept == 11
    assert len(fake_llm.requests) == 1  # rules.md, with 7 entries, was not worth a call
    assert "lesson 11" not in (memory[1] / "lessons.md").read_text()


async def test_only_the_last_few_backups_are_kept(fake_llm, memory):  # noqa: F811
    lessons = memory[1] / "lessons.md"
    lessons.parent.mkdir(parents=True)
    lessons.write_text("# Lessons\n" + "".join(f"- lesson {i}\n" for i in range(15)))
    cortex = make_cortex(memory, fake_llm)
    for remaining in range(15, 8, -1):  # each round drops the last entry
        fake_llm.queue(keep(*range(remaining - 1)), model=CODER)
        await cortex.compact_now()

    assert lessons.read_text().count("- lesson") == 8
    backups = sorted((memory[1] / "backups").glob("lessons.md.*.bak"))
    assert len(backups) == 5
    assert backups[-1].read_text().count("- lesson") == 9


async def test_an_entry_written_while_the_model_thinks_survives(fake_llm, memory):  # noqa: F811
    rules = memory[0] / "rules.md"
    rules.parent.mkdir(parents=True)
    rules.write_text(rules_file(24))
    cortex = make_cortex(memory, fake_llm)
    fake_llm.queue(keep(0, 4, delay=0.3), model=CODER)

    task = asyncio.create_task(cortex.compact_all())
    await asyncio.to_thread(fake_llm.wait_for_requests, 1)  # the model has the entries and is thinking
    assert await asyncio.to_thread(cortex.global_hc.encode_rule, "Always check the units", "always", "high", "user")
    await task

    text = rules.read_text()
    assert "- Always check the units <!-- confidence:high source:user" in text
    assert [line for line in text.splitlines() if "rule number" in line] == [
        line for line in rules_file(24).splitlines() if re.search(r"rule number (0|4) ", line)
    ]


async def test_a_session_compacts_in_the_background_at_start_and_every_n_turns(fake_llm, anton_home):  # noqa: F811
    rules = anton_home / "memory" / "rules.md"
    rules.parent.mkdir(parents=True)
    rules.write_text(rules_file(25))
    session = make_session(fake_llm, compaction_every_turns=3)
    fake_llm.queue(*(Reply.text(f"answer {i}") for i in range(4)), model=PLANNER)
    fake_llm.queue(keep(*range(22), delay=0.3), model=CODER)

    events = await run_turn(session, "hello")
    assert not any(isinstance(e, MemoryWritten) for e in events)  # the turn did not wait for it
    await settle(session)
    written = session.background_events.get_nowait()
    assert isinstance(written, MemoryWritten) and written.producer == "compaction"
    assert "kept 22 of 25" in written.actions[0]
    assert rules.read_text().count("rule number") == 22

    await run_turn(session, "two")  # not due
    await settle(session)
    fake_llm.queue(keep(*range(20)), model=CODER)
    await run_turn(session, "three")  # due, and 22 entries are still over the threshold
    await settle(session)
    assert len(coder_requests(fake_llm)) == 2
    assert rules.read_text().count("rule number") == 20

    await run_turn(session, "four")  # not due
    await settle(session)
    assert len(coder_requests(fake_llm)) == 2
    await session.close()
