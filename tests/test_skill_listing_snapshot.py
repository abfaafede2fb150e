"""The skill listing a run leaves for the next one: a new process lists from it while every file it depends on is as
it was, and reads from the files whatever changed in between; a snapshot that cannot be used is ignored and replaced.

"The last run" is a real second process (the listing's caches are the process's own); "this run" is the test's.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths
from anton_tui.runtime import Runtime

from .runtime_sessions import QuietSession
from .tui.app_support import AppSettings

_LAST_RUN = """
import json, sys
from pathlib import Path
from anton_tui.memory.skills.store import SkillStore
store = SkillStore(Path(sys.argv[1]), listing_snapshot=Path(sys.argv[2]))
listed = [summary["label"] for summary in store.list_summaries()]
print(json.dumps({"listed": listed, "written": store.save_listing_snapshot(settle_ns=int(sys.argv[3]))}))
"""


def last_run(root: Path, snapshot: Path, *, settle_ns: int = 0) -> dict:
    """List `root` in a process of its own and leave the snapshot, as a run of the app does when it closes."""
    done = subprocess.run(
        [sys.executable, "-c", _LAST_RUN, str(root), str(snapshot), str(settle_ns)],
        capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1],
    )  # fmt: skip
    return json.loads(done.stdout)


def skill(store: SkillStore, label: str, description: str) -> Path:
    store.save(Skill(label=label, description=description, declarative_md="1. Go\n"))
    return store.root / label


def two_skills(root: Path) -> Path:
    """`csv-summary` and `weekly-report` saved in the skills folder `root`; the folder of the second."""
    skill(SkillStore(root), "csv-summary", "Summarise a CSV")
    return skill(SkillStore(root), "weekly-report", "Write the weekly report")


def remembered(snapshot: Path, description: str) -> None:
    """Change how the snapshot remembers a skill's description (to capitals: the same length, so every line stays
    where the file says it is) without touching a signature: a listing that shows the capitals took the skill from
    the snapshot, not from its files."""
    text = snapshot.read_text()
    assert text.count(f'"{description}"') == 1
    snapshot.write_text(text.replace(f'"{description}"', f'"{description.upper()}"'))


def listed(store: SkillStore) -> dict[str, str]:
    return {summary["label"]: summary["description"] for summary in store.list_summaries()}


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return tmp_path / "home" / "cache" / "skill-listing.txt"


def test_a_new_run_takes_the_listing_from_the_snapshot_while_the_files_are_as_they_were(
    tmp_path: Path, snapshot: Path
) -> None:
    root = tmp_path / "skills"
    two_skills(root)
    assert last_run(root, snapshot) == {"listed": ["csv-summary", "weekly-report"], "written": 2}
    files = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}

    # The snapshot's own text for one skill, edited without touching a signature: a listing that shows the edit
    # took the skill from the snapshot, not from its SKILL.md.
    remembered(snapshot, "Summarise a CSV")

    assert listed(SkillStore(root, listing_snapshot=snapshot)) == {
        "csv-summary": "SUMMARISE A CSV",
        "weekly-report": "Write the weekly report",
    }
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == files


def test_what_changed_between_runs_is_read_from_the_files(tmp_path: Path, snapshot: Path) -> None:
    root = tmp_path / "skills"
    writer = SkillStore(root)
    edited = skill(writer, "edited", "Before the edit")
    damaged = skill(writer, "damaged", "Its stats.json breaks")
    linked = skill(writer, "linked", "Gets a link that leads out")
    (linked / "scripts").mkdir()
    removed = skill(writer, "removed", "Goes away")
    swapped = skill(writer, "swapped", "Its SKILL.md becomes a link")
    skill(writer, "untouched", "Stays as it is")
    older = root / "older_one"
    older.mkdir()
    (older / "meta.json").write_text(json.dumps({"name": "Older", "description": "An older skill"}))
    (older / "declarative.md").write_text("1. Go\n")
    assert last_run(root, snapshot)["written"] == 7

    (edited / "SKILL.md").write_text((edited / "SKILL.md").read_text().replace("Before the edit", "After the edit"))
    with open(damaged / "stats.json", "w") as handle:  # in place, the folder untouched
        handle.write("{not json")
    (tmp_path / "secret").write_text("outside")
    (linked / "scripts" / "secret").symlink_to(tmp_path / "secret")
    for path in removed.iterdir():
        path.unlink()
    removed.rmdir()
    outside = tmp_path / "outside.md"
    outside.write_text((swapped / "SKILL.md").read_text())
    (swapped / "SKILL.md").unlink()
    (swapped / "SKILL.md").symlink_to(outside)
    (older / "declarative.md").unlink()
    skill(writer, "added", "New since the last run")
    remembered(snapshot, "Stays as it is")

    store = SkillStore(root, listing_snapshot=snapshot)
    assert listed(store) == {
        "edited": "After the edit",
        "untouched": "STAYS AS IT IS",
        "added": "New since the last run",
    }
    fresh = SkillStore(root).list_summaries()
    assert {summary["label"] for summary in fresh} == {"edited", "untouched", "added"}
    assert {problem.label for problem in store.broken()} >= {"damaged", "linked", "swapped", "older_one"}


@pytest.mark.parametrize(
    "text",
    [b"not a snapshot at all\n", b"", b"\xff\xfe\x00", "truncated"],
    ids=["another file", "empty", "not text", "cut short"],
)
def test_a_snapshot_that_cannot_be_used_is_ignored_and_replaced(
    tmp_path: Path, snapshot: Path, text: bytes | str
) -> None:
    root = tmp_path / "skills"
    two_skills(root)
    assert last_run(root, snapshot)["written"] == 2
    whole = snapshot.read_bytes()
    snapshot.write_bytes(whole[: len(whole) // 2] if text == "truncated" else text)  # type: ignore[arg-type]

    this_run = SkillStore(root, listing_snapshot=snapshot)
    assert listed(this_run) == {"csv-summary": "Summarise a CSV", "weekly-report": "Write the weekly report"}
    assert this_run.save_listing_snapshot(settle_ns=0) == 2
    assert snapshot.read_bytes() == whole


def test_an_older_version_of_the_snapshot_is_not_trusted(tmp_path: Path, snapshot: Path) -> None:
    root = tmp_path / "skills"
    skill(SkillStore(root), "csv-summary", "Summarise a CSV")
    last_run(root, snapshot)
    remembered(snapshot, "Summarise a CSV")
    header, rest = snapshot.read_text().split("\n", 1)
    snapshot.write_text(header.replace(" 4;", " 3;") + "\n" + rest)

    assert listed(SkillStore(root, listing_snapshot=snapshot)) == {"csv-summary": "Summarise a CSV"}


def test_a_skill_changed_moments_ago_waits_for_a_later_snapshot(tmp_path: Path, snapshot: Path) -> None:
    root = tmp_path / "skills"
    store = SkillStore(root, listing_snapshot=snapshot)
    skill(store, "csv-summary", "Summarise a CSV")
    assert listed(store) == {"csv-summary": "Summarise a CSV"}

    assert store.save_listing_snapshot() is None, "a file system keeping coarse times could hide a second change"
    assert not snapshot.exists()
    assert last_run(root, snapshot, settle_ns=0)["written"] == 1


def two_projects(tmp_path: Path, snapshot: Path, first: str, second: str) -> tuple[Path, Path]:
    """The skills folders of two projects, a skill in each, both in the snapshot (each left by a run of its own)."""
    folders = tmp_path / first / "skills", tmp_path / second / "skills"
    skill(SkillStore(folders[0]), "csv-summary", "Summarise a CSV")
    skill(SkillStore(folders[1]), "weekly-report", "Write the weekly report")
    for folder in folders:
        last_run(folder, snapshot)
    return folders


def test_the_skills_of_another_project_stay_in_the_snapshot(tmp_path: Path, snapshot: Path) -> None:
    first, _second = two_projects(tmp_path, snapshot, "first", "second")
    remembered(snapshot, "Summarise a CSV")

    assert listed(SkillStore(first, listing_snapshot=snapshot)) == {"csv-summary": "SUMMARISE A CSV"}


async def test_closing_the_app_leaves_the_listing_for_the_next_start(anton_home: Path, project_dir: Path) -> None:
    paths = AntonPaths(anton_home, project_dir)
    skill(SkillStore(paths.skills), "csv-summary", "Summarise a CSV")
    await asyncio.sleep(2.1)  # older than the settling time, as skills on a real home are
    stores = MemoryStores.from_paths(paths, history=False)
    runtime = Runtime(AppSettings(anton_home, project_dir), QuietSession(), stores=stores)
    try:
        assert "csv-summary" in await runtime.skills.labels()
    finally:
        await runtime.close()

    assert paths.skill_listing_snapshot == anton_home / "cache" / "skill-listing.txt"
    snapshot = paths.skill_listing_snapshot.read_text()
    assert "csv-summary" in snapshot and str(paths.skills) in snapshot
    assert not any(name.startswith(".") for name in os.listdir(paths.skills)), "nothing of it in the skills folder"


def test_with_the_change_feed_on_the_snapshot_is_used_and_later_edits_still_show(
    tmp_path: Path, snapshot: Path
) -> None:
    root = tmp_path / "skills"
    folder = two_skills(root)
    last_run(root, snapshot)
    remembered(snapshot, "Summarise a CSV")

    store = SkillStore(root, listing_snapshot=snapshot)
    assert store.follow_changes(), "inotify is there on Linux"
    try:
        assert listed(store)["csv-summary"] == "SUMMARISE A CSV"
        text = (folder / "SKILL.md").read_text()
        (folder / "SKILL.md").write_text(text.replace("Write the weekly report", "Write the weekly report, shorter"))
        assert listed(store)["weekly-report"] == "Write the weekly report, shorter"
    finally:
        store.stop_following_changes()


def test_a_snapshot_already_up_to_date_is_not_written_again(tmp_path: Path, snapshot: Path) -> None:
    root = tmp_path / "skills"
    skill(SkillStore(root), "csv-summary", "Summarise a CSV")
    assert last_run(root, snapshot)["written"] == 1
    before = snapshot.stat()
    assert last_run(root, snapshot)["written"] is None
    assert snapshot.stat().st_ino == before.st_ino and snapshot.stat().st_mtime_ns == before.st_mtime_ns


def test_a_run_that_listed_nothing_still_leaves_every_skill_for_the_next(tmp_path: Path, snapshot: Path) -> None:
    root = tmp_path / "skills"
    skill(SkillStore(root), "csv-summary", "Summarise a CSV")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: [unclosed\n---\n")

    assert SkillStore(root, listing_snapshot=snapshot).save_listing_snapshot(settle_ns=0) == 1
    assert "csv-summary\t" in snapshot.read_text() and "broken" not in snapshot.read_text()


def test_a_damaged_entry_is_read_from_the_files(tmp_path: Path, snapshot: Path) -> None:
    root = tmp_path / "skills"
    two_skills(root)
    last_run(root, snapshot)
    remembered(snapshot, "Summarise a CSV")
    remembered(snapshot, "Write the weekly report")
    text = snapshot.read_text()
    snapshot.write_text(text.replace('["SKILL.md",', '["SKILL.mx",', 1))  # the first entry: its file unsigned

    assert listed(SkillStore(root, listing_snapshot=snapshot)) == {
        "csv-summary": "Summarise a CSV",
        "weekly-report": "WRITE THE WEEKLY REPORT",
    }


def test_the_skills_of_a_project_that_is_gone_leave_the_snapshot(tmp_path: Path, snapshot: Path) -> None:
    kept, gone = two_projects(tmp_path, snapshot, "kept", "gone")
    assert str(gone) in snapshot.read_text()
    shutil.rmtree(tmp_path / "gone")
    skill(SkillStore(kept), "added", "New since the last run")

    assert last_run(kept, snapshot)["written"] == 2
    assert str(gone) not in snapshot.read_text() and "weekly-report" not in snapshot.read_text()
