"""The skills screen: editing skill files from the tree, creating, renaming and deleting skills, broken skills."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, TextArea

from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths
from anton_tui.runtime import Runtime
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.skills import FormModal, NodeRef, SkillsScreen

from ..runtime_sessions import QuietSession
from .app_support import AppSettings, KeepsNotifications, notifications

V5_META = """{
  "label": "csv_summary",
  "name": "CSV Summary",
  "description": "Summarize a CSV",
  "when_to_use": "user asks to summarize a csv",
  "created_at": "2026-11-22T04:23:52.709659+00:00",
  "provenance": "manual",
  "stage_1_present": true,
  "stage_2_present": false,
  "stage_3_present": true
}
"""
STATS = """{
  "total_recalls": 4,
  "stage_1": {
    "recommended": 4,
    "used": 2,
    "last_used": "2026-11-22T04:23:52.710133+00:00",
    "confidence": 0.0
  },
  "stage_2": {
    "recommended": 0,
    "used": 0,
    "last_used": "",
    "confidence": 0.0
  },
  "stage_3": {
    "recommended": 0,
    "used": 0,
    "last_used": "",
    "confidence": 0.0
  }
}
"""
SKILL_MD_FRONT = """---
name: fetch-prices
description: Fetch coin prices. user wants crypto prices
metadata:
  display_name: Fetch Prices
  provenance: manual
  created_at: '2026-11-22T04:23:45.068453+00:00'
---
"""
BROKEN_META = '{"label": "half_done", "name": '
SIZE = (120, 40)


class SkillsHost(KeepsNotifications, App[None]):
    def __init__(self, store: SkillStore) -> None:
        super().__init__()
        self.store = store
        self.runtime = runtime_over(store)

    def on_mount(self) -> None:
        self.push_screen(SkillsScreen(self.runtime, cursor_blink=False))


def runtime_over(store: SkillStore) -> Runtime:
    """A runtime whose skills are `store` (its other memory lives beside the skills folder)."""
    paths = AntonPaths(store.root.parent / "home", store.root.parent / "project")
    stores = replace(MemoryStores.from_paths(paths), skills=store)
    return Runtime(AppSettings(paths.home, paths.project_dir), QuietSession(), stores=stores)


async def settle(pilot) -> None:
    """Let the screen's reads and writes (workers) finish and their results be shown."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def seed(root: Path) -> SkillStore:
    csv = root / "csv_summary"
    (csv / "code").mkdir(parents=True)
    (csv / "meta.json").write_text(V5_META)
    (csv / "declarative.md").write_text("1. Load\n2. describe()")
    (csv / "stats.json").write_text(STATS)
    (csv / "code" / "helpers.py").write_text("def load(path):\n    return open(path).read()\n")
    fetch = root / "fetch-prices"
    fetch.mkdir()
    (fetch / "SKILL.md").write_text(SKILL_MD_FRONT + "1. Call the prices API\n2. Tabulate\n")
    broken = root / "half_done"
    broken.mkdir()
    (broken / "meta.json").write_text(BROKEN_META)
    (broken / "declarative.md").write_text("never finished\n")
    return SkillStore(root, clock=lambda: datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc))


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def store(tmp_path: Path) -> SkillStore:
    return seed(tmp_path / "skills")


async def choose(pilot, screen: SkillsScreen, ref: NodeRef) -> None:
    """Expand the skill in the tree and select the node for `ref`, as a click would."""
    await settle(pilot)
    skill_node = screen._find(NodeRef(ref.label, None, "broken" if ref.part in ("raw", "broken") else "skill"))
    assert skill_node is not None, f"{ref.label} is not in the tree"
    skill_node.expand()
    await settle(pilot)
    node = screen._find(ref)
    assert node is not None, f"{ref} is not in the tree"
    screen.skill_tree.select_node(node)
    await settle(pilot)


