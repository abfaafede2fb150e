"""A big memory home shows at once: the first frame already lists the first rules of the files, the same rows the
full listing starts with, while the runtime is still being built; then the full lists take their place without the
rows in view moving, and the other tabs fill in."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from textual.widgets import TabbedContent

from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.runtime import Runtime, RuntimeStarter
from anton_tui.runtime.memory_reads import entries_of
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.textual_internals import FrameHook
from anton_tui.tui.widgets.inspector.pane import InspectorPane

from .e2e_support import SIZE, main_screen, save_global_env, started
from .inspector_fixtures import column, wait_until


def seed(home: Path, project: Path) -> None:
    """2,000 global rules whose file begins with When and Never sections and has a second Always section far down,
    400 project rules, 5,000 lessons: the listing's first rows are not simply the file's first lines."""
    (home / "memory").mkdir(parents=True, exist_ok=True)
    (project / ".anton" / "memory").mkdir(parents=True, exist_ok=True)
    rules = ["# Rules", "## When"] + [f"- when case {n} <!-- ts:2026-01-02 -->" for n in range(600)]
    rules += ["## Always"] + [f"- always rule {n} <!-- confidence:high -->" for n in range(30)]
    rules += ["## Never"] + [f"- never do {n}" for n in range(1300)]
    rules += ["## Always"] + [f"- always rule {n} (later)" for n in range(70)]
    (home / "memory" / "rules.md").write_text("\n".join(rules) + "\n")
    (project / ".anton" / "memory" / "rules.md").write_text(
        "# Rules\n## Always\n" + "".join(f"- project rule {n}\n" for n in range(400))
    )
    (home / "memory" / "lessons.md").write_text("# Lessons\n" + "".join(f"- lesson {n}\n" for n in range(5000)))


def listing_texts(home: Path, project: Path) -> list[str]:
    """The Rules tab's texts, read as the full listing reads them (global, then the project's)."""
    scopes = [Hippocampus(home / "memory", scope="global"), Hippocampus(project / ".anton" / "memory")]
    return [entry.text for hc in scopes for entry in entries_of(hc, "rules")]


class FirstFrame(FrameHook, AntonApp):
    """Notes the Rules tab's texts and whether the runtime was there when the first frame was painted, and what the
    main screen's very first frame had where the inspector goes."""

    first: tuple[list[str], object] | None = None
    first_main_frame: str | None = None

    def frame_written(self, screen, renderable) -> None:
        inspector = screen.query("#inspector")
        if self.first_main_frame is None and inspector:
            self.first_main_frame = type(inspector.first()).__name__
        if self.first is None and inspector and isinstance(inspector.first(), InspectorPane):
            table = inspector.first().tab("rules").table
            self.first = (column(table, 2), self.runtime)


async def test_the_first_frame_lists_the_rules_the_full_listing_starts_with(fake_llm) -> None:
    save_global_env(fake_llm)
    home, project = Path(os.environ["ANTON_HOME"]), Path(os.environ["ANTON_PROJECT_DIR"])
    seed(home, project)
    expected = listing_texts(home, project)
    release = threading.Event()

    class SlowStarter(RuntimeStarter):
        def build(self) -> Runtime:
            release.wait(30)  # the runtime comes only once the test has looked at the first frame
            return super().build()

    app = FirstFrame(SlowStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.first is not None)
        shown, runtime = app.first
        assert runtime is None, "the rows were shown before the runtime was built"
        assert app.first_main_frame == "InspectorPane", "the rows are in the first frame, not in one after it"
        assert len(shown) >= 10 and shown == expected[: len(shown)]
        assert shown[:31] == [f"always rule {n}" for n in range(30)] + ["always rule 0 (later)"]
        pane = main_screen(app).inspector
        assert label(pane, "rules") == "Rules", "no count until the whole list is read"

        release.set()
        await started(pilot)
        rules = pane.tab("rules")
        await wait_until(pilot, lambda: label(pane, "rules") == f"Rules {len(expected)}", 10)
        assert pane.tab("rules").table.total_rows == len(expected)
        assert column(rules.table, 2)[: len(shown)] == shown, "the rows in view stay where they were"
        await wait_until(pilot, lambda: pane.tab("lessons").table.total_rows == 5000, 10)


