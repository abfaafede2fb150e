"""The cached skill listing: a warm listing reuses what it read, yet every change a user makes shows up at once, in
the user's folder and in other tools' folders; a broken skill in another tool's folder is reported and left alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from anton_tui.memory.skills.sources import skill_sources
from anton_tui.memory.skills.store import Skill, SkillStore


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n1. Do it.\n"


@pytest.fixture
def store(tmp_path: Path) -> SkillStore:
    sources = skill_sources(tmp_path / "project", home=tmp_path / "home", enabled={"builtin": False})
    return SkillStore(tmp_path / "anton" / "skills", sources=sources)


def claude_folder(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".claude" / "skills"


def write(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def labels(store: SkillStore) -> list[tuple[str, str]]:
    return [(s["label"], s["source"]) for s in store.list_summaries()]


def test_every_change_shows_up_in_the_next_listing(store: SkillStore, tmp_path: Path) -> None:
    store.save(Skill(label="report", description="Monthly report", declarative_md="1. Go"))
    theirs = write(claude_folder(tmp_path) / "lint", skill_md("lint", "Run the linter"))
    assert labels(store) == [("lint", "claude"), ("report", "user")]
    assert labels(store) == [("lint", "claude"), ("report", "user")]  # warm

    with open(theirs, "w") as handle:  # edited in place, as an editor might: the folder itself does not change
        handle.write(skill_md("lint", "Run the linter and fix what it finds"))
    mine = store.root / "report" / "SKILL.md"
    text = mine.read_text()
    with open(mine, "w") as handle:
        handle.write(text.replace("Monthly report", "Quarterly report"))
    found = {s["label"]: s["description"] for s in store.list_summaries()}
    assert found == {"lint": "Run the linter and fix what it finds", "report": "Quarterly report"}

    write(claude_folder(tmp_path) / "format", skill_md("format", "Format the code"))
    store.save(Skill(label="deploy", description="Ship it", declarative_md="1. Ship"))
    assert labels(store) == [("deploy", "user"), ("format", "claude"), ("lint", "claude"), ("report", "user")]

    store.delete("report")
    os.rename(claude_folder(tmp_path) / "lint", claude_folder(tmp_path) / "lint-all")
    assert labels(store) == [("deploy", "user"), ("format", "claude"), ("lint-all", "claude")]

    with open(store.root / "deploy" / "SKILL.md", "w") as handle:  # damaged in place: it leaves the list
        handle.write("---\nname: [unclosed\n---\n")
    assert labels(store) == [("format", "claude"), ("lint-all", "claude")]


def test_changing_a_returned_summary_does_not_change_the_next_listing(store: SkillStore) -> None:
    store.save(Skill(label="report", description="Monthly report", declarative_md="1. Go"))
    store.list_summaries()[0]["description"] = "changed by a caller"
    assert store.list_summaries()[0]["description"] == "Monthly report"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("---\nname: [unclosed\ndescription: x\n---\nbody\n", "YAML"),
        ("no front matter at all\n", "front matter"),
        (b"---\nname: bad\ndescription: caf\xe9\n---\nbody\n", "UTF-8"),
    ],
)
def test_a_broken_skill_in_another_tools_folder_is_reported_and_left_alone(
    store: SkillStore, tmp_path: Path, content: str | bytes, reason: str
) -> None:
    write(claude_folder(tmp_path) / "good", skill_md("good", "Works"))
    bad = write(claude_folder(tmp_path) / "bad", content)
    before = bad.read_bytes()

    assert labels(store) == [("good", "claude")]
    [problem] = store.broken()
    assert (problem.label, problem.source, problem.path) == ("bad", "claude", bad.parent)
    assert reason in problem.reason
    assert [s.label for s in store.list_all()] == ["good"]
    assert store.load("bad") is None
    assert bad.read_bytes() == before and sorted(os.listdir(bad.parent)) == ["SKILL.md"]


def test_user_invocable_skills_are_offered_as_slash_commands_unless_shadowed(store: SkillStore, tmp_path: Path) -> None:
    invocable = "user-invocable: true\n"
    write(
        claude_folder(tmp_path) / "lint", skill_md("lint", "Run the linter").replace("---\n1.", invocable + "---\n1.")
    )
    write(claude_folder(tmp_path) / "format", skill_md("format", "Format it").replace("---\n1.", invocable + "---\n1."))
    write(claude_folder(tmp_path) / "plain", skill_md("plain", "Not a command"))
    store.save(Skill(label="format", description="My own format, not a command", declarative_md="1. Go"))
    assert store.slash_commands() == [("lint", "Run the linter")]


def test_recalling_a_skill_whose_files_broke_says_why_and_leaves_them_alone(store: SkillStore) -> None:
    from anton_tui.agent.tools.recall_skill import recall

    store.save(Skill(label="csv-summary", description="Summarise a CSV", declarative_md="1. Load"))
    store.save(Skill(label="csv-summary-2", description="Another one", declarative_md="1. Other"))
    assert len(store.list_summaries()) == 2
    stats = store.root / "csv-summary" / "stats.json"
    with open(stats, "w") as handle:  # damaged in place
        handle.write("{not json")
    before = {path.name: path.read_bytes() for path in stats.parent.iterdir()}

    result = recall(store, "csv-summary")
    assert not result.success
    assert "csv-summary" in result.text and "stats.json" in result.text and "left as they are" in result.text
    assert "1. Other" not in result.text, "no other skill is recalled in its place"
    assert {path.name: path.read_bytes() for path in stats.parent.iterdir()} == before


def test_one_survey_gives_what_the_full_listing_and_the_broken_list_give(store: SkillStore, tmp_path: Path) -> None:
    write(store.root / "mine", skill_md("mine", "Mine"))
    write(store.root / "shared", skill_md("shared", "Mine too"))
    write(store.root / "broken-here", "---\nname: [unclosed\n---\nbody\n")
    write(claude_folder(tmp_path) / "shared", skill_md("shared", "Claude's, hidden by mine"))
    write(claude_folder(tmp_path) / "theirs", skill_md("theirs", "Claude's"))
    write(claude_folder(tmp_path) / "broken-there", b"\xff\xfe not text")

    rows, problems = store.survey(lambda skill: (skill.label, skill.source, skill.description))

    assert rows == [(s.label, s.source, s.description) for s in store.list_all()]
    assert rows == [
        ("mine", "user", "Mine"), ("shared", "user", "Mine too"), ("theirs", "claude", "Claude's"),
    ]  # fmt: skip
    assert [(p.label, p.source) for p in problems] == [(p.label, p.source) for p in store.broken()]
    assert [(p.label, p.source) for p in problems] == [("broken-here", "user"), ("broken-there", "claude")]
    shadowed, _ = store.survey(lambda skill: (skill.label, skill.source), include_shadowed=True)
    assert shadowed == [("mine", "user"), ("shared", "user"), ("shared", "claude"), ("theirs", "claude")]


def _stats_text(total: int, stages: list[tuple[int, int, str | None, float | int]]) -> str:
    from anton_tui.memory.skills.format import render_json

    data: dict = {"total_recalls": total}
    for number, (recommended, used, last_used, confidence) in enumerate(stages, 1):
        data[f"stage_{number}"] = {
            "recommended": recommended, "used": used, "last_used": last_used, "confidence": confidence,
        }  # fmt: skip
    return render_json(data)


def test_a_stats_file_as_the_store_writes_it_is_read_with_one_match_and_nothing_broken_passes(
    store: SkillStore,
) -> None:
    import random

    from anton_tui.memory.skills.format import SkillFormatError, check_stats, stats_written_shape

    store.save(Skill(label="report", name="Report", description="Makes the report", declarative_md="1. Go\n"))
    store.increment_recommended("report", stage=2)
    written = (store.root / "report" / "stats.json").read_bytes()
    assert stats_written_shape(written), "what the store writes, counters bumped and a date set, takes the quick match"
    assert [s["label"] for s in store.list_summaries()] == ["report"]

    rng = random.Random(31)
    texts = []
    for _ in range(300):
        stages = [
            (rng.choice([0, 1, 7, 10**12]), rng.choice([0, 3]), rng.choice([None, "", "2026-11-28T01:46:59+00:00"]),
             rng.choice([0.0, 1, 0.75, 1e-7, -2.5, 1e300]))
            for _ in range(3)
        ]  # fmt: skip
        texts.append(_stats_text(rng.choice([0, 4, 10**9]), stages))
    broken = [
        _stats_text(-1, [(0, 0, "", 0.0)] * 3),  # a count below zero
        _stats_text(0, [(0, -3, "", 0.0)] * 3),
        _stats_text(0, [(0, 0, "", 0.0)] * 3).replace(": 0,", ": 00,", 1),  # not JSON
        _stats_text(0, [(0, 0, "tab\there", 0.0)] * 3),  # an escape: for the full reading
        _stats_text(0, [(0, 0, "café", 0.0)] * 3),
        _stats_text(0, [(0, 0, "", 0.0)] * 3).replace('"confidence": 0.0', '"confidence": "high"', 1),
        _stats_text(0, [(0, 0, "", 0.0)] * 3).replace('"used": 0', '"used": 1.5', 1),
        _stats_text(0, [(0, 0, "", 0.0)] * 2),  # a stage missing (fine for the full reading too)
        _stats_text(0, [(0, 0, "", 0.0)] * 3)[:-3],  # cut off
        _stats_text(0, [(0, 0, "", 0.0)] * 3) + "\n\n",
    ]
    for text in texts + broken:
        quick = stats_written_shape(text.encode())
        try:
            check_stats(text)
            passes = True
        except SkillFormatError:
            passes = False
        assert passes or not quick, f"the quick match took a stats.json the full reading refuses:\n{text}"
    assert all(stats_written_shape(text.encode()) for text in texts)
    assert not any(stats_written_shape(text.encode()) for text in broken)


def test_a_meta_json_as_written_is_read_with_one_match_and_reads_as_the_full_parse_does() -> None:
    """An older skill's meta.json, as anton-agent and this app write it, gives the listing the same name, description
    and when_to_use as the full reading, whatever its texts hold (escapes, other scripts, nothing)."""
    import random

    from anton_tui.memory.skills.format import (
        _WRITTEN_META,
        SkillFormatError,
        meta_summary,
        parse_meta,
        render_meta,
    )

    rng = random.Random(11)
    pieces = ["Monthly report", "", 'says "hi"', "back\\slash", "café", "tab\there", "x" * 300, "0", "null"]
    quick = 0
    for _ in range(400):
        name, description, when = (rng.choice(pieces) for _ in range(3))
        text = render_meta(
            label="monthly-report", name=name, description=description, when_to_use=when,
            created_at="2026-03-01T10:00:00+00:00", provenance=rng.choice(["manual", "llm"]),
            stages_present=tuple(stage for stage in (1, 2, 3) if rng.random() < 0.5),
            extra=rng.choice([None, {"owner": "ana"}]),
        )  # fmt: skip
        try:
            full = parse_meta(text, "monthly-report")
        except SkillFormatError:  # (a name with a tab in it)
            with pytest.raises(SkillFormatError):
                meta_summary(text, "monthly-report")
            continue
        assert meta_summary(text, "monthly-report") == (full.name, full.description, full.when_to_use)
        quick += _WRITTEN_META.fullmatch(text) is not None
    assert quick > 20, "the shape written with plain texts and nothing added takes the quick match"


def test_an_older_skill_is_read_again_only_when_one_of_its_files_changed(
    store: SkillStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older skill (meta.json and declarative.md) keeps its cached entry while its folder, stats.json and
    meta.json keep their signatures; an edit to its meta.json shows in the next listing."""
    import json

    from anton_tui.memory.skills import listing

    reads: list[str] = []
    real = listing.summary_fields_of_meta
    monkeypatch.setattr(listing, "summary_fields_of_meta", lambda text, label: reads.append(label) or real(text, label))
    folder = store.root / "old_report"
    folder.mkdir(parents=True)
    (folder / "declarative.md").write_text("1. Do it.\n")
    meta = {"label": "old_report", "name": "Old report", "description": "Makes the old report", "when_to_use": ""}
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    assert [s["description"] for s in store.list_summaries()] == ["Makes the old report"]
    assert [s["description"] for s in store.list_summaries()] == ["Makes the old report"]
    assert reads == ["old_report"], "read once, then its entry is reused"
    meta["description"] = "Makes the old report, and a chart of it"
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    assert [s["description"] for s in store.list_summaries()] == ["Makes the old report, and a chart of it"]
    assert reads == ["old_report", "old_report"]
