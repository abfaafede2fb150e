"""The skills' change feed: with it on, a warm listing of many skills costs a handful of `stat` calls, yet every change
any program made before the listing began is in it, with no pause between the change and the listing; when the
feed cannot vouch for a folder (lost events, too few watches, a link) that folder is checked as before."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from anton_tui.memory.skills import listing as skill_listing
from anton_tui.memory.skills.sources import skill_sources
from anton_tui.memory.skills.store import Skill, SkillStore

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the change feed uses Linux inotify")


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n1. Do it.\n"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SkillStore]:
    sources = skill_sources(tmp_path / "project", home=tmp_path / "home", enabled={"builtin": False})
    skills = SkillStore(tmp_path / "anton" / "skills", sources=sources)
    skills.stop_following_changes()  # one feed per process: each test starts its own
    yield skills
    skills.stop_following_changes()


def save(store: SkillStore, label: str, description: str) -> Path:
    store.save(Skill(label=label, description=description, declarative_md="1. Go"))
    return store.root / label / "SKILL.md"


def old_layout(store: SkillStore, label: str, description: str) -> Path:
    folder = store.root / label
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"name": label, "description": description, "when_to_use": "always"}))
    (folder / "declarative.md").write_text("1. Go\n")
    (folder / "stats.json").write_text("{}\n")
    return folder


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Overwrite the file's bytes without replacing it, as some editors and scripts do."""
    text = path.read_text()
    assert old in text and len(old) == len(new)
    with open(path, "r+") as handle:
        handle.write(text.replace(old, new))


def descriptions(store: SkillStore) -> dict[str, str]:
    return {s["label"]: s["description"] for s in store.list_summaries()}


def following(store: SkillStore, **options: int) -> SkillStore:
    assert store.follow_changes(**options)
    return store


def stats_during(monkeypatch: pytest.MonkeyPatch, call) -> int:
    count = 0
    real = os.stat

    def counting(*args, **kwargs):
        nonlocal count
        count += 1
        return real(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "stat", counting)
        call()
    return count