def label(pane: InspectorPane, tab_id: str) -> str:
    return pane.query_one(TabbedContent).get_tab(f"inspector-{tab_id}").label.plain


async def test_the_runtime_is_built_once_the_first_rows_are_on_screen(fake_llm) -> None:
    """Building the runtime and drawing the first rows both want the one interpreter: the rows come first."""
    save_global_env(fake_llm)
    home, project = Path(os.environ["ANTON_HOME"]), Path(os.environ["ANTON_PROJECT_DIR"])
    seed(home, project)
    rows_on_screen_at_build: list[bool] = []

    class WatchedStarter(RuntimeStarter):
        def build(self) -> Runtime:
            rows_on_screen_at_build.append(app.first is not None)
            return super().build()

    app = FirstFrame(WatchedStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert rows_on_screen_at_build == [True]
        shown, runtime = app.first or ([], None)
        assert runtime is None and shown[:2] == ["always rule 0", "always rule 1"]


async def test_lessons_past_a_megabyte_are_read_when_their_tab_is_first_shown(fake_llm) -> None:
    """50,000 lessons hold some 15 MB: an app whose Lessons tab stays closed does without them. Their first rows show
    meanwhile, and opening the tab reads them all."""
    save_global_env(fake_llm)
    home, project = Path(os.environ["ANTON_HOME"]), Path(os.environ["ANTON_PROJECT_DIR"])
    seed(home, project)
    lessons = "".join(f"- lesson {n} about a data source and how to read it <!-- topic:io ts:2026-01-02 -->\n"
                      for n in range(13_000))  # fmt: skip
    (home / "memory" / "lessons.md").write_text("# Lessons\n" + lessons)
    assert (home / "memory" / "lessons.md").stat().st_size > 1 << 20
    app = FirstFrame(RuntimeStarter(read_env_layers()), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        pane = main_screen(app).inspector
        await wait_until(pilot, lambda: all(pane.tab(tab_id).loaded for tab_id in ("rules", "profile", "skills")), 10)
        await pilot.pause(0.3)
        tab = pane.tab("lessons")
        assert not tab.load_started and label(pane, "lessons") == "Lessons"
        assert column(tab.table, 2)[:2] == [
            "lesson 0 about a data source and how to read it",
            "lesson 1 about a data source and how to read it",
        ], "the first rows, read before the runtime, show meanwhile"

        pane.show_tab("lessons")
        await wait_until(pilot, lambda: tab.table.total_rows == 13_000, 10)
        await wait_until(pilot, lambda: label(pane, "lessons") == "Lessons 13000")


async def test_big_lessons_show_their_first_rows_when_the_runtime_came_first(tmp_path) -> None:
    """However the runtime and the first frame's tabs race, a Lessons tab left until it is shown has its first rows."""
    from textual.app import App

    from anton_tui.runtime.first_look import read_first_look

    from .inspector_fixtures import runtime_over, seeded_stores, settle

    stores = seeded_stores(tmp_path, episodes=False)
    lessons = "".join(f"- lesson {n} about a data source and how to read it\n" for n in range(20_000))
    stores.global_hc.lessons_path.write_text("# Lessons\n" + lessons)
    look = read_first_look([("global", stores.paths.global_memory), ("project", stores.paths.project_memory)], None)

    class Host(App):
        def compose(self):
            yield InspectorPane(runtime_over(stores), first_look=look, id="inspector")

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.query_one(InspectorPane)
        tab = pane.tab("lessons")
        assert not tab.load_started
        assert column(tab.table, 2)[:2] == [
            "lesson 0 about a data source and how to read it",
            "lesson 1 about a data source and how to read it",
        ]
        pane.show_tab("lessons")
        project_lessons = len(stores.project_hc.get_lessons())
        await wait_until(pilot, lambda: tab.table.total_rows == 20_000 + project_lessons, 10)
