"""The Textual application: paints the first frame, receives the engine's `Runtime`, and opens screens for it.

The app gets a `Runtime`, or a `RuntimeStarter` that builds one in a worker right after the first frame. Everything
the engine does goes through the runtime; this module only wires screens, themes, the key map and live files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message

from anton_tui import __version__, gc_policy
from anton_tui.runtime import Runtime, RuntimeStarter
from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, SettingsError
from anton_tui.tui.app_ui import AppActions
from anton_tui.tui.command_registry import SlashCommand, default_menu
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.served import BrowserTab, link_opens
from anton_tui.tui.themes import DEFAULT_THEME, AppThemes

_HERE = Path(__file__).parent
WATCH_AT_THE_LATEST_S = 1.0  # after the first frame, unless the inspector has loaded its tabs sooner


def _anton_commands() -> Any:
    """The palette's provider of Anton's commands, imported when the palette first opens (not at start-up)."""
    from anton_tui.tui.commands.palette import AntonCommands

    return AntonCommands


class AntonApp(AppActions, App[int]):
    """anton-tui: chat with Anton, watch its scratchpads and its memory."""

    TITLE = "anton-tui"
    COMMANDS = App.COMMANDS | {_anton_commands}
    CSS_PATH = _HERE / "app.tcss"  # absolute, so that subclasses defined elsewhere find it

    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, show=False),
    ]

    class RuntimeReady(Message):
        """The runtime was built after the first frame."""

        def __init__(self, runtime: Runtime) -> None:
            super().__init__()
            self.runtime = runtime

    class RuntimeFailed(Message):
        """Building the runtime stopped at a bad setting."""

        def __init__(self, error: SettingsError) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        runtime: Runtime | RuntimeStarter,
        *,
        commands: Sequence[SlashCommand] | None = None,
        cursor_blink: bool = True,
        version: str = __version__,
        max_blocks: int | None = None,
        inspector: bool = True,
        watch_files: bool = False,
    ) -> None:
        """`inspector` shows the memory inspector on the right (an empty frame without it); `watch_files` starts
        the file watcher and the runtime's warm-up after the first frame (see `on_inspector_pane_loaded`)."""
        super().__init__()
        self.runtime: Runtime | None = runtime if isinstance(runtime, Runtime) else None
        self.starter = runtime if isinstance(runtime, RuntimeStarter) else None
        self.frame = runtime.first_frame
        # (the start of the memory files, for the inspector's first frame: a few small reads, before the event loop)
        self._first_look = runtime.first_look() if isinstance(runtime, RuntimeStarter) and inspector else None
        self.commands = list(default_menu() if commands is None else commands)
        self.cursor_blink = cursor_blink
        self.version = version
        self._max_blocks = max_blocks
        self._show_inspector = inspector
        self._watch_files = watch_files
        self._watcher: Any = None
        self._watching_begun = False
        self._main_screen: MainScreen | None = None
        self.switch_to_demo = False
        self.settings_error: SettingsError | None = None
        self._pending_settings: Any = None
        self._attention: Any = None
        self._preview: tuple[str, list[Any]] | None = None  # the conversation shown before its resume
        self._resumed_shown = False
        self._showing = asyncio.Lock()  # one conversation drawn into the chat at a time
        self.keymap: dict[str, str] = dict(self.frame.keymap)
        self.themes = AppThemes(self, Path(self.frame.home) / "themes")
        wanted = self.frame.theme or DEFAULT_THEME
        self._unknown_theme = None if wanted in self.available_themes else wanted
        self.theme = DEFAULT_THEME if self._unknown_theme else wanted

    def get_system_commands(self, screen: Any) -> Any:
        """Textual's palette entries, less those an Anton entry already offers."""
        from anton_tui.tui.commands.palette import DUPLICATED_BUILT_INS

        for command in super().get_system_commands(screen):
            if command.title not in DUPLICATED_BUILT_INS:
                yield command

    def get_default_screen(self) -> MainScreen:
        self._main_screen = MainScreen(
            self.runtime,
            frame=self.frame,
            version=self.version,
            commands=self.commands,
            cursor_blink=self.cursor_blink,
            max_blocks=self._max_blocks,
            inspector=self._show_inspector,
            first_look=self._first_look,
        )
        return self._main_screen

    def on_mount(self) -> None:
        self.call_after_refresh(gc_policy.release)
        if self.keymap:
            self.set_keymap(self.keymap)
        self.report_theme_problems(self.themes.problems)
        if self._unknown_theme:
            self.notify(f"Theme {self._unknown_theme!r} is not installed; using {DEFAULT_THEME}.", title="Themes",
                        severity="warning")  # fmt: skip
        if self.runtime is not None:
            self.call_after_refresh(self._runtime_arrived, self.runtime)
        elif self.starter is not None and self.starter.resume not in (None, "?") and not self.starter.demo:
            self.preview_resume()  # read while the first frame is drawn, shown in it when ready; then the build
        else:
            self.call_after_refresh(self.build_runtime)
        if self._watch_files:
            self.call_after_refresh(self.set_timer, WATCH_AT_THE_LATEST_S, self._begin_watching)

    # --- the runtime ---------------------------------------------------------------------------------------------

    @work(thread=True, group="start", exit_on_error=False)
    def build_runtime(self) -> None:
        """Validate the settings and build the engine, off the event loop, right after the first frame."""
        try:
            self.post_message(self.RuntimeReady(self.starter.build()))  # type: ignore[union-attr]
        except SettingsError as exc:
            self.post_message(self.RuntimeFailed(exc))

    def on_anton_app_runtime_ready(self, message: RuntimeReady) -> None:
        self._runtime_arrived(message.runtime)

    def _runtime_arrived(self, runtime: Runtime) -> None:
        self.runtime = runtime
        resuming = self.starter is not None and self.starter.resume not in (None, "?") and not runtime.needs_setup
        if self._main_screen is not None:
            self._main_screen.attach_runtime(runtime, inspector_later=resuming)
        for warning in getattr(runtime.settings, "env_warnings", None) or []:
            self.notify(warning, title="Settings", severity="warning", timeout=15)
        if runtime.needs_setup:
            if self._preview is not None and self._main_screen is not None:  # it will not be resumed now
                self._preview = None
                self.call_later(self._main_screen.clear_conversation)
            self.open_setup(first_run=True)
        elif self.starter is not None and self.starter.resume == "?":
            self.open_resume()
        elif self.starter is not None and self.starter.resume is not None:
            self.resume_at_start(self.starter.resume or None)

    def on_anton_app_runtime_failed(self, message: RuntimeFailed) -> None:
        from anton_tui.tui.screens.settings_error import SettingsErrorScreen

        self.settings_error = message.error
        self.push_screen(SettingsErrorScreen(message.error), self._settings_error_closed)

    def _settings_error_closed(self, fix: bool | None) -> None:
        if fix:
            self.fix_settings()
        else:
            self.exit(return_code=SETTINGS_ERROR_EXIT)

    async def on_unmount(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        if self.runtime is not None:
            await self.runtime.close()

    # --- live files ----------------------------------------------------------------------------------------------

    # After the first frame the start-up work goes one step at a time, since threads running side by side slow
    # each other down many times over: the inspector loads its tabs, then the file watcher starts, then the
    # runtime warms up (a long SDK import).

    def on_inspector_pane_loaded(self, message: Any) -> None:
        if self._watch_files:
            self._begin_watching()

    def _begin_watching(self) -> None:
        if not self._watching_begun and self.runtime is not None:
            self._watching_begun = True
            self.start_watching()
        elif not self._watching_begun:
            self.set_timer(0.1, self._begin_watching)  # the runtime is still being built

    @work(thread=True, group="watchers", exit_on_error=False)
    def start_watching(self) -> None:
        """Start the one shared file watcher (its import and start-up stay off the first frame), then the warm-up."""
        from anton_tui.tui.watchers import MemoryWatcher

        try:
            targets: list[Any] = [self]
            if self._main_screen is not None:
                targets.append(self._main_screen.inspector)
            watcher = MemoryWatcher.for_paths(self.runtime.paths, targets)  # type: ignore[union-attr]
            watcher.start()
            self._watcher = watcher
        finally:
            self.call_later(self.warm_up)

    @work(group="warm-up", exit_on_error=False)
    async def warm_up(self) -> None:
        """After the first frame: import Markdown and pygments for the first answer, then warm up the runtime."""
        import anton_tui.tui.widgets.answer_markdown  # noqa: F401  (Markdown, for the first answer)
        from anton_tui.tui.widgets.code import highlighted_python

        highlighted_python("")  # loads pygments, for the first code shown
        try:
            if self.runtime is not None:
                await self.runtime.warm_up()
        finally:
            gc_policy.settle()

    def on_files_changed(self, message: Any) -> None:
        if "memory" in message.areas and self.runtime is not None:
            self.run_worker(self.runtime.record_external(), group="memory-history", exit_on_error=False)
        if "themes" in message.areas:
            self.reload_user_themes()
        if "skills" in message.areas:
            from anton_tui.tui.screens.skills import SkillsScreen

            for screen in self.screen_stack:
                if isinstance(screen, SkillsScreen):
                    screen.refresh_tree()

    def reload_user_themes(self) -> list[Any]:
        """Pick up added, changed and removed user theme files; problems are shown and returned."""
        problems = self.themes.reload()
        self.report_theme_problems(problems)
        return problems

    def report_theme_problems(self, problems: Sequence[Any]) -> None:
        for problem in problems:
            self.notify(f"{problem} (file skipped)", title="Theme file not loaded", severity="error", timeout=10)

    # --- the user's attention while the terminal is in the background -------------------------------------------

    @property
    def attention(self) -> Any:
        if self._attention is None:
            from anton_tui.tui.attention import Attention

            settings = self.runtime.settings if self.runtime is not None else None
            self._attention = Attention(
                self._write_to_terminal,
                bell=bool(getattr(settings, "notify_bell", True)),
                desktop=bool(getattr(settings, "notify_desktop", True)),
            )
        return self._attention

    def _write_to_terminal(self, text: str) -> None:
        if not self.is_headless and self._driver is not None:
            self._driver.write(text)
            self._driver.flush()

    # --- in a browser tab (`anton-tui serve`): copying and links, see `tui/served.py` ------------------------------

    def copy_to_clipboard(self, text: str) -> None:
        super().copy_to_clipboard(text)
        if (tab := BrowserTab.of(self)) is not None:
            tab.copied(self, text)

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        if BrowserTab.of(self) is None:
            super().open_url(url, new_tab=new_tab)
        elif link_opens(url):
            super().open_url(url, new_tab=True)
        else:
            self.notify(
                f"Not opened: {url} (a browser tab opens only http, https and mailto links)", severity="warning"
            )

    def on_app_focus(self) -> None:
        self.attention.focused = True

    def on_app_blur(self) -> None:
        self.attention.focused = False

    def on_main_screen_turn_ended(self, message: MainScreen.TurnEnded) -> None:
        if message.reason not in ("cancelled", "error"):  # an error has already said so, with its text
            self.attention.alert("Anton", "The answer is ready.")
        self.call_after_refresh(gc_policy.collect_between_turns)  # once the end of the turn is on screen
        if self._pending_settings is not None:
            self.apply_pending_settings()

    def action_help(self) -> None:
        from anton_tui.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(self.screen))
