"""Skills shared with the real anton-agent: what this app writes is what anton-agent 2.26.10.26.1 writes and lists
unchanged, what anton-agent writes loads here, and an older-layout skill is read without being rewritten."""

from __future__ import annotations

import hashlib
import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from anton_tui.agent.tools.recall_skill import recall
from anton_tui.memory.skills.convert import backups_folder, convert_legacy
from anton_tui.memory.skills.store import LegacyLayoutError, Skill, SkillStore

FIXTURES = Path(__file__).parent / "fixtures" / "skills_anton"
HELPER = "def load(path):\n    import pandas\n    return pandas.read_csv(path)\n"


def snapshot(folder: Path) -> dict[str, str]:
    """Every file's bytes (as a hash) and every folder, by path inside `folder`."""
    files = {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
    return files | {f"{p.relative_to(folder)}/": "dir" for p in folder.rglob("*") if p.is_dir()}


def copy_fixture(name: str, tmp_path: Path) -> Path:
    target = tmp_path / "skills"
    shutil.copytree(FIXTURES / name, target)
    return target


def build_saved_here(root: Path) -> None:
    """The calls that made `saved_here/` (see the README next to the fixtures)."""
    moments = [
        datetime.fromisoformat(m)
        for m in ("2026-11-25T10:05:00.000001+00:00", "2026-11-25T10:06:00.000002+00:00", "2026-11-25T10:07:00.000003+00:00")
    ]
    store = SkillStore(root, clock=lambda: moments.pop(0))
    store.save(
        Skill(
            label="CSV_Summary",
            name="CSV summary",
            description="Summarise a CSV file",
            when_to_use="When the user gives a CSV",
            declarative_md="1. Load with pandas.\n2. Print df.describe().",
            code_files={"helper.py": HELPER},
            reference_files={"columns.md": "# Columns\n\nNotes on column types.\n"},
        )
    )
    store.increment_recommended("csv-summary")
    store.save(Skill(label="plot sales", name="Plot sales", description="Chart monthly sales", declarative_md="1. Group by month.\n"))
    skill = store.load("plot-sales")
    skill.declarative_md = "1. Group by month.\n2. Plot a bar chart.\n"
    store.save(skill)


# anton-agent's own rules, restated from the reference (§6.2, §17.1, §17.2) so the suite needs no anton-agent.
ANTON_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def anton_would_migrate(folder: Path) -> bool:
    """`check_migrate` returns at once when SKILL.md exists; otherwise meta.json or declarative.md make it rewrite."""
    if (folder / "SKILL.md").is_file():
        return False
    return (folder / "meta.json").is_file() or (folder / "declarative.md").is_file()


def anton_front_matter(folder: Path) -> dict:
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?\n)---\n", text, re.S)
    assert match is not None, f"{folder.name}: anton-agent would not find the front matter"
    return yaml.safe_load(match.group(1))


def test_what_this_app_saves_is_exactly_the_checked_fixture(tmp_path: Path) -> None:
    build_saved_here(tmp_path / "skills")
    assert snapshot(tmp_path / "skills") == snapshot(FIXTURES / "saved_here")


def test_anton_lists_and_loads_skills_saved_here_without_changing_a_byte(tmp_path: Path) -> None:
    root = copy_fixture("saved_here", tmp_path)
    before = snapshot(root)
    for folder in sorted(root.iterdir()):
        assert not anton_would_migrate(folder)
        front = anton_front_matter(folder)
        assert front["name"] == folder.name and ANTON_NAME.match(folder.name) and "--" not in folder.name
        assert 1 <= len(front["description"]) <= 1024
        assert set(front) <= {"name", "description", "license", "compatibility", "allowed-tools", "metadata"}
    # the same skill saved by anton-agent has the same front matter, key for key and in the same order
    ours = (root / "csv-summary" / "SKILL.md").read_text()
    theirs = (FIXTURES / "saved_by_anton" / "csv-summary" / "SKILL.md").read_text()
    assert ours.replace("2026-11-25T10:05:00.000001", "2026-11-25T10:00:00.123456") == theirs

    store = SkillStore(root)
    assert [(s["label"], s["name"]) for s in store.list_summaries()] == [
        ("csv-summary", "CSV summary"),
        ("plot-sales", "Plot sales"),
    ]
    assert store.load("csv_summary").code_files == {"helper.py": HELPER}
    assert store.load("plot-sales").declarative_md == "1. Group by month.\n2. Plot a bar chart.\n"
    assert snapshot(root) == before


def test_a_skill_saved_by_anton_loads_here(tmp_path: Path) -> None:
    root = copy_fixture("saved_by_anton", tmp_path)
    skill = SkillStore(root).load("csv-summary")
    assert (skill.label, skill.name, skill.format) == ("csv-summary", "CSV summary", "skill_md")
    assert skill.description == "Summarise a CSV file. When the user gives a CSV"
    assert skill.declarative_md == "1. Load with pandas.\n2. Print df.describe()."
    assert skill.stats.total_recalls == 1


def test_an_older_layout_skill_is_read_and_recalled_but_never_rewritten(tmp_path: Path) -> None:
    root = copy_fixture("v5_skill", tmp_path)
    before = snapshot(root)
    store = SkillStore(root)

    assert [s["label"] for s in store.list_summaries()] == ["csv_summary"]
    skill = store.load("csv-summary")
    assert (skill.name, skill.when_to_use, skill.format) == ("CSV summary", "When the user gives a CSV", "anton")
    assert snapshot(root) == before

    result = recall(store, "csv_summary")
    assert "1. Load with pandas." in result.text
    after = snapshot(root)
    changed = {path for path in before if before[path] != after.get(path)}
    assert changed == {"csv_summary/stats.json"} and set(after) == set(before)  # only the counter, as anton-agent does
    assert store.load("csv_summary").stats.total_recalls == 4

    skill.declarative_md = "1. changed"
    with pytest.raises(LegacyLayoutError):
        store.save(skill)
    assert {p: h for p, h in snapshot(root).items()} == after


def test_converting_on_request_gives_what_anton_gives_and_keeps_a_backup(tmp_path: Path) -> None:
    root = copy_fixture("v5_skill", tmp_path)
    original = snapshot(root / "csv_summary")
    store = SkillStore(root)

    converted = convert_legacy(store, "csv_summary")

    assert converted.skill.label == "csv-summary" and converted.old_label == "csv_summary"
    assert sorted(p.name for p in root.iterdir()) == ["csv-summary"]
    assert snapshot(root / "csv-summary") == snapshot(FIXTURES / "migrated_by_anton" / "csv-summary")
    assert converted.backup.parent == backups_folder(store) and not converted.backup.is_relative_to(root)
    assert snapshot(converted.backup) == original
    assert store.load("csv-summary").stats.total_recalls == 3
