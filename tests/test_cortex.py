"""Both scopes together: the prompt's memory sections, routing of new memories, the encoding gate, profile merge."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from anton_tui.memory.engrams.cortex import DISABLED_MESSAGE, Cortex
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.engrams.hippocampus import Hippocampus


class EpisodeRecorder:
    """Stands in for the episodic log: keeps what it was asked to log."""

    def __init__(self) -> None:
        self.turns: list[tuple] = []

    def log_turn(self, turn: int, role: str, content: str, **meta) -> None:
        self.turns.append((turn, role, content, meta))


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Hippocampus, Hippocampus]:
    return Hippocampus(tmp_path / "home" / "memory", scope="global"), Hippocampus(tmp_path / "ws" / ".anton" / "memory")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_no_memory_gives_an_empty_context(stores) -> None:
    cortex = Cortex(*stores)
    assert cortex.build_memory_context() == ""
    assert cortex.get_scratchpad_context() == ""
    assert not cortex.needs_compaction()


def test_memory_context_sections_in_order(stores) -> None:
    glob, proj = stores
    write(glob.profile_path, "# Profile\n- Name: Jorge\n")
    write(glob.rules_path, "# Rules\n\n## Always\n- Use httpx <!-- confidence:high source:user ts:2026-11-22 -->\n")
    write(
        proj.rules_path,
        "# Rules\n\n## Never\n- Print secrets\n\n## When\n"
        "- When the scratchpad times out, shrink the batch <!-- confidence:low source:llm ts:2026-11-22 -->\n"
        "- When asked for charts, use plotly\n",
    )
    write(glob.lessons_path, "# Lessons\n- g1 <!-- ts:2026-11-20 -->\n- g2 <!-- topic:pandas ts:2026-11-21 -->\n")
    write(proj.lessons_path, "# Lessons\n- p1\n- scratchpad cells should call progress() <!-- topic:scratchpad -->\n")
    cortex = Cortex(glob, proj)
    assert cortex.build_memory_context() == (
        "\n\n## Your Memory — Identity\n# Profile\n- Name: Jorge"
        "\n\n## Your Memory — Global Rules\n## Always\n- Use httpx"
        "\n\n## Your Memory — Project Rules\n## Never\n- Print secrets"
        "\n\n## When\n- When asked for charts, use plotly"
        "\n\n## Your Memory — Global Lessons\n# Lessons"
        "\n- g2 <!-- topic:pandas ts:2026-11-21 -->\n- g1 <!-- ts:2026-11-20 -->"
        "\n\n## Your Memory — Project Lessons\n# Lessons\n- p1"
    )
    assert cortex.get_scratchpad_context() == (
        "\n\nLessons from past sessions:\n"
        "- scratchpad cells should call progress()\n- When the scratchpad times out, shrink the batch"
    )


def test_sections_stay_within_their_budgets(stores) -> None:
    glob, proj = stores
    facts = "".join(f"- Fact number {i:03d}: something about the user\n" for i in range(200))
    write(glob.profile_path, "# Profile\n" + facts)
    rules = "".join(f"- Always do thing {i:03d} the careful way\n" for i in range(500))
    write(glob.rules_path, "# Rules\n\n## Always\n" + rules)
    write(proj.lessons_path, "# Lessons\n" + "".join(f"- lesson {i:04d} about a data source\n" for i in range(3000)))
    sections = Cortex(glob, proj).build_memory_context().split("\n\n## Your Memory — ")
    sizes = {section.split("\n", 1)[0]: len(section.split("\n", 1)[1]) for section in sections[1:]}
    assert set(sizes) == {"Identity", "Global Rules", "Project Lessons"}
    assert 1000 < sizes["Identity"] <= 1200
    assert 5500 < sizes["Global Rules"] <= 6000 + len("## Always\n")
    assert "lesson 2999" in sections[-1] and "lesson 0000" not in sections[-1]


def test_encode_routes_by_kind_and_scope(stores) -> None:
    glob, proj = stores
    episodes = EpisodeRecorder()
    cortex = Cortex(glob, proj, episodic=episodes)
    actions = cortex.encode(
        [
            Engram("Name: Ada", "profile", scope="project", confidence="high", source="user"),
            Engram("Prefer uv over pip", "always", scope="global", confidence="high", source="user"),
            Engram("Never commit .env", "never", scope="project", confidence="high", source="user"),
            Engram("CoinGecko limits at 50/min", "lesson", scope="project", topic="API CoinGecko", source="user"),
            Engram("Polars is faster here", "lesson", scope="global", confidence="medium", source="consolidation"),
        ]
    )
    assert actions == [
        "Encoded profile (global): Name: Ada",
        "Encoded always (global): Prefer uv over pip",
        "Encoded never (project): Never commit .env",
        "Encoded lesson (project): CoinGecko limits at 50/min",
        "Encoded lesson (global): Polars is faster here",
    ]
    assert glob.identity_facts() == ["Name: Ada"] and not proj.profile_path.exists()
    assert [(e.text, e.source) for e in glob.get_rules()] == [("Prefer uv over pip", "user")]
    assert [(e.text, e.kind) for e in proj.get_rules()] == [("Never commit .env", "never")]
    assert [(e.topic, e.source) for e in proj.get_lessons()] == [("api-coingecko", "user")]
    assert [(e.confidence, e.source) for e in glob.get_lessons()] == [("medium", "consolidation")]
    assert episodes.turns == [
        (0, "memory_write", "Never commit .env", {"kind": "never", "topic": ""}),
        (0, "memory_write", "CoinGecko limits at 50/min", {"kind": "lesson", "topic": "API CoinGecko"}),
    ]
    again = cortex.encode([Engram("Never commit .env", "never")])
    assert again == ["Already known (never, project): Never commit .env"]


def test_mode_off_writes_nothing(stores, tmp_path: Path) -> None:
    cortex = Cortex(*stores, mode="off")
    engrams = [Engram("x is y", "lesson"), Engram("Name: Ada", "profile"), Engram("Do z", "always", scope="global")]
    assert cortex.encode(engrams) == [DISABLED_MESSAGE]
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_encode_reports_a_file_it_cannot_write_and_saves_the_rest(stores) -> None:
    glob, proj = stores
    glob.rules_path.parent.mkdir(parents=True)
    glob.rules_path.write_bytes(b"# Rules\n\n## Always\n- caf\xe9\n")
    actions = Cortex(glob, proj).encode([Engram("Do z", "always", scope="global"), Engram("fact here", "lesson")])
    assert actions[0].startswith("Not saved (always): ") and "not valid UTF-8" in actions[0]
    assert actions[1] == "Encoded lesson (project): fact here"
    assert glob.rules_path.read_bytes() == b"# Rules\n\n## Always\n- caf\xe9\n"


@pytest.mark.parametrize(
    ("mode", "high", "medium", "unset"),
    [("autopilot", False, False, False), ("off", False, False, False), ("copilot", False, True, True)],
)
def test_encoding_gate(stores, mode: str, high: bool, medium: bool, unset: bool) -> None:
    cortex = Cortex(*stores, mode=mode)
    assert cortex.encoding_gate(Engram("a", "lesson", confidence="high")) is high
    assert cortex.encoding_gate(Engram("a", "lesson", confidence="medium")) is medium
    assert cortex.encoding_gate(Engram("a", "lesson")) is unset


def test_unknown_mode_is_refused(stores) -> None:
    with pytest.raises(ValueError, match="autopilot, copilot, off"):
        Cortex(*stores, mode="auto")


def test_needs_compaction_above_twenty_entries_in_a_scope(stores) -> None:
    glob, proj = stores
    cortex = Cortex(glob, proj)
    for i in range(10):
        glob.encode_rule(f"rule {i}", "always")
        glob.encode_lesson(f"lesson {i}")
        proj.encode_lesson(f"lesson {i}")
    assert glob.entry_count() == 20 and not cortex.needs_compaction()
    glob.encode_lesson("one more")
    assert cortex.needs_compaction()


def test_project_profile_merges_into_global_and_global_wins(stores) -> None:
    glob, proj = stores
    write(glob.profile_path, "# Profile\n- Name: Jorge\n- Timezone: PST\n")
    write(proj.profile_path, "# Profile\n- Timezone: PST\n- name: George\n- Editor: VS Code\n- Likes tea\n")
    cortex = Cortex(glob, proj)
    assert glob.identity_facts() == ["Name: Jorge", "Timezone: PST", "Editor: VS Code", "Likes tea"]
    assert cortex.profile_conflicts == ["name: George"]  # overruled (a backup of the project file is kept)
    assert not proj.profile_path.exists()

    proj.profile_path.write_text("# Profile\n- Shell: zsh\n")
    Cortex(glob, proj)
    assert glob.identity_facts()[-1] == "Shell: zsh"
    assert not proj.profile_path.exists()


def test_same_folder_for_both_scopes_is_shown_once(tmp_path: Path) -> None:
    hc = Hippocampus(tmp_path)
    hc.encode_rule("Be brief", "always")
    context = Cortex(hc, Hippocampus(tmp_path)).build_memory_context()
    assert context == "\n\n## Your Memory — Global Rules\n## Always\n- Be brief"


def test_memory_context_on_a_large_memory_is_stable_and_sees_a_new_lesson_at_once(stores) -> None:
    # Its speed is measured by `make bench` (memory context, warm), not here: a timed test fails on a busy machine.
    glob, proj = stores
    rules = "".join(f"- Rule {i} keeps the agent on track <!-- confidence:high ts:2026-11-22 -->\n" for i in range(500))
    lessons = "".join(f"- Lesson {i} about an API quirk <!-- topic:t{i % 50} ts:2026-11-22 -->\n" for i in range(5000))
    for hc in stores:
        write(hc.rules_path, "# Rules\n\n## Always\n" + rules)
        write(hc.lessons_path, "# Lessons\n" + lessons)
    write(glob.profile_path, "# Profile\n- Name: Jorge\n")
    cortex = Cortex(glob, proj)
    first = cortex.build_memory_context()
    for _ in range(5):
        assert cortex.build_memory_context() == first
    proj.encode_lesson("Fresh lesson shows up at once")
    assert "Fresh lesson shows up at once" in cortex.build_memory_context()