async def type_at_end(pilot, editor: TextArea, *keys: str) -> None:
    editor.focus()
    editor.move_cursor(editor.document.end)
    await pilot.press(*keys)


async def test_saving_an_older_layout_skill_asks_then_converts_it_keeping_a_backup(store: SkillStore) -> None:
    folder = store.root / "csv_summary"
    before = folder_bytes(folder)
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        assert isinstance(screen, SkillsScreen)
        screen.skill_tree.move_cursor(screen._find(NodeRef("csv_summary")))
        await pilot.press("enter")  # a skill node opens its procedure
        await settle(pilot)
        assert screen.open_ref == NodeRef("csv_summary", "declarative.md", "procedure")
        assert screen.editor.text == "1. Load\n2. describe()"
        await type_at_end(pilot, screen.editor, "enter", *"3. plot it")
        assert "modified" in str(screen.query_one("#skills-file-info").render())
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "older layout" in app.screen.question and "backup" in app.screen.question
        await pilot.press("n")
        await settle(pilot)
        assert folder_bytes(folder) == before
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert screen.selected_label == "csv-summary"

    assert not folder.exists()
    after = folder_bytes(store.root / "csv-summary")
    assert set(after) == {"SKILL.md", "stats.json", "scripts/helpers.py"}
    assert after["SKILL.md"].endswith(b"\n---\n1. Load\n2. describe()\n3. plot it")
    assert b"name: csv-summary\n" in after["SKILL.md"] and b"display_name: CSV Summary" in after["SKILL.md"]
    assert after["stats.json"] == before["stats.json"]
    assert after["scripts/helpers.py"] == before["code/helpers.py"]
    [backup] = (store.root.parent / "backups" / "skills").iterdir()
    assert folder_bytes(backup) == before


async def test_skill_md_procedure_edit_round_trips(store: SkillStore) -> None:
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        await choose(pilot, screen, NodeRef("fetch-prices", "SKILL.md", "procedure"))
        assert screen.editor.text == "1. Call the prices API\n2. Tabulate\n"
        await type_at_end(pilot, screen.editor, *"3. Chart")
        await pilot.press("ctrl+s")
        await settle(pilot)

    text = (store.root / "fetch-prices" / "SKILL.md").read_text()
    assert text == SKILL_MD_FRONT + "1. Call the prices API\n2. Tabulate\n3. Chart"
    reloaded = store.load("fetch-prices")
    assert reloaded.name == "Fetch Prices" and reloaded.declarative_md.endswith("3. Chart")


async def test_code_file_edit_is_saved_in_place(store: SkillStore) -> None:
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        await choose(pilot, screen, NodeRef("csv_summary", "code/helpers.py", "code"))
        assert screen.editor.language == "python"
        await type_at_end(pilot, screen.editor, *"# checked")
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
    assert (store.root / "csv-summary" / "scripts" / "helpers.py").read_text().endswith("read()\n# checked")


async def test_an_empty_procedure_is_refused_and_nothing_is_written(store: SkillStore) -> None:
    before = folder_bytes(store.root / "csv_summary")
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        await choose(pilot, screen, NodeRef("csv_summary", "declarative.md", "procedure"))
        screen.editor.focus()
        screen.editor.select_all()
        await pilot.press("backspace")
        assert screen.editor.text == ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        messages = notifications(app)
    assert any("procedure cannot be empty" in m for m in messages)
    assert folder_bytes(store.root / "csv_summary") == before


async def test_stats_open_read_only_and_are_never_written(store: SkillStore) -> None:
    before = folder_bytes(store.root / "csv_summary")
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        await choose(pilot, screen, NodeRef("csv_summary", "stats.json", "stats"))
        assert screen.editor.read_only
        assert json.loads(screen.editor.text)["total_recalls"] == 4
        await type_at_end(pilot, screen.editor, *"xyz")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert json.loads(screen.editor.text)["total_recalls"] == 4
    assert folder_bytes(store.root / "csv_summary") == before


