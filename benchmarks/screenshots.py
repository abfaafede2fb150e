"""Regenerates the pictures in `screenshots/`: the real app at 120x40, driven headless through the recorded demo.

Run with ``make screenshots`` (``python -m benchmarks.screenshots``). Each picture is an SVG written by Textual's
`export_screenshot`; when `rsvg-convert` is installed (Debian: librsvg2-bin) a PNG of each is written too.

What would change from run to run is pinned, so unchanged screens give identical files: the version string, the
workspace shown in the header (the demo runs under a throw-away folder that stands in for the home folder, so the
header reads `~/anton-demo/project`), the wall clock (frozen at FROZEN_AT wherever the app stamps a date or a time),
and cursor blinking. Durations measured while the demo's code runs (a tool call's "0.1s") are real and may differ
by a tenth of a second between runs.

The mid-turn picture is taken at a fixed point of the recorded turn: the screen is handed no further engine events
after the third cell reports "summed 12 of 18 rows" until the picture is saved (the engine keeps working; its
events wait in order). The inspector shows the memory files as they are, so its counts in that picture depend on how
far the engine's writes got and may differ between runs. The memory-confirmation picture shows the copilot dialog
for three memories built here.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "screenshots"
SIZE = (120, 40)
VERSION = "0.1.0"
FROZEN_AT = dt.datetime(2026, 3, 14, 9, 30, tzinfo=dt.timezone.utc)
MID_TURN_PROGRESS = "summed 12 of 18 rows"
INSPECTOR_TABS = ("rules", "lessons", "profile", "skills", "acc", "episodes")
EPISODE_QUERY = "revenue"

# Modules that read the wall clock for something they show or store, and the name they know `datetime` by.
CLOCK_READERS = {
    "anton_tui.memory.engrams.engram": "dt",
    "anton_tui.memory.engrams.hippocampus": "dt",
    "anton_tui.memory.episodes.store": "datetime",
    "anton_tui.memory.skills.store": "datetime",
    "anton_tui.tui.widgets.inspector.acc_feed": "datetime",
}


# ---- a fixed clock ---------------------------------------------------------------------------------------------


class _AnyDatetime(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, dt.datetime)


class FrozenDatetime(dt.datetime, metaclass=_AnyDatetime):
    """`datetime` whose `now()` is always FROZEN_AT (naive when no zone is asked for, like the real one)."""

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:  # type: ignore[override]
        return FROZEN_AT.astimezone(tz) if tz is not None else FROZEN_AT.replace(tzinfo=None)

    @classmethod
    def utcnow(cls) -> dt.datetime:  # type: ignore[override]
        return FROZEN_AT.replace(tzinfo=None)


class _FrozenDatetimeModule:
    """The `datetime` module as seen by code that writes `dt.datetime.now()`."""

    datetime = FrozenDatetime

    def __getattr__(self, name: str) -> Any:
        return getattr(dt, name)


@contextmanager
def frozen_clock() -> Iterator[None]:
    with ExitStack() as stack:
        for module_name, attribute in CLOCK_READERS.items():
            module = import_module(module_name)
            replacement = _FrozenDatetimeModule() if attribute == "dt" else FrozenDatetime
            stack.enter_context(mock.patch.object(module, attribute, replacement))
        yield


# ---- taking pictures --------------------------------------------------------------------------------------------


class Camera:
    """Waits for the screen to stop changing, checks it shows no error, and saves it as `screenshots/<name>.svg`."""

    def __init__(self, pilot: Any) -> None:
        self.pilot = pilot
        self.app = pilot.app
        self.saved: list[Path] = []

    async def settle(self, quiet: float = 0.6, timeout: float = 20.0) -> str:
        """Let the app run until the picture has not changed for `quiet` seconds; returns that picture."""
        deadline = time.monotonic() + timeout
        picture, since = "", time.monotonic()
        while True:
            await self.pilot.pause(0.1)
            self._steady_cursors()
            current = self.app.export_screenshot(title="anton-tui")
            if current != picture:
                picture, since = current, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return picture
            if time.monotonic() > deadline:
                raise RuntimeError("the screen kept changing; no stable picture to take")

    async def wait_for(self, condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            await self.pilot.pause(0.05)

    def _steady_cursors(self) -> None:
        from textual.widgets import Input, TextArea

        for widget in self.app.screen.query("Input, TextArea"):
            if isinstance(widget, (Input, TextArea)) and widget.cursor_blink:
                widget.cursor_blink = False

    async def shoot(self, name: str, caption: str) -> None:
        picture = await self.settle()
        toasts = [str(toast.render()) for toast in self.app.screen.query("Toast")]
        if toasts:
            raise RuntimeError(f"{name}: a notification is on screen: {toasts}")
        path = OUT / f"{name}.svg"
        path.write_text(picture, encoding="utf-8")
        self.saved.append(path)
        print(f"{path.relative_to(REPO)}: {caption}", flush=True)


def screen_text(app: Any) -> str:
    from tests.tui.screen_reader import screen_text as read

    return read(app)


# ---- the demo --------------------------------------------------------------------------------------------------


def build_pinned_demo_app(folder: Path) -> Any:
    """The app on the recorded demo, as `anton-tui --demo` builds it, with the demo's throw-away home and project in
    `folder` instead of a random temporary folder."""
    from anton_tui.runtime import RuntimeStarter
    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp

    folder.mkdir(parents=True, exist_ok=True)
    layers = read_env_layers(folder, environ={"ANTON_HOME": str(folder / "user-home")})
    with mock.patch("tempfile.mkdtemp", return_value=str(folder)):
        runtime = RuntimeStarter(layers, demo=True).build()
    return AntonApp(runtime, cursor_blink=False, version=VERSION)


def hold_at(session: Any, is_the_moment: Callable[[Any], bool]) -> tuple[asyncio.Event, asyncio.Event]:
    """Make the session's turns stop handing events to the screen after the first event `is_the_moment` accepts,
    until the returned `release` event is set. The engine keeps working meanwhile; its events wait in order."""
    reached, release = asyncio.Event(), asyncio.Event()
    real_turn = session.turn

    async def held_turn(text: str):
        async for event in real_turn(text):
            yield event
            if not reached.is_set() and is_the_moment(event):
                reached.set()
                await release.wait()

    session.turn = held_turn
    return reached, release


def is_mid_turn_moment(event: Any) -> bool:
    from anton_tui.agent.events import ScratchpadActivity
    from anton_tui.scratchpad.events import CellProgress

    return (
        isinstance(event, ScratchpadActivity)
        and isinstance(event.event, CellProgress)
        and event.event.message == MID_TURN_PROGRESS
    )


def held_back_engrams() -> tuple[Any, ...]:
    from anton_tui.memory.engrams.engram import Engram

    return (
        Engram("Revenue figures in this project are monthly totals per region", "lesson", "project", "medium",
               "sales data", "llm"),
        Engram("Show money with thousands separators and two decimals", "always", "global", "high", None, "user"),
        Engram("Never sum revenue across scratchpads; load and total the data in one", "never", "project", "medium",
               None, "consolidation"),
    )  # fmt: skip


async def demo_pictures(folder: Path) -> list[Path]:
    from anton_tui.agent.events import MemoryConfirmationNeeded
    from anton_tui.tui.messages import SessionEventMessage
    from anton_tui.tui.screens.confirm_memory import ConfirmMemoryScreen
    from anton_tui.tui.screens.help import HelpScreen
    from anton_tui.tui.screens.skills import NodeRef, SkillsScreen
    from anton_tui.tui.widgets.header import AntonHeader

    app = build_pinned_demo_app(folder / "anton-demo")
    reached, release = hold_at(app.runtime.session, is_mid_turn_moment)
    async with app.run_test(size=SIZE) as pilot:
        camera = Camera(pilot)
        main = app.screen
        await camera.settle()
        await pilot.press("enter")  # sends the recorded first question, which the demo put in the prompt
        await camera.wait_for(reached.is_set, "the demo's third cell to report progress")
        await camera.wait_for(lambda: MID_TURN_PROGRESS in screen_text(app), "the progress line on screen")
        await main.chat.stream.show_held()  # all the answer text so far, also what waited while the demo typed
        await camera.shoot("main-mid-turn", "the main screen mid-turn: an answer being written, a cell running")

        release.set()
        await camera.wait_for(lambda: not main.busy, "the end of the demo's first turn", timeout=60)
        await camera.wait_for(lambda: "Remembered (cerebellum)" in screen_text(app), "the cerebellum's lesson")
        inspector = main.inspector
        await camera.wait_for(lambda: inspector.tab("rules").table.row_count >= 2, "the rules written in the turn")
        await camera.shoot("main-after-turn", "after the first turn: the answer, self-check notices, the Rules tab")

        inspector.tab("episodes").search(EPISODE_QUERY)
        inspector.show_tab("rules")

        def in_inspector() -> bool:
            return app.focused is not None and inspector in app.focused.ancestors

        await camera.wait_for(in_inspector, "the inspector focused")
        main.action_toggle_maximize()  # F5: the focused pane fills the screen
        for tab_id in INSPECTOR_TABS:
            inspector.show_tab(tab_id)
            await camera.shoot(f"inspector-{tab_id}", f"the inspector's {tab_id} tab, maximised (F5)")
        main.action_toggle_maximize()
        inspector.show_tab("rules")
        main.action_focus_prompt()

        await pilot.press("f1")
        await camera.wait_for(lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await camera.shoot("help", "the help screen (F1)")
        await pilot.press("f1")
        await camera.wait_for(lambda: app.screen is main, "the main screen again")

        app.open_skills()
        await camera.wait_for(lambda: isinstance(app.screen, SkillsScreen) and app.screen.is_mounted, "skills screen")
        skills_screen = app.screen
        await camera.settle()
        procedure = NodeRef("csv-summary", "SKILL.md", "procedure")
        skills_screen.refresh_tree(select=procedure)
        skills_screen.open(procedure)
        await camera.shoot("skills-screen", "the skills screen with a skill's procedure open")
        app.pop_screen()
        await camera.wait_for(lambda: app.screen is main, "the main screen again")

        runtime = app.runtime
        main.query_one(AntonHeader).set_model(runtime.provider_label, str(runtime.settings.planning_model), "copilot")
        question = MemoryConfirmationNeeded(held_back_engrams(), asyncio.get_running_loop().create_future())
        main.post_message(SessionEventMessage(question))
        await camera.settle()
        main.reviews.open()  # as Ctrl+Y does: the review waits above the prompt while the focus is elsewhere
        await camera.wait_for(lambda: isinstance(app.screen, ConfirmMemoryScreen), "the memory confirmation")
        await camera.shoot("confirm-memory", "copilot mode asking which memories to keep")
        await pilot.press("d")
        await camera.wait_for(question.future.done, "the answer to the memory confirmation")
        app.exit()
    return camera.saved


async def setup_picture(folder: Path) -> list[Path]:
    """The setup screen as a first run shows it: a new project, no API key yet."""
    from anton_tui.runtime import RuntimeStarter
    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.screens.setup import SetupScreen

    home, project = folder / ".anton", folder / "sales-analysis"
    project.mkdir(parents=True)
    layers = read_env_layers(project, environ={"ANTON_HOME": str(home)})
    app = AntonApp(RuntimeStarter(layers), cursor_blink=False, version=VERSION)
    async with app.run_test(size=SIZE) as pilot:
        camera = Camera(pilot)
        await camera.wait_for(lambda: isinstance(app.screen, SetupScreen), "the first-run setup screen")
        await camera.shoot("setup", "the setup screen on a first run")
        app.exit()
    return camera.saved


# ---- files -----------------------------------------------------------------------------------------------------


def convert_to_png(svgs: list[Path]) -> int:
    """PNG copies with rsvg-convert when it is installed; returns how many were written."""
    converter = shutil.which("rsvg-convert")
    if converter is None:
        print("rsvg-convert not found (Debian: apt-get install librsvg2-bin): SVGs only", flush=True)
        return 0
    for svg in svgs:
        # librsvg drops a space at the start of a text run unless told to keep white space as written.
        text = svg.read_text(encoding="utf-8").replace("<text ", '<text xml:space="preserve" ')
        command = [converter, "--zoom", "1.5", "-o", str(svg.with_suffix(".png"))]
        subprocess.run(command, input=text.encode("utf-8"), check=True)
    return len(svgs)


@contextmanager
def stand_in_home(folder: Path) -> Iterator[None]:
    """Point HOME at `folder` for this process, so paths under it are shown as `~/...`."""
    previous = os.environ.get("HOME")
    os.environ["HOME"] = str(folder)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = previous


async def take_all(folder: Path) -> list[Path]:
    saved = await demo_pictures(folder)
    saved += await setup_picture(folder)
    return saved


def main() -> int:
    OUT.mkdir(exist_ok=True)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="anton-screens-") as scratch:
        folder = Path(scratch)
        with stand_in_home(folder), frozen_clock():
            saved = asyncio.run(take_all(folder))
    pngs = convert_to_png(saved)
    print(f"{len(saved)} SVG and {pngs} PNG pictures in {OUT.relative_to(REPO)}/ ({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
