"""The app shell: help screen, key bindings and the key map, pane layout keys, header, lazy start-up imports."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

from textual.binding import Binding
from textual.dom import DOMNode
from textual.widgets import Markdown

from anton_tui.agent.events import TurnFinished
from anton_tui.scratchpad.events import CellStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.screens.help import HelpScreen
from anton_tui.tui.screens.main import SIDE_WIDTH_DEFAULT, SIDE_WIDTH_STEP, MainScreen
from anton_tui.tui.widgets.chat import ChatView
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane

from .app_support import ScriptedSession, make_settings, notifications, scripted_app, screen_text, wait_until

SIZE = (120, 40)
OWN_MODULES = [
    "anton_tui.tui.app",
    "anton_tui.tui.screens.main",
    "anton_tui.tui.screens.help",
    "anton_tui.tui.widgets.chat",
    "anton_tui.tui.widgets.tool_block",
    "anton_tui.tui.widgets.prompt",
    "anton_tui.tui.widgets.scratchpad_pane",
    "anton_tui.tui.widgets.cell_view",
    "anton_tui.tui.widgets.header",
    "anton_tui.tui.widgets.inspector_placeholder",
]


def _node_classes() -> list[type[DOMNode]]:
    classes = []
    for name in OWN_MODULES:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, DOMNode) and cls.__module__ == name:
                classes.append(cls)
    return classes


def test_every_binding_has_an_id_and_a_description() -> None:
    bindings = [
        (cls.__name__, binding)
        for cls in _node_classes()
        for binding in cls.__dict__.get("BINDINGS", [])
    ]
    assert len(bindings) >= 15
    for owner, binding in bindings:
        assert isinstance(binding, Binding), owner
        assert binding.id, f"{owner} binds {binding.key} without an id"
        assert binding.description, f"{owner} binds {binding.key} without a description"
    ids = [binding.id for _, binding in bindings]
    assert len(ids) == len(set(ids)), "binding ids are unique"


def test_every_pane_explains_itself() -> None:
    for cls in (MainScreen, ChatView, Prompt, ScratchpadPane):
        assert cls.HELP.startswith("## "), cls.__name__


async def test_f1_opens_help_describing_each_pane_and_closes_again() -> None:
    app = scripted_app(make_settings(keymap={"main.toggle-scratchpad": "f9"}), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        source = app.screen.query_one(Markdown).source
        for heading in ("## Layout and keys", "## Header", "## Chat", "## Prompt", "## Scratchpad", "## Inspector"):
            assert heading in source
        assert "| `f9` | Scratchpad |" in source, "the user's key map is shown"
        assert "| `f1` | Help |" in source
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        await pilot.press("f1", "escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


def sections(source: str) -> list[str]:
    return [line for line in source.splitlines() if line.startswith("## ")]


async def test_f1_shows_the_focused_panes_help_first_and_scrolls_from_the_keyboard() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert sections(app.screen.query_one(Markdown).source)[0] == "## Prompt"
        scroller = app.screen.query_one("#help-text")
        assert app.focused is scroller
        assert scroller.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert scroller.scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert scroller.scroll_y == scroller.max_scroll_y
        await pilot.press("home")
        await pilot.pause()
        assert scroller.scroll_y == 0
        await pilot.press("escape")

        pane = app.screen.query_one(ScratchpadPane)
        await pane.apply(CellStarted("main", 1, "a cell", "print(1)"))
        await pilot.press("f2")  # narrow: the scratchpad fills the screen
        await pilot.pause()
        pane.pad_view("main").cells[0].focus()
        await pilot.press("f1")
        await pilot.pause()
        order = sections(app.screen.query_one(Markdown).source)
        assert order[0] == "## Scratchpad"
        assert "## Prompt" in order and "## Layout and keys" in order, "the rest follows"


async def test_a_long_confirmation_detail_scrolls_from_the_keyboard() -> None:
    from anton_tui.tui.screens.confirm import ConfirmScreen

    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=(80, 24)) as pilot:
        detail = "\n".join(f"line {n} of the detail" for n in range(60))
        app.push_screen(ConfirmScreen("Delete all of these?", detail))
        await pilot.pause()
        box = app.screen.query_one("#confirm-detail")
        assert box.max_scroll_y > 0
        box.focus()
        await pilot.press("down", "down", "pagedown")
        await pilot.pause()
        assert box.scroll_y > 2


async def test_key_map_from_settings_remaps_bindings() -> None:
    app = scripted_app(make_settings(keymap={"main.toggle-scratchpad": "f9"}), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        pane = app.screen.query_one(ScratchpadPane)
        await pilot.press("f2")
        assert pane.display
        await pilot.press("f9")
        assert not pane.display
        assert "f9 Scratchpad" in screen_text(app)


async def test_side_panes_hide_resize_and_maximise() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        side = screen.query_one("#side")
        chat = screen.query_one(ChatView)
        assert side.outer_size.width == SIZE[0] * SIDE_WIDTH_DEFAULT // 100

        await pilot.press("alt+left")
        await pilot.pause()
        assert side.outer_size.width == SIZE[0] * (SIDE_WIDTH_DEFAULT + SIDE_WIDTH_STEP) // 100
        await pilot.press("alt+right", "alt+right")
        await pilot.pause()
        assert side.outer_size.width == SIZE[0] * (SIDE_WIDTH_DEFAULT - SIDE_WIDTH_STEP) // 100

        await pilot.press("f3")
        await pilot.pause()
        assert not screen.query_one("#inspector").display
        assert screen.query_one(ScratchpadPane).size.height > 30
        await pilot.press("f2")
        await pilot.pause()
        assert not side.display
        assert chat.size.width == SIZE[0] - 2

        await pilot.press("f2", "f3", "f5")
        await pilot.pause()
        assert screen.maximized is screen.query_one("#conversation")
        await pilot.press("f5")
        await pilot.pause()
        assert screen.maximized is None
        pane = screen.query_one(ScratchpadPane)
        await pane.apply(CellStarted("main", 1, "a cell", "print(1)"))
        pane.pad_view("main").cells[0].focus()
        await pilot.press("f5")
        assert screen.maximized is screen.query_one(ScratchpadPane)
        await pilot.press("escape")
        assert screen.maximized is None


async def test_a_narrow_terminal_shows_one_pane_at_a_time_switched_with_f4() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), inspector=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        conversation, side = screen.query_one("#conversation"), screen.query_one("#side")
        inspector, scratchpad = screen.query_one("#inspector"), screen.query_one(ScratchpadPane)
        await pilot.pause()
        text = screen_text(app)
        assert "Chat" in text and "Scratchpad" in text and "Memory" in text, "the pane bar names every pane"
        assert "f4" in text.splitlines()[-1], "the footer shows the key that switches panes"
        assert conversation.display and not side.display
        assert conversation.outer_size.width == 80

        await pilot.press("f4")
        await pilot.pause()
        assert not conversation.display and scratchpad.display and not inspector.display
        assert side.outer_size.width == 80

        await pilot.press("f4")
        await pilot.pause()
        assert inspector.display and not scratchpad.display
        assert inspector.size.height >= 15, "the inspector gets the whole body, not a sliver"
        assert app.focused is not None and inspector in app.focused.ancestors_with_self

        await pilot.press("f4")
        await pilot.pause()
        assert conversation.display and not side.display
        assert isinstance(app.focused, Prompt)

        await pilot.press("f3")
        await pilot.pause()
        assert inspector.display and not conversation.display
        await pilot.press("f3")
        await pilot.pause()
        assert conversation.display and isinstance(app.focused, Prompt)


async def test_the_pane_bar_only_shows_in_narrow_terminals() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), inspector=True)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.screen.query_one("#pane-bar").display
        assert app.screen.query_one("#conversation").display and app.screen.query_one("#side").display


async def test_header_shows_workspace_model_and_memory_mode(tmp_path) -> None:
    settings = make_settings(project_dir=tmp_path / "sales-analysis", memory_mode="copilot",
                             planning_provider="openai", planning_model="gpt-test")
    app = scripted_app(settings, ScriptedSession([]), version="9.9.9")
    async with app.run_test(size=(160, 30)):
        header_line = screen_text(app).splitlines()[0]
        assert "anton 9.9.9" in header_line
        assert "sales-analysis" in header_line
        assert "openai/gpt-test" in header_line
        assert "memory copilot" in header_line


async def test_banner_and_suggested_prompts_for_the_demo() -> None:
    upcoming = iter(["first recorded question", "second recorded question"])
    session = ScriptedSession([TurnFinished(1, "end_turn", "")])
    app = scripted_app(
        make_settings(), session, banner="Demo replay: recorded answers.", suggest_prompt=lambda: next(upcoming, None)
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        prompt = app.screen.query_one(Prompt)
        assert "Demo replay: recorded answers." in screen_text(app)
        assert prompt.text == "first recorded question"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.prompts == ["first recorded question"]
        assert prompt.text == "second recorded question"


def test_importing_the_app_loads_no_llm_sdk_or_watchdog() -> None:
    code = (
        "import sys; import anton_tui.tui.app; "
        "bad = [m for m in ('anthropic', 'openai', 'watchdog') if m in sys.modules]; print(','.join(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_secondary_screens_are_not_imported_at_start() -> None:
    code = "import sys; import anton_tui.tui.app; print('anton_tui.tui.screens.help' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


async def test_at_120_columns_the_chat_keeps_half_the_screen_and_the_chosen_tab_and_the_footer_are_whole() -> None:
    from textual.widgets import Tab

    app = scripted_app(make_settings(), ScriptedSession([]), inspector=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: bool(screen.query("#inspector Tab")))
        pane = screen.query_one(ScratchpadPane)
        await pane.apply(CellStarted("main", 1, "a cell", "print(1)"))
        pane.pad_view("main").cells[0].focus()  # the pane with the most keys
        await pilot.pause()
        side = screen.query_one("#side").region
        assert screen.query_one("#conversation").region.width >= SIZE[0] // 2, "the chat keeps the larger part"
        tabs = list(screen.query("#inspector Tab").results(Tab))
        assert side.contains_region(tabs[0].region), "the first (chosen) tab is whole"
        last = tabs[-1]
        screen.query_one("#inspector-tabs").active = "inspector-context"
        await pilot.pause(0.3)
        assert side.contains_region(last.region), f"the chosen tab {last.label.plain} scrolls into view"
        footer = screen_text(app).splitlines()[-1]
        assert "f1 Help" in footer and "palette" in footer, footer


async def test_in_a_narrow_terminal_the_pane_bar_marks_scratchpad_activity_until_it_is_shown() -> None:
    from anton_tui.agent.events import ScratchpadActivity
    from anton_tui.tui.messages import SessionEventMessage

    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=(80, 24)) as pilot:
        bar_line = lambda: screen_text(app).splitlines()[1]  # noqa: E731
        assert "Scratchpad •" not in bar_line()
        app.screen.post_message(SessionEventMessage(ScratchpadActivity(CellStarted("main", 1, "a cell", "x = 1"))))
        await wait_until(pilot, lambda: "Scratchpad •" in bar_line())
        await pilot.press("f2")
        await pilot.pause()
        assert "Scratchpad •" not in bar_line()


async def test_panes_hidden_or_resized_in_a_wide_terminal_leave_the_narrow_layout_alone() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        conversation, side = screen.query_one("#conversation"), screen.query_one("#side")
        inspector, scratchpad = screen.query_one("#inspector"), screen.query_one(ScratchpadPane)
        await pilot.press("f3", "alt+left")  # wide: the inspector hidden, the side made wider
        await pilot.pause()
        assert not inspector.display and scratchpad.display

        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert conversation.display and not side.display, "the chat alone, as in any narrow terminal"
        assert conversation.outer_size.width == 80
        await pilot.press("f4")
        await pilot.pause()
        assert scratchpad.display and not conversation.display and side.outer_size.width == 80
        await pilot.press("f4")
        await pilot.pause()
        assert inspector.display, "a pane hidden in the wide layout still has its turn"

        await pilot.resize_terminal(*SIZE)
        await pilot.press("f4")
        await pilot.pause()
        assert not inspector.display and scratchpad.display, "back to wide: the inspector is still hidden"
        assert side.outer_size.width == SIZE[0] * (SIDE_WIDTH_DEFAULT + SIDE_WIDTH_STEP) // 100, "and as wide as set"


async def test_alt_right_narrows_the_right_column_beside_the_inspector_and_every_press_shows() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), inspector=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: bool(screen.query("#inspector Tab")))
        await pilot.pause(0.2)
        side = screen.query_one("#side")
        widths = [side.outer_size.width]
        for _ in range(8):
            await pilot.press("alt+right")
            await pilot.pause()
            widths.append(side.outer_size.width)
        assert widths[1] < widths[0], f"the first Alt+Right narrows the column: {widths}"
        changing = [w for before, w in zip(widths, widths[1:]) if w != before]
        assert changing == sorted(changing, reverse=True) and len(changing) == len(set(changing))
        assert widths[-1] == SIZE[0] * 20 // 100, "down to a fifth of the screen"
        assert "The right-hand column is as narrow as it goes (20% of the screen)." in notifications(app)
        widths = [side.outer_size.width]
        for _ in range(3):
            await pilot.press("alt+left")
            await pilot.pause()
            widths.append(side.outer_size.width)
        assert all(after > before for before, after in zip(widths, widths[1:])), f"each Alt+Left widens: {widths}"