async def test_new_skill_gets_a_unique_label_and_opens_its_procedure(store: SkillStore) -> None:
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, FormModal)
        await pilot.press("enter")  # nothing typed yet: refused, the modal stays
        await settle(pilot)
        assert app.screen is modal
        modal.query_one("#name", Input).value = "CSV Summary"
        modal.query_one("#when", Input).value = "the user hands over a CSV file"
        await pilot.click("#form-ok")
        await settle(pilot)
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        assert isinstance(screen, SkillsScreen)
        assert screen.open_ref == NodeRef("csv-summary-2", "SKILL.md", "procedure")
        assert screen.selected_label == "csv-summary-2"

    created = store.load("csv-summary-2")
    assert created is not None and created.format == "skill_md"
    assert (created.name, created.cue) == ("CSV Summary", "the user hands over a CSV file")
    assert created.declarative_md.strip()
    assert store.load("csv_summary").declarative_md == "1. Load\n2. describe()"


async def test_rename_moves_every_file_and_refuses_taken_or_bad_labels(store: SkillStore) -> None:
    (store.root / "fetch-prices" / "scripts").mkdir()
    (store.root / "fetch-prices" / "scripts" / "get.py").write_text("print(1)\n")
    before = folder_bytes(store.root / "fetch-prices")
    legacy = folder_bytes(store.root / "csv_summary")
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        screen.skill_tree.move_cursor(screen._find(NodeRef("csv_summary")))
        await pilot.press("f2")
        await settle(pilot)
        app.screen.query_one("#label", Input).value = "summarize-csv"
        await pilot.press("enter")
        await settle(pilot)
        assert any("older layout" in message for message in notifications(app))
        screen.skill_tree.move_cursor(screen._find(NodeRef("fetch-prices")))
        await pilot.press("f2")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, FormModal)
        field = modal.query_one("#label", Input)
        for refused in ("csv_summary", "half_done", "Has Spaces", "snake_case"):
            field.value = refused
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen is modal, refused
        field.value = "fetch-coins"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert screen.selected_label == "fetch-coins"

    assert folder_bytes(store.root / "csv_summary") == legacy
    assert not (store.root / "fetch-prices").exists()
    after = folder_bytes(store.root / "fetch-coins")
    assert set(after) == set(before) | {"stats.json"}
    assert after["scripts/get.py"] == before["scripts/get.py"]
    assert after["SKILL.md"] == before["SKILL.md"].replace(b"name: fetch-prices", b"name: fetch-coins")
    assert store.load("half_done") is None and store.problem("half_done") is not None


async def test_delete_asks_first_and_removes_the_folder_on_yes(store: SkillStore) -> None:
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        screen.skill_tree.move_cursor(screen._find(NodeRef("fetch-prices")))
        await pilot.press("f8")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert (store.root / "fetch-prices" / "SKILL.md").exists()
        await pilot.press("delete")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert screen._find(NodeRef("fetch-prices")) is None
    assert not (store.root / "fetch-prices").exists()
    assert (store.root / "csv_summary" / "declarative.md").exists()


async def test_broken_skill_is_marked_and_opens_read_only_without_touching_it(store: SkillStore) -> None:
    before = folder_bytes(store.root / "half_done")
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        node = screen._find(NodeRef("half_done", None, "broken"))
        assert "broken" in str(node.label)
        screen.skill_tree.select_node(node)
        await settle(pilot)
        assert screen.open_ref == NodeRef("half_done", "meta.json", "raw")
        assert screen.editor.read_only and screen.editor.text == BROKEN_META
        info = str(screen.query_one("#skills-file-info").render())
        assert "meta.json: invalid JSON" in info
        reason = [str(child.label) for child in node.children]
        assert any("invalid JSON" in line for line in reason)
        await type_at_end(pilot, screen.editor, *"}")
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)
        assert app.screen is screen  # a broken skill cannot be renamed
    assert folder_bytes(store.root / "half_done") == before


