"""The private parts of Textual the app relies on (`anton_tui/tui/textual_internals.py`) still exist and behave as
relied upon; a Textual release that changes one fails here with a message naming it. And no other module of the app
uses a private Textual name."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Static, TextArea

from anton_tui.tui.textual_internals import (
    FrameHook,
    PaintFirstAfterBatches,
    PaintFirstScreen,
    batching,
    write_to_terminal,
)

from .screen_reader import screen_text

REPO = Path(__file__).resolve().parents[2]
ALLOWED = {REPO / "anton_tui/tui/textual_internals.py", Path(__file__).resolve()}
NAME_CALLS = {"getattr", "hasattr", "setattr", "delattr", "getattr_static"}  # (object, "name", ...) calls


def relied_on(owner: object, name: str, *, params: tuple[str, ...] | None = None) -> None:
    """`owner.name` exists (and, when given, takes these parameters): fails naming the internal otherwise."""
    label = f"{getattr(owner, '__name__', type(owner).__name__)}.{name}"
    assert hasattr(owner, name), f"Textual changed: {label} is gone (see anton_tui/tui/textual_internals.py)"
    if params is not None:
        found = tuple(inspect.signature(getattr(owner, name)).parameters)
        assert found[: len(params)] == params, f"Textual changed: {label} now takes {found}, not {params}"


# --- finding private names ------------------------------------------------------------------------------------------


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def class_names(cls: ast.ClassDef) -> set[str]:
    """The underscore names a class defines: in its body, and stored on `self` or `cls` by its methods."""
    names: set[str] = set()
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(item.name)
            nodes = [node for node in ast.walk(item) if isinstance(node, ast.Attribute)]
            names.update(node.attr for node in nodes if isinstance(node.ctx, ast.Store) and owner_is_self(node))
        elif not isinstance(item, ast.ClassDef):
            names.update(node.id for node in ast.walk(item) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
    return {name for name in names if is_private(name)}


def owner_is_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")


def module_names(tree: ast.Module) -> set[str]:
    """Every underscore name a module defines as something to reach from outside: its own top-level names, its
    classes' names and what their bodies define, and any attribute it stores on an object."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(item.name)
                else:
                    names.update(sub.id for sub in ast.walk(item) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif not isinstance(node, ast.ClassDef):
            names.update(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store))
    return {name for name in names if is_private(name)}


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def textual_private() -> tuple[frozenset[str], frozenset[str], dict[tuple[str, str], frozenset[str]]]:
    """What Textual, as installed, defines as private: the underscore names of its modules and classes (and what its
    methods store on objects), its underscore module names, and the underscore names of each class by (module,
    qualified name)."""
    import textual

    root = Path(textual.__file__).parent
    names: set[str] = set()
    modules: set[str] = set()
    by_class: dict[tuple[str, str], frozenset[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root.parent)
        parts = module.split(".")
        modules.update(".".join(parts[: n + 1]) for n, part in enumerate(parts) if is_private(part))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names |= module_names(tree)
        for qualname, cls in classes_of(tree):
            by_class[(module, qualname)] = frozenset(class_names(cls))
    return frozenset(names), frozenset(modules), by_class


def classes_of(tree: ast.Module) -> Iterator[tuple[str, ast.ClassDef]]:
    """The classes a module defines at its top level and inside them, by qualified name."""
    pending: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    while pending:
        prefix, body = pending.pop()
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield prefix + node.name, node
                pending.append((f"{prefix}{node.name}.", node.body))


def inherited_from_textual(cls: type) -> set[str]:
    """The private names that the Textual classes `cls` inherits from define."""
    _, _, by_class = textual_private()
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.split(".")[0] == "textual":
            names |= by_class.get((base.__module__, base.__qualname__), frozenset())
            names |= {name for name in vars(base) if is_private(name)}
    return names


def private_textual_uses(folders: Iterable[Path], import_root: Path = REPO) -> list[str]:
    """Each place in the modules under `folders` that uses a private Textual name.

    Imports of Textual's private modules or names are found by name. An attribute (`x._name`, or
    `getattr(x, "_name")`) counts when Textual defines that name and the code checked does not. On a class of the
    code that inherits a Textual class, `self._name` counts also when the code defines the name itself, if the
    Textual classes it inherits define it too: it shadows (or uses) Textual's. A name both define, reached on an
    object whose class is not known here, is taken as the code's own."""
    textual_names, textual_modules, _ = textual_private()
    paths = [path for folder in folders for path in sorted(folder.rglob("*.py")) if path.resolve() not in ALLOWED]
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in paths}
    own = set().union(*(module_names(tree) for tree in trees.values()))
    foreign = textual_names - own

    def private_module(name: str) -> bool:
        parts = name.split(".") if name.startswith("textual.") else []
        return any(".".join(parts[: n + 1]) in textual_modules for n in range(1, len(parts)))

    found: list[str] = []
    for path, tree in trees.items():
        where = path.relative_to(import_root)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module is not None and node.module.split(".")[0] == "textual":
                if private_module(node.module):
                    found.append(f"{where}:{node.lineno}: {node.module}")
                found += [f"{where}:{node.lineno}: from {node.module} import {a.name}" for a in node.names if is_private(a.name)]
            elif isinstance(node, ast.Import):
                found += [f"{where}:{node.lineno}: {a.name}" for a in node.names if private_module(a.name)]
            elif isinstance(node, ast.Attribute) and node.attr in foreign:
                found.append(f"{where}:{node.lineno}: .{node.attr}")
            elif isinstance(node, ast.Call) and len(node.args) >= 2 and called_name(node.func) in NAME_CALLS:
                name = node.args[1]
                if isinstance(name, ast.Constant) and name.value in foreign:
                    found.append(f"{where}:{node.lineno}: .{name.value}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and private_module(node.value):
                found.append(f"{where}:{node.lineno}: {node.value}")
        if any(True for _ in classes_of(tree)) and path.name != "__main__.py":
            found += shadowed_names(path, tree, import_root)
    return found


def called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def shadowed_names(path: Path, tree: ast.Module, import_root: Path) -> list[str]:
    """`self._name` in the module's classes that inherit from Textual, where a Textual class they inherit defines
    `_name`."""
    module = importlib.import_module(module_name(path, import_root))
    found = []
    for qualname, node in classes_of(tree):
        cls: object = module
        for part in qualname.split("."):
            cls = getattr(cls, part)
        assert isinstance(cls, type), f"{qualname} of {module.__name__} is not a class"
        inherited = inherited_from_textual(cls)
        if not inherited:
            continue
        where = f"{path.relative_to(import_root)}:{{}}: {qualname}: {{}}"
        for item in node.body:
            if isinstance(item, ast.ClassDef):
                continue  # checked on its own
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if item.name in inherited:
                    found.append(where.format(item.lineno, f"def {item.name}"))
                uses = [sub for sub in ast.walk(item) if isinstance(sub, ast.Attribute) and owner_is_self(sub)]
                found += [where.format(sub.lineno, f"self.{sub.attr}") for sub in uses if sub.attr in inherited]
            else:
                stored = [sub for sub in ast.walk(item) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)]
                found += [where.format(sub.lineno, sub.id) for sub in stored if sub.id in inherited]
    return found


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
    relied_on(App, "_end_batch", params=("self",))
    assert "self._end_batch()" in inspect.getsource(App.batch_update), (
        "Textual changed: App.batch_update() no longer ends through App._end_batch (PaintFirstAfterBatches)"
    )
    relied_on(App, "_display", params=("self", "screen", "renderable"))
    relied_on(app, "_running")
    relied_on(app, "_driver")
    assert app._driver is None, "Textual changed: App._driver is not None before the app runs"


