"""Starts the app headless in a fresh interpreter and says, on stdout, the moment its first frame is painted.

`bench_tui` runs it as a subprocess, so the time it measures includes starting Python and every import:

    python -m benchmarks.tui_startup_probe anton   # the real app, prepared as `run_app` prepares it
    python -m benchmarks.tui_startup_probe bare    # a plain Textual app with the same widgets and no engine

It prints `painted` when the first frame of the main screen has been rendered and exits right after. With
`--until-rules` (anton only) it first waits for the frame whose inspector lists rules (the real rows of the memory
files, not a placeholder), and prints `rules` then. With `--until-loaded LESSONS SKILLS` (anton only) it first waits
for the frame that shows the inspector's Lessons and Skills tables filled with that many rows, and prints `loaded`
then (lessons past a megabyte are read when their tab is shown: the probe opens it once the runtime is there). With
`--hold SECONDS` (anton only) it keeps running until that many seconds after the process started, then prints
`rss MB` (its resident memory) and exits.

A frame counts as painted when Textual hands the compositor's update to the terminal driver (`FrameHook`), the
point where a real terminal would be written to. Headless, Textual skips turning that update into escape codes; the probe does that
work itself, so a frame costs what it would on a terminal (only the write to the terminal is left out).
"""

from __future__ import annotations

import sys
import time
from typing import Any

STARTED = time.time()

SIZE = (120, 40)


def painting(app_class: type) -> type:
    """A subclass of `app_class` that renders every frame to terminal codes and calls `self.frame_painted()`."""
    from anton_tui.tui.textual_internals import FrameHook

    class Painting(FrameHook, app_class):  # type: ignore[misc, valid-type]
        def frame_written(self, screen: Any, renderable: Any) -> None:
            renderable.render_segments(self.console)
            self.frame_painted(screen)

        def frame_painted(self, screen: Any) -> None:
            raise NotImplementedError

    return Painting


def say(word: str) -> None:
    sys.stdout.write(word + "\n")
    sys.stdout.flush()


def run_bare() -> None:
    from textual.app import App, ComposeResult
    from textual.containers import Horizontal, Vertical, VerticalScroll
    from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane, TextArea

    class BareApp(App[None]):
        CSS = """
        #body { height: 1fr; }
        #conversation { width: 60%; }
        #chat { height: 1fr; }
        #prompt { height: auto; max-height: 8; }
        #side { width: 40%; }
        #scratchpad, #inspector { height: 1fr; }
        """

        def compose(self) -> ComposeResult:
            yield Header()
            with Horizontal(id="body"):
                with Vertical(id="conversation"):
                    yield VerticalScroll(Static("Welcome"), id="chat")
                    yield TextArea(id="prompt", compact=True, placeholder="Ask…")
                with Vertical(id="side"):
                    with TabbedContent(id="scratchpad"):
                        with TabPane("main"):
                            yield VerticalScroll(Static("No cells yet"))
                    with TabbedContent(id="inspector"):
                        for title in ("Rules", "Lessons", "Profile", "Skills", "ACC", "Episodes"):
                            with TabPane(title):
                                yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Footer()

        def on_mount(self) -> None:
            for table in self.query(DataTable):
                table.add_columns("Scope", "Text", "Date")
            self.query_one("#prompt").focus()

    class Probe(painting(BareApp)):  # type: ignore[misc]
        said = False

        def frame_painted(self, screen: Any) -> None:
            if not self.said:
                self.said = True
                say("painted")
                self.exit()

    Probe().run(headless=True, size=SIZE)


def resident_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_anton(until_loaded: tuple[int, int] | None, hold: float | None = None, until_rules: bool = False) -> None:
    from anton_tui import gc_policy

    gc_policy.hold()  # as `anton_tui.cli.main` does before anything else
    from textual.css.query import NoMatches

    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.launch import make_app
    from anton_tui.tui.screens.main import MainScreen

    layers = read_env_layers()

    def shown_tab(screen: Any, tab_id: str) -> Any:
        """The inspector's tab, or None while there is none: the empty frame before the runtime, the moment the
        inspector takes its place, or a tab the first frame's inspector does not have yet (it has Rules only)."""
        try:
            tab = getattr(screen.inspector, "tab", None)  # (the empty frame has none)
            return None if tab is None else tab(tab_id)
        except NoMatches:
            return None

    class Probe(painting(AntonApp)):  # type: ignore[misc]
        said = done = said_rules = opened_lessons = False

        def frame_painted(self, screen: Any) -> None:
            if not isinstance(screen, MainScreen) or self.done:
                return
            if until_rules and not self.said_rules:
                rules = shown_tab(screen, "rules")
                if rules is not None and rules.table.row_count:
                    self.said_rules = True
                    say("rules")
            if not self.said:
                self.said = True
                say("painted")
                if hold is not None:
                    self.done = True
                    self.set_timer(max(hold - (time.time() - STARTED), 0.0), self.report_rss)
                    return
            if until_rules and not self.said_rules:
                return
            if until_loaded is not None:
                lessons_tab, skills_tab = shown_tab(screen, "lessons"), shown_tab(screen, "skills")
                if lessons_tab is None or skills_tab is None:
                    return
                if not lessons_tab.load_started and self.runtime is not None and not self.opened_lessons:
                    self.opened_lessons = True  # big lessons are read when their tab is first shown: open it
                    screen.inspector.show_tab("lessons")
                lessons, skills = until_loaded
                if lessons_tab.table.total_rows < lessons or skills_tab.table.total_rows < skills:
                    return
                say("loaded")
            self.done = True
            self.exit()

        def report_rss(self) -> None:
            say(f"rss {resident_mb():.1f}")
            self.exit()

    make_app(layers, app_class=Probe).run(headless=True, size=SIZE)  # what `run_app` runs, as the probe


def main(argv: list[str]) -> None:
    if argv[:1] == ["bare"]:
        run_bare()
    elif argv[:1] == ["anton"]:
        until = (int(argv[2]), int(argv[3])) if argv[1:2] == ["--until-loaded"] else None
        hold = float(argv[2]) if argv[1:2] == ["--hold"] else None
        run_anton(until, hold, until_rules=argv[1:2] == ["--until-rules"])
    else:
        raise SystemExit(
            "usage: python -m benchmarks.tui_startup_probe anton [--until-rules | --until-loaded LESSONS SKILLS | "
            "--hold SECONDS] | bare"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