async def test_refresh_tree_picks_up_changes_and_keeps_the_cursor(store: SkillStore) -> None:
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        await choose(pilot, screen, NodeRef("csv_summary", "stats.json", "stats"))
        store.save(Skill("aaa_first", name="First", when_to_use="always first", declarative_md="1. Go\n"))
        (store.root / "csv_summary" / "chunks.md").write_text("# Chunks\n")
        screen.refresh_tree()
        await settle(pilot)
        assert screen.skill_tree.cursor_node.data == NodeRef("csv_summary", "stats.json", "stats")
        assert screen._find(NodeRef("aaa-first")) is not None
        assert screen._find(NodeRef("csv_summary", "chunks.md", "chunks")) is not None
        assert "3 saved · 1 broken" in str(screen.query_one("#skills-title").render())


async def test_unsaved_edits_survive_switching_files_and_closing_asks(store: SkillStore) -> None:
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)  # the screen reads the skills in a worker
        procedure = NodeRef("csv_summary", "declarative.md", "procedure")
        await choose(pilot, screen, procedure)
        await type_at_end(pilot, screen.editor, *"!")
        await choose(pilot, screen, NodeRef("csv_summary", "code/helpers.py", "code"))
        assert str(screen._find(procedure).label).endswith("●")  # marked as holding unsaved text
        await choose(pilot, screen, procedure)
        assert screen.editor.text == "1. Load\n2. describe()!"
        screen.skill_tree.focus()
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is screen
    assert (store.root / "csv_summary" / "declarative.md").read_text() == "1. Load\n2. describe()"


def _snapshot_app(tmp_path: Path) -> SkillsHost:
    store = seed(tmp_path / "skills")
    return SkillsHost(store)


async def _open_procedure(pilot) -> None:
    screen = pilot.app.screen
    await choose(pilot, screen, NodeRef("csv_summary", "declarative.md", "procedure"))


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["wide", "small"])
def test_skills_screen_snapshot(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(_snapshot_app(tmp_path), terminal_size=size, run_before=_open_procedure)


async def test_built_in_skills_are_listed_apart_and_editing_one_offers_a_copy(tmp_path: Path) -> None:
    from anton_tui.memory.skills.sources import BUILTIN_ROOT, skill_sources

    root = tmp_path / "skills"
    store = SkillStore(root, sources=skill_sources(tmp_path / "project", home=tmp_path / "home"))
    store.save(Skill(label="analysis-to-skill", name="Mine", description="My own version", declarative_md="1. Mine\n"))
    builtin_before = (BUILTIN_ROOT / "explore-data-file" / "SKILL.md").read_bytes()
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        groups = [node for node in screen.skill_tree.root.children if node.data is None]
        assert [str(node.label).split("  ")[0] for node in groups] == ["Built-in"]
        assert sorted(child.data.label for child in groups[0].children) == ["explore-data-file", "python-helper-in-scratchpad"]
        assert "hides Built-in" in str(screen._find(NodeRef("analysis-to-skill")).label)
        assert "1 saved · 2 read-only" in str(screen.query_one("#skills-title").render())

        screen.skill_tree.select_node(screen._find(NodeRef("explore-data-file")))
        await settle(pilot)
        assert "read-only (Built-in)" in str(screen.query_one("#skills-file-info").render())
        await type_at_end(pilot, screen.editor, *"7. Mine")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen) and "Copy it into your skills" in app.screen.question
        await pilot.press("y")
        await settle(pilot)
        node = screen._find(NodeRef("explore-data-file"))
        assert node is not None and node.parent is screen.skill_tree.root, "the copy is one of the user's skills now"

    assert (BUILTIN_ROOT / "explore-data-file" / "SKILL.md").read_bytes() == builtin_before
    copy = store.load("explore-data-file")
    assert (copy.source, copy.provenance) == ("user", "manual")
    assert copy.declarative_md.endswith("7. Mine") and (root / "explore-data-file" / "SKILL.md").is_file()
