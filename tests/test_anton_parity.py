"""Behaviour that must match anton-agent 2.26.10 (reference anton-format.md §2, §4, §5, §8): both error detectors
reported for one failure loop, compaction that ignores an entry number that does not exist, a rule above the first
heading filed under Always by compaction, the project profile folded into the global one, the episodes folder made
when a session starts."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from anton_tui.memory.learners.acc import AnteriorCingulate, format_nudge
from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.episodes.store import EpisodicMemory
from anton_tui.memory.engrams.hippocampus import Hippocampus
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import CODER, user_text_of


def rules_file(count: int, before_headings: str = "") -> str:
    """rules.md as Anton writes it (rules 0-1 Always, 2-11 Never, the rest When), with optional text before the
    first heading."""
    kinds = {"Always": [], "Never": [], "When": []}
    for i in range(count):
        kind = "Always" if i < 2 else "Never" if i < 12 else "When"
        kinds[kind].append(f"- {kind} rule number {i} <!-- confidence:medium source:llm ts:2026-01-0{i % 9 + 1} -->\n")
    return "# Rules\n" + before_headings + "".join(f"\n## {k}\n" + "".join(v) for k, v in kinds.items())


def keep(*numbers: int) -> Reply:
    return Reply.tool_call("CompactionResult", {"keep": list(numbers)})


@pytest.fixture
def memory(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "home" / "memory", tmp_path / "project" / ".anton" / "memory"


def cortex_for(memory, fake_llm=None) -> Cortex:  # noqa: F811
    llm = fake_llm.llm_client() if fake_llm is not None else None
    return Cortex(Hippocampus(memory[0], scope="global"), Hippocampus(memory[1]), llm=llm)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- §8 ACC


def test_one_failure_loop_reports_both_error_detectors_with_one_lesson() -> None:
    acc = AnteriorCingulate()
    for request in (4411, 4412, 4419):
        acc.observe("tool_result", {"name": "publish", "success": False, "error": f"settings unavailable ({request})"})

    [lesson] = acc.at_end_of_turn()
    assert lesson.detector == "detect_repeated_error_signature"
    assert lesson.detectors == ("detect_repeated_error_signature", "detect_repeated_tool_error")
    [nudge] = acc.at_round_n()
    assert "detect_repeated_error_signature" in format_nudge(nudge) and "detect_repeated_tool_error" in format_nudge(nudge)
    acc.observe("tool_result", {"name": "publish", "success": False, "error": "quota exceeded"})
    assert acc.at_round_n() == [], "each detector nudges once per turn, also when it spoke through another's lesson"


# --------------------------------------------------------------------------- §4.4 compaction


async def test_compaction_ignores_entry_numbers_that_do_not_exist_and_goes_on(
        fake_llm, memory, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    rules = write(memory[0] / "rules.md", rules_file(25))
    entries = [line for line in rules.read_text().splitlines() if line.startswith("- ")]
    fake_llm.queue(keep(0, 2, 25, -1, 99), model=CODER)

    with caplog.at_level(logging.WARNING, logger="anton_tui.memory.learners.compaction"):
        [outcome] = await cortex_for(memory, fake_llm).compact_all()

    assert rules.read_text() == f"# Rules\n\n## Always\n{entries[0]}\n\n## Never\n{entries[2]}\n\n## When\n"
    assert (outcome.before, outcome.kept, outcome.ignored) == (25, 2, (-1, 25, 99))
    assert "kept 2 of 25" in str(outcome) and "-1, 25, 99" in str(outcome)
    assert any("-1, 25, 99" in record.getMessage() for record in caplog.records)


async def test_compaction_with_no_existing_entry_named_leaves_the_file(fake_llm, memory) -> None:  # noqa: F811
    rules = write(memory[0] / "rules.md", rules_file(25))
    original = rules.read_text()
    fake_llm.queue(keep(25, 40), model=CODER)

    [outcome] = await cortex_for(memory, fake_llm).compact_all()

    assert rules.read_text() == original
    assert outcome.problem and not outcome.changed


# --------------------------------------------------------------------------- §2.3 a rule above the first heading


async def test_compaction_files_a_rule_above_the_first_heading_under_always(fake_llm, memory) -> None:  # noqa: F811
    stray = "- Always answer in French <!-- confidence:high source:user ts:2026-01-09 -->\n"
    rules = write(memory[0] / "rules.md", rules_file(24, before_headings=stray))
    hc = Hippocampus(memory[0], scope="global")
    assert "answer in French" not in hc.recall_rules(), "not used before compaction, as in Anton"
    fake_llm.queue(keep(0, 1, 3), model=CODER)

    [outcome] = await cortex_for(memory, fake_llm).compact_all()

    [request] = fake_llm.requests
    offered = re.findall(r"^(\d+)\. (.*)$", user_text_of(request), flags=re.M)
    assert offered[0] == ("0", "[always] " + stray.strip()[2:]), "offered first, as an Always rule"
    assert len(offered) == 25
    text = rules.read_text()
    assert text.startswith("# Rules\n\n## Always\n" + stray + "- Always rule number 0 ")
    assert "answer in French" in Hippocampus(memory[0], scope="global").recall_rules()
    assert (outcome.before, outcome.kept) == (25, 3)


async def test_compaction_may_drop_a_rule_above_the_first_heading(fake_llm, memory) -> None:  # noqa: F811
    stray = "- Always answer in French <!-- confidence:high source:user ts:2026-01-09 -->\n"
    rules = write(memory[0] / "rules.md", rules_file(24, before_headings=stray))
    fake_llm.queue(keep(*range(1, 25)), model=CODER)

    await cortex_for(memory, fake_llm).compact_all()

    assert "answer in French" not in rules.read_text()
    assert rules.read_text() == rules_file(24)


# --------------------------------------------------------------------------- §4.5 the project profile


def test_the_project_profile_folds_into_the_global_one_and_global_wins(memory) -> None:
    glob = write(memory[0] / "profile.md", "# Profile\n- Name: Jorge\n- Timezone: PST\n")
    project_text = "# Profile\n- Timezone: PST\n- name: George\n- Editor: Vim\n- Editor: VS Code\n- Likes tea\n"
    project = write(memory[1] / "profile.md", project_text)

    cortex = cortex_for(memory)

    assert Hippocampus(memory[0]).identity_facts() == ["Name: Jorge", "Timezone: PST", "Editor: VS Code", "Likes tea"]
    assert not project.exists(), "Anton deletes the project profile once it has moved"
    assert cortex.profile_conflicts == ["name: George"]
    [backup] = (memory[1] / "backups").glob("profile.md.*.bak")
    assert backup.read_text() == project_text, "what the global profile overruled is kept aside, not lost"
    assert glob.read_text().startswith("# Profile\n- Name: Jorge\n")


# --------------------------------------------------------------------------- §5 episodes


def test_the_episodes_folder_is_made_when_a_session_starts(tmp_path: Path) -> None:
    folder = tmp_path / ".anton" / "episodes"
    memory = EpisodicMemory(folder)
    session = memory.start_session()
    assert folder.is_dir() and list(folder.iterdir()) == [], "the folder at start, the file with its first line"
    memory.log_turn(1, "user", "hello")
    assert [p.name for p in folder.iterdir() if p.suffix == ".jsonl"] == [f"{session}.jsonl"]


def test_disabled_episodic_memory_makes_no_folder(tmp_path: Path) -> None:
    folder = tmp_path / ".anton" / "episodes"
    EpisodicMemory(folder, enabled=False).start_session()
    assert not folder.exists()