async def test_the_driver_is_where_write_to_terminal_finds_it() -> None:
    from textual.driver import Driver

    relied_on(Driver, "write", params=("self", "data"))
    relied_on(Driver, "flush", params=("self",))
    app = App()
    async with app.run_test():
        assert isinstance(app._driver, Driver), "Textual changed: a running app has no App._driver"
        write_to_terminal(app, "\x1b]9;test\x1b\\")  # headless: nothing is written, nothing fails


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
    offenders = private_textual_uses([REPO / folder for folder in ("anton_tui", "tests", "benchmarks")])
    assert not offenders, "private Textual names outside textual_internals.py:\n" + "\n".join(offenders)


def test_the_private_name_check_finds_each_kind_of_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "offender.py"
    module.write_text(
        "from textual import _compositor\n"
        "from textual._two_way_dict import TwoWayDict\n"
        "import textual._loop\n"
        "from textual.app import App\n"
        "from textual.widgets import Static\n"
        "\n"
        "def notes(app: App) -> list:\n"
        "    return list(app._notifications)\n"
        "\n"
        "def driver(app: App) -> object:\n"
        "    return getattr(app, '_driver')\n"
        "\n"
        "class Shadow(Static):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__()\n"
        "        self._content_width_cache = (0, 0)\n"
        "        self._own = 1\n"
        "\n"
        "class Plain:\n"
        "    def __init__(self) -> None:\n"
        "        self._content_width_cache = 0\n",
        encoding="utf-8",
    )
    found = "\n".join(private_textual_uses([tmp_path], import_root=tmp_path))
    for expected in (
        "offender.py:1: from textual import _compositor",
        "offender.py:2: textual._two_way_dict",
        "offender.py:3: textual._loop",
        "offender.py:8: ._notifications",
        "offender.py:11: ._driver",
        "offender.py:16: Shadow: self._content_width_cache",
    ):
        assert expected in found, f"not found: {expected}\n{found}"
    assert "_own" not in found and "offender.py:21" not in found, "a class that is not Textual's keeps its names"


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


class BatchPaintApp(PaintFirstAfterBatches, PaintFirstApp):
    """`PaintFirstApp`, told when a batch update ends, as the app is."""


async def test_a_keystroke_made_during_a_batch_update_is_painted_as_the_batch_ends() -> None:
    app = BatchPaintApp()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.painted_first = 0
        with app.batch_update():  # as a streaming Markdown appends its text, one batch after another
            screen.query_one(TextArea).insert("quick")
            await pilot.pause()
            assert screen.painted_first == 0 and not any("quick" in text for text, _ in app.frames)
        assert screen.painted_first == 1, "the keystroke waited for the screen's next tick after the batch"
        assert "quick" in app.frames[-1][0]


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
