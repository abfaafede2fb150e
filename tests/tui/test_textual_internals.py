"""The private parts of Textual the app relies on (`anton_tui/tui/textual_internals.py`) still exist and behave as
relied upon; a Textual release that changes one fails here with a message naming it. And no other module of the app
uses a private Textual name."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Static, TextArea

from anton_tui.tui.textual_internals import FrameHook, PaintFirstScreen, batching

from .screen_reader import screen_text

REPO = Path(__file__).resolve().parents[2]
PRIVATE_TEXTUAL = re.compile(
    r"textual\._|_compositor|_dirty_widgets|_batch_count|_on_update|_on_timer_update|_update_from_block"
)


def relied_on(owner: object, name: str, *, params: tuple[str, ...] | None = None) -> None:
    """`owner.name` exists (and, when given, takes these parameters): fails naming the internal otherwise."""
    label = f"{getattr(owner, '__name__', type(owner).__name__)}.{name}"
    assert hasattr(owner, name), f"Textual changed: {label} is gone (see anton_tui/tui/textual_internals.py)"
    if params is not None:
        found = tuple(inspect.signature(getattr(owner, name)).parameters)
        assert found[: len(params)] == params, f"Textual changed: {label} now takes {found}, not {params}"


# --- the names and signatures ---------------------------------------------------------------------------------------


def test_the_screens_update_path_is_as_paint_first_relies_on() -> None:
    relied_on(Screen, "_on_update", params=("self", "message"))
    relied_on(Screen, "_on_timer_update", params=("self",))
    relied_on(Screen, "_compositor_refresh", params=("self",))
    screen = Screen()
    for name, kind in (("_dirty_widgets", set), ("_layout_required", bool)):
        relied_on(screen, name)
        assert isinstance(getattr(screen, name), kind), f"Textual changed: Screen.{name} is no longer a {kind}"
    relied_on(screen, "_compositor")
    relied_on(type(screen._compositor), "update_widgets", params=("self", "widgets"))
    relied_on(type(screen._compositor), "__contains__", params=("self", "widget"))


def test_the_app_internals_are_as_relied_on() -> None:
    app = App()
    relied_on(app, "_batch_count")
    assert app._batch_count == 0 and not batching(app), "Textual changed: App._batch_count does not start at 0"
    with app.batch_update():
        assert batching(app), "Textual changed: App.batch_update() no longer counts in App._batch_count"
    assert not batching(app)
    relied_on(App, "_display", params=("self", "screen", "renderable"))
    relied_on(app, "_running")


def test_the_data_table_internals_are_as_the_bulk_insert_relies_on() -> None:
    # What they must do together is tested in test_inspector_lazy.py (rows added in one go behave like add_row's).
    table = DataTable()
    for name in ("_row_locations", "_data", "rows", "_new_rows", "_require_update_dimensions", "_update_count"):
        relied_on(table, name)
    relied_on(DataTable, "_highlight_cursor", params=("self",))
    relied_on(DataTable, "_update_dimensions", params=("self", "new_rows"))
    source = inspect.getsource(DataTable.add_row)
    for name in ("_row_locations", "_data", "self.rows", "_new_rows", "_require_update_dimensions", "_update_count"):
        assert name in source, f"Textual changed: DataTable.add_row no longer keeps {name}; update add_keyed_rows"


def test_no_other_module_uses_a_private_textual_name() -> None:
    allowed = {REPO / "anton_tui/tui/textual_internals.py", Path(__file__).resolve()}
    offenders = []
    for folder in ("anton_tui", "benchmarks", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.resolve() in allowed:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if PRIVATE_TEXTUAL.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "private Textual names outside textual_internals.py:\n" + "\n".join(offenders)


# --- how they behave ------------------------------------------------------------------------------------------------


class PaintFirstApp(FrameHook, App[None]):
    """A prompt painted first, and a static that grows (so a layout is due) in the same step as a keystroke."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[tuple[str, int]] = []  # (screen text, height of the static) at each frame written

    def get_default_screen(self) -> Screen:
        return PromptScreen()

    def frame_written(self, screen: Screen, renderable: object) -> None:
        self.frames.append((screen_text(self), self.screen.query_one(Static).outer_size.height))


class PromptScreen(PaintFirstScreen):
    def __init__(self) -> None:
        super().__init__()
        self.painted_first = 0

    def compose(self) -> ComposeResult:
        yield Static("one line", id="growing")
        yield TextArea(id="prompt")

    def on_mount(self) -> None:
        self.paint_first = self.query_one(TextArea)

    def first_painted(self) -> None:
        self.painted_first += 1


async def test_a_keystroke_is_painted_before_a_layout_that_is_due() -> None:
    app = PaintFirstApp()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        screen = app.screen
        app.frames.clear()
        screen.painted_first = 0
        screen.query_one(Static).update("one line\ntwo lines\nthree lines")  # needs a layout
        screen.query_one(TextArea).insert("quick")
        await pilot.pause()
        await pilot.pause()
        assert screen.painted_first > 0, "the prompt was not painted ahead of the frame"
        first = next((height for text, height in app.frames if "quick" in text), None)
        assert first == 1, "the keystroke was shown only after the layout the static needed"
        assert "three lines" in screen_text(app), "the layout still came, at the next tick"


async def test_frames_written_are_reported_outside_batch_updates() -> None:
    app = PaintFirstApp()
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        before = len(app.frames)
        with app.batch_update():
            app.screen.query_one(Static).update("changed")
            await pilot.pause()
            assert len(app.frames) == before, "a frame was reported inside batch_update()"
        await pilot.pause()
        assert len(app.frames) > before and "changed" in app.frames[-1][0]
