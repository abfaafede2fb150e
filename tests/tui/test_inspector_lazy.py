"""The inspector reads nothing before the app's first frame, then its tabs one at a time, the tab in view first.

A tab shown before its turn loads at once; a change on disk reloads the tabs already read and leaves the others to
their first read; a read that fails is reported while the other tabs still load. Big tables fill in one go without
Textual measuring every cell. In the full app the file watcher starts once the tabs are loaded, and the session's
warm-up (the SDK import) only after the watcher runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static, TabbedContent
from textual.widgets.data_table import DuplicateKey

from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.tui import app as app_module
from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.watchers import FilesChanged
from anton_tui.tui.textual_internals import FrameHook
from anton_tui.tui.widgets.inspector.base import Cell, FixedColumnsTable
from anton_tui.tui.widgets.inspector.entries import EntryTab
from anton_tui.tui.widgets.inspector.pane import InspectorPane
from anton_tui.tui.widgets.inspector.skills_tab import SkillsTab

from .e2e_support import SIZE as APP_SIZE
from .e2e_support import build_app, home_dir, main_screen, save_global_env, started, wait_for, wait_watching
from .inspector_fixtures import InspectorHost, column, seeded_stores, settle, wait_until

SIZE = (120, 40)
THEME = 'name = "mine"\ndark = true\nprimary = "#5FA8D3"\n'
FILE_TABS = ("rules", "lessons", "profile", "skills")


class FirstFrameHost(FrameHook, InspectorHost):
    """Notes which tabs had started reading when the first frame was painted (where a terminal is written to)."""

    read_at_first_frame: list[str] | None = None

    def frame_written(self, screen, renderable) -> None:
        if self.read_at_first_frame is None:
            pane = self.query_one(InspectorPane)
            self.read_at_first_frame = [tab_id for tab_id in FILE_TABS if pane.tab(tab_id).load_started]


class ReadLog:
    """Records every read of a file tab (which tab, when it started and ended); can hold one tab's first read."""

    def __init__(self, monkeypatch, hold: str | None = None) -> None:
        self.reads: list[tuple[str, float, float]] = []
        self.hold, self.release = hold, threading.Event()
        for cls in (EntryTab, SkillsTab):
            monkeypatch.setattr(cls, "read_snapshot", self._recording(cls.read_snapshot))

    def _recording(self, read):
        async def recorded(tab):
            tab_id = tab.id.removeprefix("inspector-").removesuffix("-tab")
            started = time.perf_counter()
            if tab_id == self.hold and not self.count(tab_id):
                self.reads.append((tab_id, started, float("inf")))  # in flight
                assert await asyncio.to_thread(self.release.wait, 10), "the held read was never released"
                snapshot = await read(tab)
                self.reads[self.reads.index((tab_id, started, float("inf")))] = (tab_id, started, time.perf_counter())
                return snapshot
            snapshot = await read(tab)
            self.reads.append((tab_id, started, time.perf_counter()))
            return snapshot

        return recorded

    def count(self, tab_id: str) -> int:
        return sum(1 for read in self.reads if read[0] == tab_id)


def label_of(app: InspectorHost, tab_id: str) -> str:
    return app.pane.query_one(TabbedContent).get_tab(f"inspector-{tab_id}").label.plain


