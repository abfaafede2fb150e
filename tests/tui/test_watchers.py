"""The file watcher with a real watchdog observer: what it reports, what it ignores, folders that appear later."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

from textual.app import App
from textual.widgets import Static

from anton_tui.paths import AntonPaths
from anton_tui.tui.watchers import ChangeBatcher, FilesChanged, MemoryWatcher

from .inspector_fixtures import column, wait_until


class Recorder(App):
    """Collects every FilesChanged it receives, and what a ChangeBatcher hands on."""

    def __init__(self) -> None:
        super().__init__()
        self.received: list[frozenset[str]] = []
        self.flushed: list[frozenset[str]] = []
        self.batcher = ChangeBatcher(self, self.flushed.append)

    def compose(self):
        yield Static("watching")

    def on_files_changed(self, message: FilesChanged) -> None:
        self.received.append(message.areas)
        self.batcher.add(message.areas)

    def seen(self) -> set[str]:
        return set().union(*self.received) if self.received else set()


def make_paths(tmp_path: Path, *, create: bool = True) -> AntonPaths:
    paths = AntonPaths(tmp_path / "watched" / "home", tmp_path / "watched" / "project")
    paths.home.mkdir(parents=True)
    paths.project_dir.mkdir()
    if create:
        for folder in (paths.global_memory, paths.project_memory, paths.skills, paths.episodes, paths.themes):
            folder.mkdir(parents=True)
    return paths


async def test_pending_messages_merge_into_one_with_every_area():
    app = Recorder()
    async with app.run_test() as pilot:
        # Posted in one go (as the observer thread does during a burst): the queue folds them into one message.
        for areas in ({"memory"}, {"skills"}, {"memory", "episodes"}):
            app.post_message(FilesChanged(areas))
        await pilot.pause()
        assert app.received == [frozenset({"memory", "skills", "episodes"})]


async def test_batcher_hands_on_one_union_per_window():
    app = Recorder()
    async with app.run_test() as pilot:
        app.batcher.add({"memory"})
        await pilot.pause(0.03)
        app.batcher.add({"skills"})
        app.batcher.add({"memory"})
        assert app.flushed == []
        await wait_until(pilot, lambda: app.flushed, timeout=1.0, step=0.01)
        assert app.flushed == [frozenset({"memory", "skills"})]
        await pilot.pause(0.2)
        assert len(app.flushed) == 1


async def test_writes_in_each_folder_are_reported_with_their_area(tmp_path):
    paths = make_paths(tmp_path)
    app = Recorder()
    async with app.run_test() as pilot:
        watcher = MemoryWatcher.for_paths(paths, app)
        watcher.start()
        try:
            (paths.project_memory / "lessons.md").write_text("# Lessons\n- one <!-- ts:2026-11-22 -->\n")
            await wait_until(pilot, lambda: "memory" in app.seen())
            skill = paths.skills / "csv_summary"
            skill.mkdir()
            (skill / "stats.json").write_text("{}\n")
            await wait_until(pilot, lambda: "skills" in app.seen())
            (paths.episodes / "20261122_042512.jsonl").write_text("{}\n")
            await wait_until(pilot, lambda: "episodes" in app.seen())
            (paths.themes / "night.toml").write_text('name = "night"\n')
            await wait_until(pilot, lambda: "themes" in app.seen())
            (paths.global_memory / "rules.md").unlink(missing_ok=True)
            app.received.clear()
            (paths.global_memory / "rules.md").write_text("# Rules\n")
            await wait_until(pilot, lambda: app.seen() == {"memory"})
        finally:
            watcher.stop()
        assert not watcher.running


async def test_own_bookkeeping_and_reads_are_ignored(tmp_path):
    paths = make_paths(tmp_path)
    lessons = paths.project_memory / "lessons.md"
    lessons.write_text("# Lessons\n")
    app = Recorder()
    async with app.run_test() as pilot:
        watcher = MemoryWatcher.for_paths(paths, app)
        watcher.start()
        try:
            (paths.project_memory / "lessons.md.lock").write_text("")
            (paths.project_memory / ".lessons.md.123.abcd.tmp").write_text("partial")
            (paths.episodes / ".recall-index.sqlite3").write_bytes(b"SQLite format 3\x00")
            (paths.episodes / ".recall-index.sqlite3-journal").write_bytes(b"x")
            (paths.episodes / ".recall-index.lock").write_text("")
            for _ in range(5):
                lessons.read_text()  # every refresh reads the files; that must not look like a change
            (paths.themes / "marker.toml").write_text("")  # a real change, to know the events above were seen
            await wait_until(pilot, lambda: "themes" in app.seen())
            await pilot.pause(0.3)
            assert app.seen() == {"themes"}
        finally:
            watcher.stop()


async def test_folders_that_appear_later_are_picked_up(tmp_path):
    paths = make_paths(tmp_path, create=False)
    app = Recorder()
    async with app.run_test() as pilot:
        watcher = MemoryWatcher.for_paths(paths, app)
        watcher.start()
        assert watcher.watched_path(paths.project_memory) == paths.project_dir
        try:
            paths.project_memory.mkdir(parents=True)  # .anton and .anton/memory appear together
            await wait_until(pilot, lambda: "memory" in app.seen())
            assert watcher.watched_path(paths.project_memory) == paths.project_memory
            app.received.clear()
            (paths.project_memory / "lessons.md").write_text("# Lessons\n- two <!-- ts:2026-11-22 -->\n")
            await wait_until(pilot, lambda: "memory" in app.seen())

            # The skills folder is created, filled, removed and created again: changes keep arriving.
            paths.skills.mkdir(parents=True)
            await wait_until(pilot, lambda: "skills" in app.seen())
            assert watcher.watched_path(paths.skills) == paths.skills
            (paths.skills / "a").mkdir()
            (paths.skills / "a" / "meta.json").write_text("{}")
            (paths.skills / "a" / "meta.json").unlink()
            (paths.skills / "a").rmdir()
            paths.skills.rmdir()
            await wait_until(pilot, lambda: watcher.watched_path(paths.skills) == paths.home, step=0.02)
            paths.skills.mkdir()
            await wait_until(pilot, lambda: watcher.watched_path(paths.skills) == paths.skills, step=0.02)
            app.received.clear()
            (paths.skills / "b").mkdir()
            (paths.skills / "b" / "SKILL.md").write_text("---\nname: b\n---\nsteps")
            await wait_until(pilot, lambda: "skills" in app.seen())
        finally:
            watcher.stop()


async def test_inside_the_skill_folders_is_followed_once_something_shows_it(tmp_path):
    paths = make_paths(tmp_path)
    skill = paths.skills / "csv_summary"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: csv\n---\nsteps")
    app = Recorder()
    async with app.run_test() as pilot:
        watcher = MemoryWatcher.for_paths(paths, app)
        watcher.start()
        try:
            (paths.skills / "added").mkdir()  # a skill added or removed shows at once
            await wait_until(pilot, lambda: "skills" in app.seen())
            app.received.clear()
            (skill / "SKILL.md").write_text("---\nname: csv\n---\nnew steps")  # not followed yet
            (paths.themes / "marker.toml").write_text("")  # a real change, to know the one above was not seen
            await wait_until(pilot, lambda: "themes" in app.seen())
            await pilot.pause(0.2)
            assert app.seen() == {"themes"}

            app.received.clear()
            await asyncio.to_thread(watcher.watch_inside, "skills")
            await wait_until(pilot, lambda: "skills" in app.seen())  # what changed before: look again
            app.received.clear()
            (skill / "stats.json").write_text("{}\n")
            await wait_until(pilot, lambda: "skills" in app.seen())
            assert watcher.watched_path(paths.skills) == paths.skills
        finally:
            watcher.stop()


async def test_stop_joins_the_observer_thread(tmp_path):
    paths = make_paths(tmp_path)
    before = set(threading.enumerate())
    watcher = MemoryWatcher.for_paths(paths, [])
    watcher.start()
    assert watcher.running
    started = set(threading.enumerate()) - before
    assert started, "the observer runs in its own thread"
    watcher.stop()
    assert not watcher.running
    assert not any(thread.is_alive() for thread in started)
    watcher.stop()  # stopping twice is harmless


def test_watchdog_is_imported_only_when_watching_starts():
    code = (
        "import sys\n"
        "import anton_tui.tui.watchers, anton_tui.tui.widgets.inspector\n"
        "assert 'watchdog' not in sys.modules, 'imported too early'\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


async def test_the_watcher_thread_reads_no_widget(monkeypatch, tmp_path: Path) -> None:
    """The app finds the widgets the watcher tells (the inspector) on the event loop, before the watcher's thread
    starts: a widget read off the loop can see the widget tree half changed."""
    from textual.dom import DOMNode

    from anton_tui.tui.widgets.inspector import InspectorPane

    from .app_support import ScriptedSession, make_settings, scripted_app

    loop_thread = threading.current_thread()
    off_loop: list[str] = []
    for name in ("query", "query_one", "query_children", "query_exactly_one"):
        original = getattr(DOMNode, name)

        def spy(self, *args, _original=original, _name=name, **kwargs):
            if threading.current_thread() is not loop_thread:
                off_loop.append(f"{type(self).__name__}.{_name}{args} in {threading.current_thread().name}")
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(DOMNode, name, spy)
    app = scripted_app(make_settings(), ScriptedSession([]), inspector=True, watch_files=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app._watcher is not None and app._watcher.running, timeout=10)
        await wait_until(pilot, lambda: all(app.screen.query_one(InspectorPane).tab(tab).loaded for tab in ("lessons",)))
        table = app.screen.query_one(InspectorPane).tab("lessons").table
        lessons = Path(app.runtime.settings.project_dir) / ".anton" / "memory" / "lessons.md"
        lessons.parent.mkdir(parents=True, exist_ok=True)
        lessons.write_text("# Lessons\n- Written by another program <!-- ts:2026-11-22 -->\n", encoding="utf-8")
        await wait_until(pilot, lambda: "Written by another program" in column(table, 2), timeout=5)
    assert off_loop == [], "widgets read off the event loop"
