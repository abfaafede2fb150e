"""The Textual application: wires the settings, themes, key map and the chat session to the main screen.

Panes and screens do the rest; this module stays small. `run_app(settings)` is what the command line calls.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Sequence

from textual.app import App
from textual.binding import Binding
from textual.theme import Theme
from textual.widget import Widget

from anton_tui import __version__
from anton_tui.tui.command_registry import COMMANDS, SlashCommand
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.session_protocol import ChatSessionLike, ScratchpadControl, TuiSettings
from anton_tui.tui.themes import DEFAULT_THEME, ThemeFileError, bundled_themes_dir, load_theme_folder

_HERE = Path(__file__).parent


class AntonApp(App[int]):
    """anton-tui: chat with Anton, watch its scratchpads and its memory."""

    TITLE = "anton-tui"
    DEFAULT_MODE = "main"
    CSS_PATH = [  # absolute, so that subclasses defined elsewhere find them
        _HERE / "app.tcss",
        _HERE / "widgets" / "header.tcss",
        _HERE / "widgets" / "chat.tcss",
        _HERE / "widgets" / "prompt.tcss",
        _HERE / "widgets" / "scratchpad_pane.tcss",
    ]

    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, show=False),
    ]

    def __init__(
        self,
        settings: TuiSettings,
        session: ChatSessionLike,
        *,
        commands: Sequence[SlashCommand] | None = None,
        scratchpad_control: ScratchpadControl | None = None,
        cursor_blink: bool = True,
        version: str = __version__,
        max_blocks: int | None = None,
        closing: Any = None,
        banner: str | None = None,
        suggest_prompt: Callable[[], str | None] | None = None,
        inspector: Callable[[], Widget] | None = None,
    ) -> None:
        """`closing` is what to `close()` when the app exits (the session by default); `banner` is shown atop the
        chat; `suggest_prompt` pre-fills the empty prompt after each turn (the demo uses it); `inspector` builds the
        memory pane on the right (an empty frame without it)."""
        super().__init__()
        self.settings = settings
        self.session = session
        self.commands = list(COMMANDS if commands is None else commands)
        if scratchpad_control is None and isinstance(session, ScratchpadControl):
            scratchpad_control = session
        self.scratchpad_control = scratchpad_control
        self.cursor_blink = cursor_blink
        self.version = version
        self._max_blocks = max_blocks
        self._close_on_exit = session if closing is None else closing
        self._banner = banner
        self._suggest_prompt = suggest_prompt
        self._inspector = inspector
        self.keymap: dict[str, str] = dict(getattr(settings, "keymap", None) or {})
        self.user_themes_dir = Path(settings.home) / "themes"
        self.theme_problems: list[ThemeFileError] = []
        self._bundled_themes: dict[str, Theme] = {}
        self._user_theme_names: set[str] = set()
        self._register_bundled_themes()
        self._register_user_themes()
        wanted = getattr(settings, "theme", None) or DEFAULT_THEME
        self._unknown_theme = None if wanted in self.available_themes else wanted
        self.theme = DEFAULT_THEME if self._unknown_theme else wanted
        self.add_mode("main", self._create_main_screen)

    def _create_main_screen(self) -> MainScreen:
        settings = self.settings
        return MainScreen(
            self.session,
            workspace=Path(settings.project_dir),
            provider=str(getattr(settings, "planning_provider", "")),
            model=str(getattr(settings, "planning_model", "")),
            memory_mode=str(getattr(settings, "memory_mode", "")),
            version=self.version,
            commands=self.commands,
            control=self.scratchpad_control,
            cursor_blink=self.cursor_blink,
            max_blocks=self._max_blocks,
            banner=self._banner,
            suggest_prompt=self._suggest_prompt,
            inspector=self._inspector,
        )

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        self._report_theme_problems(self.theme_problems)
        if self._unknown_theme:
            self.notify(
                f"Theme {self._unknown_theme!r} is not installed; using {DEFAULT_THEME}.",
                title="Themes",
                severity="warning",
            )

    async def on_unmount(self) -> None:
        close = getattr(self._close_on_exit, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result

    # --- themes --------------------------------------------------------------------------------------------------

    def _register_bundled_themes(self) -> None:
        loaded = load_theme_folder(bundled_themes_dir())
        self.theme_problems.extend(loaded.problems)
        for theme in loaded.themes:
            self._bundled_themes[theme.name] = theme
            self.register_theme(theme)

    def _register_user_themes(self) -> set[str]:
        """Register the themes in $ANTON_HOME/themes; returns the user theme names before and after (any of them
        may have a new definition)."""
        loaded = load_theme_folder(self.user_themes_dir)
        self.theme_problems.extend(loaded.problems)
        changed = set(self._user_theme_names)
        for name in self._user_theme_names - {theme.name for theme in loaded.themes}:
            self.unregister_theme(name)
            if name in self._bundled_themes:
                self.register_theme(self._bundled_themes[name])
        for theme in loaded.themes:
            self.register_theme(theme)
        self._user_theme_names = {theme.name for theme in loaded.themes}
        return changed | self._user_theme_names

    def reload_user_themes(self) -> list[ThemeFileError]:
        """Pick up added, changed and removed user theme files; problems are shown and returned."""
        self.theme_problems = []
        changed = self._register_user_themes()
        if self.theme not in self.available_themes:
            self.theme = DEFAULT_THEME
        elif self.theme in changed:
            self.refresh_css(animate=False)
            self.theme_changed_signal.publish(self.current_theme)
        self._report_theme_problems(self.theme_problems)
        return self.theme_problems

    def _report_theme_problems(self, problems: list[ThemeFileError]) -> None:
        for problem in problems:
            self.notify(f"{problem} (file skipped)", title="Theme file not loaded", severity="error", timeout=10)

    # --- actions -------------------------------------------------------------------------------------------------

    def action_help(self) -> None:
        from anton_tui.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(self.screen))


def run_app(settings: TuiSettings, demo: bool = False) -> int:
    """Run the full-screen app until the user quits; returns the exit code.

    With `demo=True` the conversation is a recorded one replayed through the real engine in a throw-away folder.
    """
    from anton_tui.tui.stores import MemoryStores
    from anton_tui.tui.widgets.inspector import InspectorPane

    if demo:
        from anton_tui.agent.demo import DEMO_BANNER, build_demo

        replay = build_demo(settings)
        stores = MemoryStores.from_settings(replay.settings)
        app = AntonApp(
            replay.settings,
            replay.session,
            closing=replay,
            banner=DEMO_BANNER,
            suggest_prompt=replay.next_prompt,
            inspector=lambda: InspectorPane(stores),
        )
    else:
        from anton_tui.agent.factory import build_session

        stores = MemoryStores.from_settings(settings)
        app = AntonApp(settings, build_session(settings), inspector=lambda: InspectorPane(stores))
    app.run()
    return app.return_code or 0