async def test_the_first_frame_is_painted_before_any_file_is_read_and_then_every_tab_fills(tmp_path):
    app = FirstFrameHost(seeded_stores(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await settle(pilot)
        assert app.read_at_first_frame == []
        assert all(app.pane.tab(tab_id).loaded for tab_id in FILE_TABS)
        assert label_of(app, "rules") == "Rules 4"
        assert label_of(app, "lessons") == "Lessons 4"
        assert label_of(app, "skills") == "Skills 3"
        assert column(app.pane.tab("profile").table, 1) == ["Name: Jorge", "Timezone: PST", "Works mostly in Python"]


async def test_tabs_are_read_one_after_another_the_tab_in_view_first(tmp_path, monkeypatch):
    log = ReadLog(monkeypatch)
    app = InspectorHost(seeded_stores(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await settle(pilot)
    assert [tab_id for tab_id, _, _ in log.reads] == ["rules", "lessons", "profile", "skills"]
    for (_, _, ended), (_, began, _) in zip(log.reads, log.reads[1:]):
        assert began >= ended, "two tabs were read at the same time"


async def test_a_tab_shown_before_its_turn_loads_at_once(tmp_path, monkeypatch):
    log = ReadLog(monkeypatch, hold="lessons")  # the background loading stalls on the Lessons tab
    app = InspectorHost(seeded_stores(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        try:
            await wait_until(pilot, lambda: log.count("lessons") == 1)
            skills = app.pane.tab("skills")
            assert not skills.load_started
            app.pane.show_tab("skills")
            await wait_until(pilot, lambda: skills.table.row_count == 3)
            assert column(skills.table, 0) == ["btc-chart", "csv_summary", "web_scrape"]
            assert not app.pane.tab("lessons").loaded
        finally:
            log.release.set()
        await settle(pilot)
        assert app.pane.tab("lessons").table.row_count == 4
    assert log.count("skills") == 1, "the background loading does not read a shown tab again"


async def test_changes_reload_tabs_already_read_and_unread_tabs_read_them_fresh(tmp_path, monkeypatch):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    log = ReadLog(monkeypatch, hold="lessons")
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        try:
            await wait_until(pilot, lambda: log.count("lessons") == 1)
            assert app.pane.tab("rules").loaded and not app.pane.tab("profile").load_started
            stores.global_hc.encode_rule("Always pin package versions", "always", source="user")
            stores.project_hc.encode_lesson("Retry 429 responses after the Retry-After delay", topic="http")
            stores.global_hc.rewrite_identity(["Prefers short answers"])
            app.pane.post_message(FilesChanged({"memory"}))  # what the file watcher would say
            rules, lessons = app.pane.tab("rules"), app.pane.tab("lessons")
            await wait_until(pilot, lambda: "Always pin package versions" in column(rules.table, 2))
            # The held read started before the change; a newer read replaces it and shows the new lesson.
            text = "Retry 429 responses after the Retry-After delay"
            await wait_until(pilot, lambda: text in column(lessons.table, 2))
            assert log.count("profile") == 0, "a tab not read yet is not reloaded"
        finally:
            log.release.set()  # the stale read ends now; what it read must not replace the newer rows
        await settle(pilot)
        assert text in column(lessons.table, 2) and lessons.table.row_count == 5
        assert column(app.pane.tab("profile").table, 1)[-1] == "Prefers short answers"
    assert log.count("rules") == 2 and log.count("lessons") == 2 and log.count("profile") == 1


async def test_a_failing_first_read_is_reported_and_the_other_tabs_still_load(tmp_path):
    stores = seeded_stores(tmp_path, episodes=False)
    # The global memory folder's name holds a NUL byte: opening any file in it raises ValueError.
    stores = dataclasses.replace(stores, global_hc=Hippocampus(tmp_path / "bad\0folder", scope="global"))
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await settle(pilot)
        for tab_id in ("rules", "lessons", "profile"):
            tab = app.pane.tab(tab_id)
            assert not tab.loaded
            assert str(tab.query_one(".detail", Static).render()).startswith("Could not read the files: ValueError")
        errors = [message for severity, _, message in app.notes if severity == "error"]
        assert len(errors) == 1 and "ValueError" in errors[0], "the same failure is reported once"
        assert app.pane.tab("skills").table.row_count == 3, "the tab after the failing ones loaded"


class TableHost(App):
    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[int] = []

    def compose(self) -> ComposeResult:
        yield FixedColumnsTable(cursor_type="row")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.highlighted.append(event.cursor_row)


async def test_rows_added_in_one_go_behave_like_rows_added_one_by_one():
    app = TableHost()
    async with app.run_test(size=(60, 12)) as pilot:
        await started(pilot)
        table = app.query_one(FixedColumnsTable)
        table.add_column("Scope", key="scope", width=7)
        table.add_column("Text", key="text", width=20)
        rows = [(f"row-{n}", [Cell("global"), Cell(f"[bold]lesson {n}[/bold] and a long tail of words")])
                for n in range(5_000)]  # fmt: skip
        table.add_keyed_rows(rows)
        await pilot.pause()
        assert table.row_count == 5_000 and app.highlighted == [0], "the cursor's row is announced once"
        assert table.get_row("row-4999") == rows[-1][1]
        last = [str(value) for value in table.get_row_at(4_999)]
        assert last == ["global", "[bold]lesson 4999[/bold] and a long tail of words"]
        assert table.virtual_size.height == 5_001  # the rows and the header
        assert table.columns["text"].content_width == len("Text"), "no cell was measured"
        table.move_cursor(row=4_999)
        await pilot.pause()
        shown = "\n".join(table.render_line(y).text for y in range(table.size.height))
        assert " global   [bold]lesson 4999[/… " in shown, "text shown as written, cut with an ellipsis"
        with pytest.raises(DuplicateKey):
            table.add_keyed_rows([("row-7", [Cell("again")])])


async def test_the_watcher_starts_after_the_tabs_are_loaded_and_the_warm_up_after_the_watcher(fake_llm, monkeypatch):
    monkeypatch.setattr(app_module, "WATCH_AT_THE_LATEST_S", 60.0)  # so only the inspector's word can start it
    save_global_env(fake_llm)
    app = build_app(watch_files=True)
    seen: dict[str, object] = {}
    start_watching, warm_up = app.start_watching, app.warm_up

    def watching():
        pane = main_screen(app).query_one(InspectorPane)
        seen["tabs loaded when the watcher started"] = all(pane.tab(tab_id).loaded for tab_id in FILE_TABS)
        return start_watching()

    def warming():
        seen["watcher running when the warm-up started"] = app._watcher is not None and app._watcher.running
        return warm_up()

    app.start_watching, app.warm_up = watching, warming
    async with app.run_test(size=APP_SIZE) as pilot:
        await started(pilot)
        await wait_watching(pilot)
        await wait_for(pilot, lambda: len(seen) == 2, 5.0, "the warm-up to start")
        lessons = Path(app.runtime.settings.project_dir) / ".anton" / "memory" / "lessons.md"
        lessons.parent.mkdir(parents=True, exist_ok=True)
        lessons.write_text("# Lessons\n- Written by another program <!-- ts:2026-11-22 -->\n", encoding="utf-8")
        table = main_screen(app).query_one(InspectorPane).tab("lessons").table
        await wait_for(pilot, lambda: "Written by another program" in column(table, 2), 3.0, "the new lesson")
    assert seen == {"tabs loaded when the watcher started": True, "watcher running when the warm-up started": True}


async def test_without_an_inspector_the_watcher_still_starts_soon_after_the_first_frame(fake_llm):
    save_global_env(fake_llm)
    app = AntonApp(RuntimeStarter(read_env_layers()), watch_files=True, cursor_blink=False, inspector=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await started(pilot)
        settings = app.runtime.settings
        await wait_watching(pilot)
        themes = Path(settings.home) / "themes"
        themes.mkdir(exist_ok=True)
        (themes / "mine.toml").write_text(THEME, encoding="utf-8")
        await wait_for(pilot, lambda: "mine" in app.available_themes, 3.0, "the new theme file to be picked up")


def stats_json(recalls: int) -> str:
    """A skill's stats.json as anton-agent writes it after `recalls` recalls (stage 1 recommended each time)."""
    stage = lambda n: {"recommended": n, "used": 0, "last_used": "", "confidence": 0.0}  # noqa: E731
    return json.dumps({"total_recalls": recalls, "stage_1": stage(recalls), "stage_2": stage(0), "stage_3": stage(0)})


async def test_the_skills_tab_once_shown_follows_what_changes_inside_a_skill_folder(fake_llm):
    """An app whose Skills tab stays hidden watches the skills folder alone (a watch per skill folder costs some 6 MB
    at 10,000 skills); showing the tab shows what changed meanwhile, and follows each skill's files from then on."""
    save_global_env(fake_llm)
    skill = home_dir() / "skills" / "csv-summary"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: CSV summary\ndescription: sums a CSV\n---\nRead it.\n")
    app = build_app(watch_files=True)
    async with app.run_test(size=APP_SIZE) as pilot:
        await started(pilot)
        await wait_watching(pilot)
        pane = main_screen(app).query_one(InspectorPane)
        table = pane.tab("skills").table

        def recalls() -> str | None:
            return dict(zip(column(table, 0), column(table, 1), strict=True)).get("csv-summary")

        await wait_for(pilot, lambda: recalls() == "0", 5.0, "the skill's row")
        (skill / "stats.json").write_text(stats_json(3))  # anton-agent recalled it meanwhile
        await pilot.pause(0.5)
        assert recalls() == "0", "inside the skill folders is not watched while no screen shows them"

        pane.show_tab("skills")
        await wait_for(pilot, lambda: recalls() == "3", 5.0, "what changed while the tab was hidden")
        (skill / "stats.json").write_text(stats_json(5))
        await wait_for(pilot, lambda: recalls() == "5", 3.0, "a change made while the tab is shown")