def test_a_warm_listing_costs_a_handful_of_stats_with_the_feed_and_one_per_skill_without(
    store: SkillStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(300):
        save(store, f"skill-{number}", f"Step {number}")
    for number in range(30):
        old_layout(store, f"older-{number}", f"Older step {number}")
    assert len(store.list_summaries()) == 330
    assert stats_during(monkeypatch, store.list_summaries) >= 330  # without the feed: every skill is checked

    following(store)
    assert stats_during(monkeypatch, store.list_summaries) <= 8  # one per skills folder, whatever the number of skills
    edit_in_place(store.root / "skill-7" / "SKILL.md", "Step 7", "Step X")
    assert stats_during(monkeypatch, store.list_summaries) <= 12
    assert descriptions(store)["skill-7"] == "Step X"


def test_every_change_is_in_the_very_next_listing(store: SkillStore, tmp_path: Path) -> None:
    report = save(store, "report", "Monthly report")
    save(store, "gone", "Will be deleted")
    save(store, "tidy", "Will be renamed")
    older = old_layout(store, "older", "Older skill")
    damaged = old_layout(store, "damaged", "Stats will break")
    following(store)
    assert set(descriptions(store)) == {"report", "gone", "tidy", "older", "damaged"}

    edit_in_place(report, "Monthly report", "Monthly rePort")  # one letter: same size
    assert descriptions(store)["report"] == "Monthly rePort"
    edit_in_place(older / "meta.json", "Older skill", "Elder skill")
    assert descriptions(store)["older"] == "Elder skill"
    edit_in_place(damaged / "stats.json", "{}", "{[")  # an older skill with a damaged stats.json is broken
    assert "damaged" not in descriptions(store)
    (store.root / "gone" / "SKILL.md").unlink()
    assert "gone" not in descriptions(store)

    save(store, "added", "Just added")
    assert descriptions(store)["added"] == "Just added"
    os.rename(store.root / "tidy", store.root / "tidy-up")
    assert "tidy" not in descriptions(store) and descriptions(store)["tidy-up"] == "Will be renamed"
    store.delete("added")
    assert "added" not in descriptions(store)

    theirs = tmp_path / "project" / ".agents" / "skills" / "lint"  # a source folder that did not exist until now
    theirs.mkdir(parents=True)
    (theirs / "SKILL.md").write_text(skill_md("lint", "Run the linter"))
    assert descriptions(store)["lint"] == "Run the linter"
    edit_in_place(theirs / "SKILL.md", "Run the", "Run thE")
    assert descriptions(store)["lint"] == "Run thE linter"


def test_a_folder_swapped_for_another_of_the_same_name_is_followed(store: SkillStore) -> None:
    save(store, "report", "Monthly report")
    following(store)
    assert descriptions(store)["report"] == "Monthly report"
    fresh = store.root / ".report.new"
    fresh.mkdir()
    (fresh / "SKILL.md").write_text(skill_md("report", "Weekly report"))
    os.rename(store.root / "report", store.root / ".report.old")
    os.rename(fresh, store.root / "report")
    assert descriptions(store)["report"] == "Weekly report"
    edit_in_place(store.root / "report" / "SKILL.md", "Weekly", "Yearly")  # in the new folder, not the old one
    assert descriptions(store)["report"] == "Yearly report"


def test_a_skills_folder_replaced_by_another_is_followed(store: SkillStore) -> None:
    save(store, "report", "Monthly report")
    following(store)
    assert descriptions(store)["report"] == "Monthly report"
    home = store.root.parent  # the folder holding the skills folder is swapped, e.g. restored from a backup
    replacement = home.parent / "anton.restored" / "skills" / "report"
    replacement.mkdir(parents=True)
    (replacement / "SKILL.md").write_text(skill_md("report", "Weekly report"))
    os.rename(home, home.parent / "anton.old")
    os.rename(home.parent / "anton.restored", home)
    assert descriptions(store)["report"] == "Weekly report"
    edit_in_place(store.root / "report" / "SKILL.md", "Weekly", "Yearly")
    assert descriptions(store)["report"] == "Yearly report"


def test_an_edit_after_lost_events_is_seen_and_the_feed_is_trusted_again(
    store: SkillStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(50):
        save(store, f"skill-{number}", f"Step {number}")
    following(store)
    store.list_summaries()
    queue = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    busy = store.root / "skill-1"
    for number in range(queue // 2 + 100):  # more events than the kernel queues: the rest are lost
        path = busy / f"scratch-{number}.tmp"
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY))
        os.unlink(path)
    edit_in_place(store.root / "skill-30" / "SKILL.md", "Step 30", "Step XX")
    assert descriptions(store)["skill-30"] == "Step XX"
    assert stats_during(monkeypatch, store.list_summaries) <= 8
    edit_in_place(store.root / "skill-31" / "SKILL.md", "Step 31", "Step YY")
    assert descriptions(store)["skill-31"] == "Step YY"


def test_folders_beyond_the_watch_budget_are_checked_as_before(store: SkillStore) -> None:
    for number in range(5):
        save(store, f"skill-{number}", f"Step {number}")
    following(store, max_watches=2)  # the skills folder and one skill folder
    assert skill_listing.change_feed().watch_count == 2
    for number in range(5):
        edit_in_place(store.root / f"skill-{number}" / "SKILL.md", f"Step {number}", f"Step X{number}"[:6])
        assert descriptions(store)[f"skill-{number}"] == f"Step X{number}"[:6]


def test_a_linked_skill_file_edited_through_its_other_name_is_seen(store: SkillStore) -> None:
    outside = store.root / ".dotfiles"  # inside the skills folder (a link leading out of it is refused), not listed
    outside.mkdir(parents=True)
    target = outside / "SKILL.md"
    target.write_text(skill_md("linked", "Kept in dotfiles"))
    (store.root / "linked").mkdir()
    (store.root / "linked" / "SKILL.md").symlink_to(target)
    hard = outside / "hard.md"
    hard.write_text(skill_md("hard", "Kept twice"))
    (store.root / "hard").mkdir()
    os.link(hard, store.root / "hard" / "SKILL.md")
    following(store)
    assert descriptions(store) == {"linked": "Kept in dotfiles", "hard": "Kept twice"}
    edit_in_place(target, "dotfiles", "dotFILES")
    edit_in_place(hard, "twice", "TWICE")
    assert descriptions(store) == {"linked": "Kept in dotFILES", "hard": "Kept TWICE"}


def test_without_inotify_the_listing_works_as_before(store: SkillStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # as where the library cannot be imported
    report = save(store, "report", "Monthly report")
    assert store.follow_changes() is False and skill_listing.change_feed() is None
    assert descriptions(store) == {"report": "Monthly report"}
    edit_in_place(report, "Monthly", "Weekly!")
    assert descriptions(store) == {"report": "Weekly! report"}


def inotify_descriptors() -> set[int]:
    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify":
                found.add(int(name))
        except OSError:
            continue
    return found


async def test_the_feed_starts_once_the_user_starts_typing_and_closes_on_exit(monkeypatch, anton_home: Path) -> None:
    from anton_tui.runtime import RuntimeStarter
    from anton_tui.settings_sources import read_env_layers

    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-ant-test-not-used")
    runtime = RuntimeStarter(read_env_layers()).build()
    before = inotify_descriptors()
    try:
        skills = runtime.session.skills  # the skills the app shows: the session's own
        save(skills, "report", "Monthly report")
        await runtime.warm_up()
        assert skill_listing.change_feed() is None, "not while the app is only looked at"
        await runtime.warm_up_model()  # what the prompt's first keystroke calls
        feed = skill_listing.change_feed()
        assert feed is not None and feed.fileno() in inotify_descriptors() - before
        edit_in_place(skills.root / "report" / "SKILL.md", "Monthly", "Weekly!")
        assert descriptions(skills)["report"] == "Weekly! report"
    finally:
        await runtime.close()
    assert skill_listing.change_feed() is None and inotify_descriptors() - before == set()


def test_a_slash_command_mark_shows_in_every_view_once_the_feed_sees_the_edit(store: SkillStore) -> None:
    path = save(store, "report", "Monthly report")
    following(store)
    assert store.slash_commands() == [] and descriptions(store) == {"report": "Monthly report"}

    text = path.read_text()
    path.write_text(text.replace("description: Monthly report", "description: Yearly report\nuser-invocable: true"))
    assert descriptions(store) == {"report": "Yearly report"}  # (the listing reads the folder again first)
    assert store.slash_commands() == [("report", "Yearly report")]
