"""The Textual application: wires the settings, themes, key map and the chat session to the main screen.

Panes and screens do the rest; this module stays small. `run_app(layers)` is what the command line calls.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.theme import Theme
from textual.widget import Widget

from anton_tui import __version__, gc_policy
from anton_tui.tui.command_registry import SlashCommand, default_menu
from anton_tui.tui.messages import ChatCleared
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.session_protocol import ChatSessionLike, ScratchpadControl, TuiSettings
from anton_tui.tui.themes import DEFAULT_THEME, ThemeFileError, bundled_themes_dir, load_theme_folder

if TYPE_CHECKING:
    from anton_tui.settings_sources import EnvLayers

_HERE = Path(__file__).parent
WATCH_AT_THE_LATEST_S = 1.0  # after the first frame, unless the inspector has loaded its tabs sooner


def _anton_commands() -> Any:
    """The palette's provider of Anton's commands, imported when the palette first opens (not at start-up)."""
    from anton_tui.tui.commands.palette import AntonCommands

    return AntonCommands


class AntonApp(App[int]):
    """anton-tui: chat with Anton, watch its scratchpads and its memory."""

    TITLE = "anton-tui"
    COMMANDS = App.COMMANDS | {_anton_commands}
    CSS_PATH = [  # absolute, so that subclasses defined elsewhere find them
        _HERE / "app.tcss",
        _HERE / "widgets" / "header.tcss",
        _HERE / "widgets" / "chat.tcss",
        _HERE / "widgets" / "prompt.tcss",
        _HERE / "widgets" / "scratchpad_pane.tcss",
        _HERE / "screens" / "main.tcss",  # here, not on the screen: a screen's own CSS is a second parse at start-up
    ]

    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, show=False),
    ]

    def __init__(
        self,
        settings: TuiSettings,
        session: ChatSessionLike | None,
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
        stores: Any = None,
        watch_files: bool = False,
        first_run_setup: bool = False,
        finish_start: Callable[[], tuple[TuiSettings, ChatSessionLike]] | None = None,
    ) -> None:
        """`closing` is what to `close()` when the app exits (the session by default); `banner` is shown atop the
        chat; `suggest_prompt` pre-fills the empty prompt after each turn (the demo uses it); `inspector` builds the
        memory pane on the right (an empty frame without it); `stores` are the memory stores the commands and
        palette use (built from the settings when needed); `watch_files` starts the file watchers and the session's
        warm-up after the first frame (see `on_inspector_pane_loaded`); `first_run_setup` opens the setup screen at
        start.

        With `finish_start`, `settings` is a `SettingsSnapshot` and `session` is None: the first frame is painted
        from the snapshot, then `finish_start()` validates the settings and builds the session (see
        `anton_tui.settings_snapshot`)."""
        super().__init__()
        self.settings = settings
        self.session = session
        self.commands = list(default_menu() if commands is None else commands)
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
        self._memory_stores = stores
        self._watch_files = watch_files
        self._first_run_setup = first_run_setup
        self._finish_start = finish_start
        self._watcher: Any = None
        self._watching_begun = False
        self._main_screen: MainScreen | None = None
        self.switch_to_demo = False
        self.settings_error: Exception | None = None
        self._pending_settings: Any = None
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

    def get_default_screen(self) -> MainScreen:
        settings = self.settings
        self._main_screen = MainScreen(
            self.session,
            workspace=Path(settings.project_dir),
            provider=self.provider_label,
            model=str(getattr(settings, "planning_model", "")),
            memory_mode=str(getattr(settings, "effective_memory_mode", getattr(settings, "memory_mode", ""))),
            version=self.version,
            commands=self.commands,
            control=self.scratchpad_control,
            cursor_blink=self.cursor_blink,
            max_blocks=self._max_blocks,
            banner=self._banner,
            suggest_prompt=self._suggest_prompt,
            inspector=self._inspector,
        )
        return self._main_screen

    @property
    def provider_label(self) -> str:
        """What the header calls the planning provider: the session's own name for it when it has one."""
        role = getattr(getattr(self.session, "llm", None), "planning", None)
        name = getattr(getattr(role, "provider", None), "name", None)
        return str(name or getattr(self.settings, "planning_provider", ""))

    def on_mount(self) -> None:
        if self._finish_start is not None:
            self.call_after_refresh(self.finish_start)
        self.call_after_refresh(gc_policy.release)
        if self.keymap:
            self.set_keymap(self.keymap)
        self._report_theme_problems(self.theme_problems)
        if self._unknown_theme:
            self.notify(
                f"Theme {self._unknown_theme!r} is not installed; using {DEFAULT_THEME}.",
                title="Themes",
                severity="warning",
            )
        if self._finish_start is None:
            self._report_settings_warnings()
        if self._watch_files:
            self.call_after_refresh(self.set_timer, WATCH_AT_THE_LATEST_S, self._begin_watching)
        if self._first_run_setup:
            self.call_after_refresh(self.open_setup, True)

    def finish_start(self) -> bool:
        """Validate the settings and build the session of an app started from a snapshot; False if they are bad
        (the app then exits with code 2 and `settings_error`, which `run_app` raises, as before drawing anything)."""
        if self._finish_start is None:
            return self.settings_error is None
        from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, SettingsError

        finish, self._finish_start = self._finish_start, None
        try:
            settings, session = finish()
        except SettingsError as exc:
            self.settings_error = exc
            self.exit(return_code=SETTINGS_ERROR_EXIT)
            return False
        self.settings, self.session = settings, session
        if self._close_on_exit is None:
            self._close_on_exit = session
        if self.scratchpad_control is None and isinstance(session, ScratchpadControl):
            self.scratchpad_control = session
        if self._main_screen is not None:
            self._main_screen.attach_session(session, self.scratchpad_control)
            self._show_model(settings)
        self._report_settings_warnings()
        from anton_tui.tui.screens.setup import needs_setup

        if needs_setup(settings):
            self.open_setup(True)
        return True

    def _report_settings_warnings(self) -> None:
        for warning in getattr(self.settings, "env_warnings", None) or []:
            self.notify(warning, title="Settings", severity="warning", timeout=15)

    def _show_model(self, settings: Any) -> None:
        from anton_tui.tui.widgets.header import AntonHeader

        if self._main_screen is not None:
            self._main_screen.query_one(AntonHeader).set_model(
                self.provider_label, str(settings.planning_model), str(settings.effective_memory_mode)
            )

    async def on_unmount(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        close = getattr(self._close_on_exit, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result

    # --- themes --------------------------------------------------------------------------------------------------

    def _register_bundled_themes(self) -> None:
        loaded = load_theme_folder(bundled_themes_dir(), trusted=True)
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

    # --- live files ----------------------------------------------------------------------------------------------

    # After the first frame the start-up work goes one step at a time, since threads running side by side slow
    # each other down many times over: the inspector loads its tabs, then the file watcher starts, then the
    # session warms up (a long SDK import).

    def on_inspector_pane_loaded(self, message: Any) -> None:
        if self._watch_files:
            self._begin_watching()

    def _begin_watching(self) -> None:
        if not self._watching_begun:
            self._watching_begun = True
            self.start_watching()

    @work(thread=True, group="watchers", exit_on_error=False)
    def start_watching(self) -> None:
        """Start the one shared file watcher (its import and start-up stay off the first frame), then the warm-up."""
        from anton_tui.tui.watchers import MemoryWatcher

        try:
            targets: list[Any] = [self]
            if self._main_screen is not None:
                targets.append(self._main_screen.inspector)
            watcher = MemoryWatcher.for_paths(self.memory_stores.paths, targets)
            watcher.start()
            self._watcher = watcher
        finally:
            self.call_later(self.warm_up_session)

    @work(group="warm-up", exit_on_error=False)
    async def warm_up_session(self) -> None:
        """After the first frame: import the model SDK and build the episode index, so neither stalls a turn."""
        import anton_tui.tui.widgets.answer  # noqa: F401  (Markdown, for the first answer)
        from anton_tui.tui.widgets.code import highlighted_python

        highlighted_python("")  # loads pygments, for the first code shown

        if not self.finish_start():
            return
        warm_up = getattr(self.session, "warm_up", None)
        try:
            if warm_up is not None:
                await warm_up()
        finally:
            gc_policy.settle()

    def on_files_changed(self, message: Any) -> None:
        if "themes" in message.areas:
            self.reload_user_themes()
        if "skills" in message.areas:
            from anton_tui.tui.screens.skills import SkillsScreen

            for screen in self.screen_stack:
                if isinstance(screen, SkillsScreen):
                    screen.refresh_tree()

    # --- slash commands and the palette ---------------------------------------------------------------------------

    @property
    def memory_stores(self) -> Any:
        if self._memory_stores is None:
            from anton_tui.tui.stores import MemoryStores

            self._memory_stores = MemoryStores.from_settings(self.settings)
        return self._memory_stores

    def command_context(self) -> Any:
        from anton_tui.tui.commands import CommandContext

        self.finish_start()
        return CommandContext(
            stores=self.memory_stores,
            settings=self.settings,
            open_setup=self.open_setup,
            open_skills=self.open_skills,
            set_theme=self.set_theme,
            theme_names=lambda: list(self.available_themes),
            current_theme=lambda: self.theme,
            clear_chat=self.clear_chat,
            exit_app=self.exit,
            confirm=self.ask_yes_no,
            ask_text=self.ask_text,
            save_skill=self.save_skill,
            compact_now=self.compact_now,
        )

    async def action_slash_command(self, line: str) -> None:
        if self._main_screen is not None:
            await self._main_screen.run_command(line)

    def open_skills(self) -> None:
        from anton_tui.tui.screens.skills import SkillsScreen

        self.push_screen(SkillsScreen(self.memory_stores.skills))

    def open_setup(self, first_run: bool = False) -> None:
        from anton_tui.tui.screens.setup import SetupScreen

        if not self.finish_start():
            return
        self.push_screen(SetupScreen(self.settings, first_run=first_run), self._setup_closed)

    def _setup_closed(self, result: Any) -> None:
        from anton_tui.tui.screens.setup import SetupOutcome

        if result is None:
            return
        if result is SetupOutcome.DEMO:
            self.switch_to_demo = True
            self.exit(0)
            return
        self.apply_settings(result)

    def apply_settings(self, settings: Any) -> None:
        """Use new settings now: the session is re-configured in place and the header follows."""
        apply = getattr(self.session, "apply_settings", None)
        if self._main_screen is not None and self._main_screen.busy:
            self._pending_settings = settings
            self.notify("Settings saved; they apply when the running turn ends.", severity="warning")
            return
        try:
            if apply is not None:
                apply(settings)
            else:
                from anton_tui.agent.factory import apply_settings

                apply_settings(self.session, settings)
        except Exception as exc:  # bad settings must not take the app down
            self.notify(f"Could not apply the new settings: {exc}", severity="error", timeout=10)
            return
        self.settings = settings
        self._show_model(settings)
        self.notify("Settings saved and applied.")

    def on_main_screen_turn_ended(self, message: MainScreen.TurnEnded) -> None:
        self.call_after_refresh(gc_policy.collect_between_turns)  # once the end of the turn is on screen
        if self._pending_settings is not None:
            self.apply_pending_settings()

    @work(group="settings", exclusive=True, exit_on_error=False)
    async def apply_pending_settings(self) -> None:
        """The turn's events are shown; wait for its worker to end too, then apply (on the message loop)."""
        from textual.worker import WorkerCancelled, WorkerFailed

        worker = self._main_screen.turn_worker if self._main_screen is not None else None
        if worker is not None:
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass
        settings, self._pending_settings = self._pending_settings, None
        if settings is not None:
            self.call_later(self.apply_settings, settings)

    def set_theme(self, name: str) -> None:
        from anton_tui.config import write_project_env

        self.theme = name
        try:
            write_project_env(Path(self.settings.project_dir), {"ANTON_THEME": name})
        except (OSError, ValueError) as exc:
            self.notify(f"Theme switched, but not saved: {exc}", severity="warning")

    def clear_chat(self) -> None:
        forget = getattr(self.session, "new_conversation", None)
        if forget is not None:
            forget()
        if self._main_screen is not None:
            self._main_screen.post_message(ChatCleared())

    async def ask_yes_no(self, question: str) -> bool:
        """Ask in a modal; only from a worker (the slash-command worker is one)."""
        from anton_tui.tui.screens.confirm import ConfirmScreen

        return bool(await self.push_screen_wait(ConfirmScreen(question)))

    async def ask_text(self, question: str, current: str = "") -> str | None:
        from anton_tui.tui.screens.edit_entry import EditEntryScreen

        return await self.push_screen_wait(EditEntryScreen(current, title=question))

    async def save_skill(self, hint: str) -> Any:
        from anton_tui.agent.skill_draft import draft_skill
        from anton_tui.llm.errors import LLMError
        from anton_tui.tui.commands import CommandOutput

        try:
            skill = await draft_skill(self.session, hint)  # type: ignore[arg-type]
        except (LLMError, ValueError) as exc:
            return CommandOutput(f"No skill saved: {exc}", "error")
        lines = [f"Saved skill {skill.label} → {skill.path}", f"Name: {skill.name}"]
        if skill.when_to_use:
            lines.append(f"When to use: {skill.when_to_use}")
        return CommandOutput("\n".join(lines), "success")

    async def compact_now(self) -> Any:
        learning = getattr(self.session, "learning", None)
        if learning is None:
            return "Compaction is not available in this session."
        return await learning.compact_now()

    # --- actions -------------------------------------------------------------------------------------------------

    def action_help(self) -> None:
        from anton_tui.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(self.screen))


def run_app(layers: EnvLayers, *, theme: str | None = None, demo: bool = False) -> int:
    """Run the full-screen app until the user quits; returns the exit code.

    With `demo=True` the conversation is a recorded one replayed through the real engine in a throw-away folder.
    On first run (no API key) the setup screen opens by itself and offers the demo. Raises `SettingsError` when a
    setting is bad.
    """
    while True:
        app = prepare_app(layers, theme=theme, demo=demo)
        app.run()
        if app.settings_error is not None:
            raise app.settings_error
        if not app.switch_to_demo:
            return app.return_code or 0
        demo = True


def prepare_app(
    layers: EnvLayers,
    *,
    theme: str | None = None,
    demo: bool = False,
    app_class: type[AntonApp] = AntonApp,
    **options: Any,
) -> AntonApp:
    """The app `anton-tui` runs for these settings sources; `theme` overrides the theme setting for this run.

    When the sources are exactly those of an earlier start, the app paints from that start's snapshot and validates
    the settings after its first frame; otherwise they are validated now (raising `SettingsError`) and a snapshot
    is kept for next time. `app_class` and `options` are as for `build_app`.
    """
    from anton_tui.settings_snapshot import SettingsSnapshot, recall_snapshot, remember_snapshot

    snapshot = None if demo else recall_snapshot(layers)
    if snapshot is not None:
        if theme:
            snapshot = replace(snapshot, theme=theme)
        return _build_app_from_snapshot(snapshot, layers, theme=theme, app_class=app_class, **options)

    from anton_tui.config import settings_from_layers

    settings = settings_from_layers(layers)
    if not demo:
        remember_snapshot(layers, SettingsSnapshot.of(settings))
    if theme:
        settings.theme = theme
    return build_app(settings, demo=demo, app_class=app_class, **options)


def _build_app_from_snapshot(
    snapshot: Any, layers: EnvLayers, *, theme: str | None, app_class: type[AntonApp], **options: Any
) -> AntonApp:
    def finish_start() -> tuple[Any, ChatSessionLike]:
        from anton_tui.agent.factory import build_session
        from anton_tui.config import settings_from_layers
        from anton_tui.settings_snapshot import forget_snapshot
        from anton_tui.settings_sources import SettingsError

        try:
            settings = settings_from_layers(layers)
        except SettingsError:
            forget_snapshot(layers)  # the next start validates before drawing
            raise
        if theme:
            settings.theme = theme
        return settings, build_session(settings)

    return app_class(snapshot, None, finish_start=finish_start, **(_memory_wiring(snapshot) | options))


def build_app(settings: Any, *, demo: bool = False, app_class: type[AntonApp] = AntonApp, **options: Any) -> AntonApp:
    """The app as `anton-tui` runs it: the real session (or, with `demo`, the recorded one in a throw-away folder),
    the memory stores with the inspector over them, live files, and the setup screen on a first run. `options`
    override `AntonApp`'s keyword arguments; `app_class` may be a subclass (the benchmarks' probes use both)."""
    if demo:
        from anton_tui.agent.demo import DEMO_BANNER, build_demo

        replay = build_demo(settings)
        settings, session = replay.settings, replay.session
        wiring: dict[str, Any] = dict(closing=replay, banner=DEMO_BANNER, suggest_prompt=replay.next_prompt)
    else:
        from anton_tui.agent.factory import build_session
        from anton_tui.tui.screens.setup import needs_setup

        session = build_session(settings)
        wiring = dict(first_run_setup=needs_setup(settings))
    return app_class(settings, session, **(wiring | _memory_wiring(settings) | options))


def _memory_wiring(settings: Any) -> dict[str, Any]:
    """The memory stores for `settings` (a `Settings` or a snapshot), the inspector over them, and live files."""
    from anton_tui.tui.stores import MemoryStores
    from anton_tui.tui.widgets.inspector import InspectorPane

    stores = MemoryStores.from_settings(settings)
    return dict(inspector=lambda: InspectorPane(stores), stores=stores, watch_files=True)
