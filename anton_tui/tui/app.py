"""The Textual application: paints the first frame, receives the engine's `Runtime`, and opens screens for it.

The app gets a `Runtime`, or a `RuntimeStarter` that builds one in a worker right after the first frame. Everything
the engine does goes through the runtime; this module wires screens, settings, themes, the key map and live files.
What is done with the conversation (resume, rewind, a goal, `/clear`) is `ConversationActions`, which the app holds.
The app is also what slash commands ask of the UI (`CommandUI` in `tui/commands/context.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.message_pump import MessagePump

from anton_tui import __version__, gc_policy
from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, SettingsError
from anton_tui.tui.command_registry import SlashCommand, SlashMenu
from anton_tui.tui.conversations import ConversationActions
from anton_tui.tui.screens.main import MainScreen
from anton_tui.tui.served import BrowserTab, deliver_text_file, link_opens
from anton_tui.tui.textual_internals import PaintFirstAfterBatches, write_to_terminal
from anton_tui.tui.themes import DEFAULT_THEME, AppThemes

if TYPE_CHECKING:
    from anton_tui.config import Settings
    from anton_tui.runtime import Runtime
    from anton_tui.tui.attention import Attention
    from anton_tui.tui.watchers import FilesChanged, FollowInside, MemoryWatcher

_HERE = Path(__file__).parent
WATCH_AT_THE_LATEST_S = 1.0  # after the first frame, unless the inspector has loaded its tabs sooner


def _load_answer_parsers() -> None:
    """Markdown for the first answer, pygments for the first code shown."""
    import anton_tui.tui.widgets.answer_markdown  # noqa: F401  (the import is the point)
    from anton_tui.tui.widgets.code import highlighted_python

    highlighted_python("")


def _anton_commands() -> Any:
    """The palette's provider of Anton's commands, imported when the palette first opens (not at start-up)."""
    from anton_tui.tui.commands.palette import AntonCommands

    return AntonCommands


class AntonApp(PaintFirstAfterBatches, App[int]):
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
        self.starter = runtime if isinstance(runtime, RuntimeStarter) else None
        self.runtime: Runtime | None = None if isinstance(runtime, RuntimeStarter) else runtime
        self.frame = runtime.first_frame
        # (the start of the memory files, for the inspector's first frame: a few small reads, before the event loop)
        self._first_look = runtime.first_look() if isinstance(runtime, RuntimeStarter) and inspector else None
        self.commands = SlashMenu(commands)
        self.cursor_blink = cursor_blink
        self.version = version
        self._max_blocks = max_blocks
        self._show_inspector = inspector
        self._watch_files = watch_files
        self._watcher: MemoryWatcher | None = None
        self._watch_targets: tuple[MessagePump, ...] = ()
        self._followed_inside: frozenset[str] = frozenset()  # areas whose sub-folders are watched too (FollowInside)
        self._watching_begun = False
        self._main_screen: MainScreen | None = None
        self._build_after_first_rows = False
        self.conversations = ConversationActions(self, confirm=self.confirm, cursor_blink=cursor_blink)
        self.conversations.runtime = self.runtime
        self.switch_to_demo = False
        self.settings_error: SettingsError | None = None
        self._pending_settings: Settings | None = None
        self._attention: Attention | None = None
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
            command_ui=self,
            cursor_blink=self.cursor_blink,
            max_blocks=self._max_blocks,
            inspector=self._show_inspector,
            first_look=self._first_look,
        )
        self.conversations.screen = self._main_screen
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
            self.conversations.preview(self.starter, then_build=self.build_runtime)  # shown in the first frame
        else:
            self._build_after_first_rows = True  # see `on_side_column_first_rows_shown`
        if self._watch_files:
            self.call_after_refresh(self.set_timer, WATCH_AT_THE_LATEST_S, self._begin_watching)

    # --- the runtime ---------------------------------------------------------------------------------------------

    @work(thread=True, group="start", exit_on_error=False)
    def build_runtime(self) -> None:
        """Validate the settings and build the engine, off the event loop, right after the first frame."""
        if self.starter is None:
            return
        try:
            self.post_message(self.RuntimeReady(self.starter.build()))
        except SettingsError as exc:
            self.post_message(self.RuntimeFailed(exc))

    def on_side_column_first_rows_shown(self) -> None:
        """The first rows of the memory files are on screen (or the first frame, with none to show): now the runtime
        is built (both at once, sharing one interpreter, brought those rows about half a second later on a big
        home)."""
        if self._build_after_first_rows:
            self._build_after_first_rows = False
            self.build_runtime()

    def on_anton_app_runtime_ready(self, message: RuntimeReady) -> None:
        self._runtime_arrived(message.runtime)

    def _runtime_arrived(self, runtime: Runtime) -> None:
        self.runtime = self.conversations.runtime = runtime
        resume = self.starter.resume if self.starter is not None else None
        if self._main_screen is not None:
            self._main_screen.attach_runtime(
                runtime, inspector_later=resume not in (None, "?") and not runtime.needs_setup
            )
        for warning in runtime.settings.env_warnings:
            self.notify(warning, title="Settings", severity="warning", timeout=15)
        if runtime.needs_setup:
            self.conversations.drop_preview()  # it will not be resumed now
            self.open_setup(first_run=True)
        elif resume == "?":
            self.open_resume()
        elif resume is not None:
            self.conversations.resume_at_start(resume or None)

    def on_anton_app_runtime_failed(self, message: RuntimeFailed) -> None:
        from anton_tui.tui.screens.settings_error import SettingsErrorScreen

        self.settings_error = message.error
        self.push_screen(SettingsErrorScreen(message.error), self._settings_error_closed)

    def _settings_error_closed(self, fix: bool | None) -> None:
        if fix:
            self.settings_for_setup()  # the setup without the bad values, then start again
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

    def on_inspector_pane_loaded(self) -> None:
        if self._watcher is not None and self._main_screen is not None:
            self._watcher.add_target(self._main_screen.inspector)  # mounted after the watcher started
        if self._watch_files:
            self._begin_watching()

    def _begin_watching(self) -> None:
        if self._watching_begun:
            return
        if self.runtime is None:
            self.set_timer(0.1, self._begin_watching)  # the runtime is still being built
            return
        self._watching_begun = True
        targets: list[MessagePump] = [self]  # found here, on the event loop: the watcher's thread reads no widget
        if self._main_screen is not None:
            targets.append(self._main_screen.inspector)
        self._watch_targets = tuple(targets)
        self.start_watching()

    @work(thread=True, group="watchers", exit_on_error=False)
    def start_watching(self) -> None:
        """Start the one shared file watcher (its import and start-up stay off the first frame), then the warm-up."""
        from anton_tui.tui.watchers import MemoryWatcher

        try:
            if self.runtime is not None:
                watcher = MemoryWatcher.for_paths(self.runtime.paths, self._watch_targets)
                watcher.start()
                self._watcher = watcher
                for area in self._followed_inside:  # asked for while the watcher was starting
                    watcher.watch_inside(area)
        finally:
            self.call_later(self._watching_started)

    def on_follow_inside(self, message: FollowInside) -> None:
        """A screen now shows what is inside `message.area`'s sub-folders (a skill's files): follow them live (once:
        the Skills tab asks each time it is shown)."""
        if message.area in self._followed_inside:
            return
        self._followed_inside = self._followed_inside | {message.area}
        self._watch_inside(message.area)

    @work(thread=True, group="watchers", exit_on_error=False)
    def _watch_inside(self, area: str) -> None:
        if self._watcher is not None:  # else `start_watching` does it
            self._watcher.watch_inside(area)

    def _watching_started(self) -> None:
        if self._watcher is not None and self._main_screen is not None:
            self._watcher.add_target(self._main_screen.inspector)  # mounted while the watcher started
        self.warm_up()

    @work(group="warm-up", exit_on_error=False)
    async def warm_up(self) -> None:
        """After the first frame: import Markdown and pygments for the first answer (in a thread: on the loop the
        imports held up whatever the user typed meanwhile), and the command table for the first `/` typed, then warm
        up the runtime."""
        await asyncio.to_thread(_load_answer_parsers)
        len(self.commands)  # makes the prompt's menu
        try:
            if self.runtime is not None:
                await self.runtime.warm_up()
        finally:
            gc_policy.settle()

    def on_files_changed(self, message: FilesChanged) -> None:
        if "memory" in message.areas and self.runtime is not None:
            self.run_worker(self.runtime.record_external(), group="memory-history", exit_on_error=False)
        if "themes" in message.areas:
            self.reload_user_themes()
        if "skills" in message.areas:
            from anton_tui.tui.screens.skills import SkillsScreen

            for screen in self.screen_stack:
                if isinstance(screen, SkillsScreen):
                    screen.refresh_tree()

    # --- the user's attention while the terminal is in the background -------------------------------------------

    @property
    def attention(self) -> Attention:
        if self._attention is None:
            from anton_tui.tui.attention import Attention

            self._attention = Attention(lambda text: write_to_terminal(self, text))
            if self.runtime is not None:
                self._attention.follow(self.runtime.settings)
        return self._attention

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

    def on_main_screen_attention_wanted(self, message: MainScreen.AttentionWanted) -> None:
        self.attention.alert(message.title, message.body)

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
            self.push_screen(HelpScreen(self.screen, self.keymap))

    # --- screens -------------------------------------------------------------------------------------------------

    def open_skills(self, label: str | None = None) -> None:
        from anton_tui.tui.screens.skills import SkillsScreen

        if self.runtime is None:
            self.notify("Still starting; try again in a moment.", severity="warning")
            return
        self.push_screen(SkillsScreen(self.runtime, cursor_blink=self.cursor_blink, select=label))

    def open_reflections(self) -> None:
        from anton_tui.tui.screens.reflections import ReflectionsScreen

        if self.runtime is None:
            self.notify("Still starting; try again in a moment.", severity="warning")
            return
        self.push_screen(ReflectionsScreen(self.runtime))

    def open_setup(self, first_run: bool = False) -> None:
        from anton_tui.tui.screens.setup import SetupScreen

        if self.runtime is None:
            self.notify("Still starting; try again in a moment.", severity="warning")
            return
        screen = SetupScreen(
            self.runtime.settings, self.runtime.save_settings, cursor_blink=self.cursor_blink, first_run=first_run
        )
        self.push_screen(screen, self._setup_closed)

    def _setup_closed(self, result: Any) -> None:
        from anton_tui.tui.screens.setup import SetupOutcome

        if result is None:
            return
        if result is SetupOutcome.DEMO:
            self.switch_to_demo = True
            self.exit(0)
            return
        self.apply_settings(result)

    @work(thread=True, group="start", exit_on_error=False)
    def settings_for_setup(self) -> None:
        """After a bad setting stopped the start: read the settings without the bad values, off the event loop."""
        settings, removals = self.starter.settings_for_setup() if self.starter is not None else (None, {})
        self.call_from_thread(self._open_fixing_setup, settings, removals)

    def _open_fixing_setup(self, settings: Settings | None, removals: dict[str, str | None]) -> None:
        """The setup without the bad values; saving it writes the fixes too, and the start begins again."""
        from anton_tui.tui.screens.setup import SetupScreen

        starter = self.starter
        if settings is None or starter is None:
            self.exit(return_code=2)
            return
        if removals:
            names = ", ".join(removals)
            self.notify(f"Saving also removes {names} from the project's .anton/.env.", title="Setup", timeout=15)

        def closed(result: Any) -> None:
            if result is None:
                self.exit(return_code=2)
                return
            self.settings_error = None
            self.starter = self.starter.reread() if self.starter is not None else None
            self.build_runtime()

        save = lambda updates: starter.save_settings(removals | updates)  # noqa: E731
        self.push_screen(
            SetupScreen(settings, save, cursor_blink=self.cursor_blink, first_run=False, can_demo=False), closed
        )

    # --- settings and themes -------------------------------------------------------------------------------------

    @work(group="settings", exclusive=True, exit_on_error=False)
    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings now: the session is re-configured in place and the header follows; while a turn runs,
        they wait for its end."""
        runtime, screen = self.runtime, self._main_screen
        if runtime is None:
            return
        if screen is not None and screen.busy:
            self._pending_settings = settings
            self.notify("Settings saved; they apply when the running turn ends.", severity="warning")
            return
        try:
            await runtime.apply_settings(settings)
        except Exception as exc:  # bad settings must not take the app down
            self.notify(f"Could not apply the new settings: {exc}", severity="error", timeout=10)
            return
        if screen is not None:
            screen.show_model(runtime)
        if self._attention is not None:
            self._attention.follow(settings)
        from anton_tui.tui.screens.setup import environment_overrides

        if shadowed := environment_overrides(settings):
            names = ", ".join(shadowed)
            self.notify(f"Settings saved and applied, except {names}: the environment decides those.",
                        severity="warning", timeout=10)  # fmt: skip
        else:
            self.notify("Settings saved and applied.")

    @work(group="settings-pending", exclusive=True, exit_on_error=False)
    async def apply_pending_settings(self) -> None:
        """The turn's events are shown; wait for its worker to end too, then apply."""
        from textual.worker import WorkerCancelled, WorkerFailed

        worker = self._main_screen.turn_worker if self._main_screen is not None else None
        if worker is not None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()
        settings, self._pending_settings = self._pending_settings, None
        if settings is not None:
            self.apply_settings(settings)

    def theme_names(self) -> Iterable[str]:
        return list(self.available_themes)

    def current_theme_name(self) -> str:
        return self.theme

    def set_theme(self, name: str) -> None:
        self.theme = name
        if self.runtime is not None:
            self.save_theme(self.runtime, name)

    @work(group="theme", exit_on_error=False)
    async def save_theme(self, runtime: Runtime, name: str) -> None:
        try:
            await runtime.save_theme(name)
        except (OSError, ValueError) as exc:
            self.notify(f"Theme switched, but not saved: {exc}", severity="warning")

    def reload_user_themes(self) -> list[Any]:
        """Pick up added, changed and removed user theme files; problems are shown and returned."""
        problems = self.themes.reload()
        self.report_theme_problems(problems)
        return problems

    def report_theme_problems(self, problems: Sequence[Any]) -> None:
        for problem in problems:
            self.notify(f"{problem} (file skipped)", title="Theme file not loaded", severity="error", timeout=10)

    # --- what commands ask of the app (`CommandUI`) ----------------------------------------------------------------

    async def action_slash_command(self, line: str) -> None:
        """Run one slash command line from the palette, its reply in the chat."""
        if self._main_screen is not None:
            await self._main_screen.run_command(line)

    def exit_app(self) -> None:
        self.exit()

    async def confirm(self, question: str) -> bool:
        """Ask in a modal; only from a worker (the slash-command worker is one)."""
        from anton_tui.tui.screens.confirm import ConfirmScreen

        answer: bool = await self.push_screen_wait(ConfirmScreen(question))
        return answer

    async def choose_skills(self, source: str, offers: list[Any]) -> list[str] | None:
        """The skills to install out of `offers` (`/skill install`), chosen in a modal; None installs nothing."""
        from anton_tui.tui.screens.install_skills import InstallSkillsScreen

        return await self.push_screen_wait(InstallSkillsScreen(source, offers))

    async def ask_text(self, question: str, current: str = "") -> str | None:
        from anton_tui.tui.screens.edit_entry import EditEntryScreen

        return await self.push_screen_wait(EditEntryScreen(current, title=question))

    def send_prompt(self, text: str) -> None:
        self.conversations.send_prompt(text)

    def fill_prompt(self, text: str) -> None:
        self.conversations.fill_prompt(text)

    def start_goal(self, objective: str, max_turns: int) -> str | None:
        return self.conversations.start_goal(objective, max_turns)

    def clear_chat(self) -> None:
        self.conversations.clear_chat()

    def open_resume(self) -> None:
        self.conversations.open_resume()

    def open_rewind(self) -> None:
        self.conversations.open_rewind()

    def rewind_to(self, index: int) -> None:
        """Go back to before the message at history `index` (picked in the chat)."""
        self.conversations.rewind_to(index)

    def fork_at(self, index: int) -> None:
        """Fork the conversation at the message at history `index` (picked in the chat) and continue in the fork."""
        self.conversations.fork_at(index)

    async def resume_conversation(self, session_id: str) -> None:
        """Continue a saved conversation (`/conversation fork` continues in the fork it made)."""
        await self.conversations.resume(session_id)

    def deliver_download(self, text: str, name: str) -> bool:
        """In a browser tab (`anton-tui serve`), hand `text` to the browser as the download `name`; False in a
        terminal, where the caller saves the file instead."""
        return deliver_text_file(self, text, name) is not None
