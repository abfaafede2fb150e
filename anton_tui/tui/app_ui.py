"""What the app does when asked by a command, the palette or a screen: open the setup and skills screens, switch
themes, start a new conversation, apply new settings, and ask the user a question in a modal.

These are the app's `CommandUI` methods (see `tui/commands/context.py`); each hands the engine's part to the
`Runtime` and keeps the screen's part here, so `app.py` stays about wiring.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual import work

from anton_tui.tui.messages import ChatCleared

if TYPE_CHECKING:
    from anton_tui.tui.app import AntonApp

SCREEN_WAITS, SCREEN_WAIT_S = 400, 0.005  # how long a conversation read at start-up waits for the main screen: 2 s
LAYOUT_WAITS = 10  # refreshes the engine's build waits at most for the screen to lay out a conversation shown early


class AppActions:
    """Mixed into `AntonApp`."""

    # --- slash commands ------------------------------------------------------------------------------------------

    def command_context(self: AntonApp) -> Any:
        from anton_tui.tui.commands import CommandContext

        return CommandContext(self.runtime, ui=self)  # type: ignore[arg-type]

    async def action_slash_command(self: AntonApp, line: str) -> None:
        if self._main_screen is not None:
            await self._main_screen.run_command(line)

    def theme_names(self: AntonApp) -> Iterable[str]:
        return list(self.available_themes)

    def current_theme_name(self: AntonApp) -> str:
        return self.theme

    def exit_app(self: AntonApp) -> None:
        self.exit()

    # --- screens -------------------------------------------------------------------------------------------------

    def open_skills(self: AntonApp, label: str | None = None) -> None:
        from anton_tui.tui.screens.skills import SkillsScreen

        if self.runtime is None:
            self.notify("Still starting; try again in a moment.", severity="warning")
            return
        self.push_screen(SkillsScreen(self.runtime, select=label))

    def open_setup(self: AntonApp, first_run: bool = False) -> None:
        from anton_tui.tui.screens.setup import SetupScreen

        if self.runtime is None:
            self.notify("Still starting; try again in a moment.", severity="warning")
            return
        screen = SetupScreen(self.runtime.settings, self.runtime.save_settings, first_run=first_run)
        self.push_screen(screen, self._setup_closed)

    def _setup_closed(self: AntonApp, result: Any) -> None:
        from anton_tui.tui.screens.setup import SetupOutcome

        if result is None:
            return
        if result is SetupOutcome.DEMO:
            self.switch_to_demo = True
            self.exit(0)
            return
        self.apply_settings(result)

    def fix_settings(self: AntonApp) -> None:
        """After a bad setting stopped the start: open the setup without the bad values, then start again."""
        self.settings_for_setup()

    @work(thread=True, group="start", exit_on_error=False)
    def settings_for_setup(self: AntonApp) -> None:
        settings, removals = self.starter.settings_for_setup() if self.starter is not None else (None, {})
        self.call_from_thread(self._open_fixing_setup, settings, removals)

    def _open_fixing_setup(self: AntonApp, settings: Any, removals: dict[str, str | None]) -> None:
        from anton_tui.runtime.runtime import save_settings
        from anton_tui.tui.screens.setup import SetupScreen

        if settings is None:
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

        save = lambda updates: save_settings(settings.project_dir, removals | updates)  # noqa: E731
        self.push_screen(SetupScreen(settings, save, first_run=False, can_demo=False), closed)

    # --- settings and themes -------------------------------------------------------------------------------------

    @work(group="settings", exclusive=True, exit_on_error=False)
    async def apply_settings(self: AntonApp, settings: Any) -> None:
        """Use new settings now: the session is re-configured in place and the header follows; while a turn runs,
        they wait for its end."""
        if self._main_screen is not None and self._main_screen.busy:
            self._pending_settings = settings
            self.notify("Settings saved; they apply when the running turn ends.", severity="warning")
            return
        try:
            await self.runtime.apply_settings(settings)  # type: ignore[union-attr]
        except Exception as exc:  # bad settings must not take the app down
            self.notify(f"Could not apply the new settings: {exc}", severity="error", timeout=10)
            return
        if self._main_screen is not None:
            self._main_screen.show_model(self.runtime)
        if self._attention is not None:
            self._attention.bell = bool(getattr(settings, "notify_bell", True))
            self._attention.desktop = bool(getattr(settings, "notify_desktop", True))
        from anton_tui.tui.screens.setup import environment_overrides

        if shadowed := environment_overrides(settings):
            names = ", ".join(shadowed)
            self.notify(f"Settings saved and applied, except {names}: the environment decides those.",
                        severity="warning", timeout=10)  # fmt: skip
        else:
            self.notify("Settings saved and applied.")

    @work(group="settings-pending", exclusive=True, exit_on_error=False)
    async def apply_pending_settings(self: AntonApp) -> None:
        """The turn's events are shown; wait for its worker to end too, then apply."""
        from textual.worker import WorkerCancelled, WorkerFailed

        worker = self._main_screen.turn_worker if self._main_screen is not None else None
        if worker is not None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()
        settings, self._pending_settings = self._pending_settings, None
        if settings is not None:
            self.apply_settings(settings)

    def set_theme(self: AntonApp, name: str) -> None:
        self.theme = name
        if self.runtime is not None:
            self.save_theme(name)

    @work(group="theme", exit_on_error=False)
    async def save_theme(self: AntonApp, name: str) -> None:
        try:
            await self.runtime.save_theme(name)  # type: ignore[union-attr]
        except (OSError, ValueError) as exc:
            self.notify(f"Theme switched, but not saved: {exc}", severity="warning")

    # --- the conversation ----------------------------------------------------------------------------------------

    def send_prompt(self: AntonApp, text: str) -> None:
        """Start a turn with `text`, as if the user had typed it (a skill's own slash command does this)."""
        if self._main_screen is not None:
            self._main_screen.call_later(self._main_screen.send, text)

    def fill_prompt(self: AntonApp, text: str) -> None:
        """Put `text` in the prompt, to be finished and sent by the user."""
        if self._main_screen is not None:
            self._main_screen.fill_prompt(text)

    def start_goal(self: AntonApp, objective: str, max_turns: int) -> str | None:
        """Work on `objective` over up to `max_turns` turns (/goal); the reason when it cannot start now."""
        if self._main_screen is None:
            return "Still starting; try again in a moment."
        return self._main_screen.start_goal(objective, max_turns)

    def clear_chat(self: AntonApp) -> None:
        if self.runtime is not None:
            self.runtime.new_conversation()
        if self._main_screen is not None:
            self._main_screen.post_message(ChatCleared())

    # --- saved conversations -------------------------------------------------------------------------------------

    @work(group="conversations", exclusive=True, exit_on_error=False)
    async def open_resume(self: AntonApp) -> None:
        """The list of saved conversations (renamed, forked, exported or deleted there); the one chosen continues
        here."""
        from anton_tui.tui.screens.resume import ResumeScreen

        runtime = self.runtime
        if runtime is None:
            return
        sessions = await runtime.conversations.tree()
        if not sessions:
            self.notify("No saved conversations in this project yet.", title="Resume")
            return
        choice = await self.push_screen_wait(
            ResumeScreen(sessions, current=runtime.conversations.current, runtime=runtime)
        )
        if choice is not None:
            await self.resume_conversation(choice.key)

    @work(group="conversations", exclusive=True, exit_on_error=False)
    async def fork_at(self: AntonApp, index: int) -> None:
        """Fork this conversation at the message at history `index` (picked in the chat) and continue in the fork."""
        runtime = self.runtime
        if runtime is None or self._main_screen is None:
            return
        if self._main_screen.busy:
            self.notify("Finish or cancel the running turn first (Escape).", severity="warning")
            return
        numbers = [turn.index for turn in runtime.user_turns()]
        try:
            fork = await runtime.conversations.fork(numbers.index(index) + 1 if index in numbers else None)
        except (LookupError, ValueError, RuntimeError, OSError) as exc:
            self.notify(str(exc), title="Not forked", severity="error")
            return
        await self.resume_conversation(fork.session_id)
        self.notify(f"Forked at your message {fork.at} into {fork.session_id}; {fork.parent} stays as it was.",
                    title="Forked")  # fmt: skip

    def deliver_download(self: AntonApp, text: str, name: str) -> bool:
        """In a browser tab (`anton-tui serve`), hand `text` to the browser as the download `name`; False in a
        terminal, where the caller saves the file instead."""
        from anton_tui.tui.served import deliver_text_file

        return deliver_text_file(self, text, name) is not None

    async def resume_conversation(self: AntonApp, session_id: str | None) -> None:
        """Continue `session_id` (None: the newest) and show it in the chat."""
        runtime = self.runtime
        if runtime is None or self._main_screen is None:
            return
        if self._main_screen.busy:
            self.notify("Finish or cancel the running turn first (Escape).", severity="warning")
            return
        target = session_id or await runtime.newest_conversation()
        if target is None:
            self.notify("No saved conversation to continue in this project.", title="Resume", severity="warning")
            return
        try:
            resumed = await runtime.resume(target)
        except (LookupError, ValueError, RuntimeError, OSError) as exc:
            async with self._showing:
                self._resumed_shown = True
                if self._preview is not None:  # shown early, but not resumed after all
                    self._preview = None
                    await self._main_screen.clear_conversation()
            self.notify(str(exc), title="Not resumed", severity="error", timeout=10)
            return
        where = "Anton's episode log (rebuilt)" if resumed.source == "episodes" else "its saved file"
        heading = f"Resumed conversation {resumed.session_id}: {resumed.turns} turns, from {where}."
        if resumed.lost_pads:
            heading += f" Its scratchpads ({', '.join(resumed.lost_pads)}) ended with the app that ran them."
        entries = runtime.transcript()
        async with self._showing:
            self._resumed_shown = True
            if self._preview == (resumed.session_id, entries):
                self._main_screen.retitle_conversation(heading)
            else:
                await self._main_screen.show_conversation(entries, heading)
            self._preview = None

    @work(thread=True, group="preview", exit_on_error=False)
    def preview_resume(self: AntonApp) -> None:
        """Read the conversation to resume straight from its file and show it, then build the runtime: the chat has
        it in front of the user before the settings are validated and the engine built (both need the one CPU
        Python has: side by side, each would wait for the other). Started when the app mounts, so that the reading
        overlaps the drawing of the first frame (which then often shows the conversation already); the build starts
        once the frame showing it is painted. The resume that follows keeps what is shown, or draws what it resumed
        instead."""
        try:
            preview = self.starter.preview() if self.starter is not None else None
            if preview is not None:
                self.call_from_thread(self._show_preview, *preview)
        finally:
            self.call_from_thread(self.call_after_refresh, self._build_once_painted, LAYOUT_WAITS)

    def _build_once_painted(self: AntonApp, waits: int) -> None:
        """Build the runtime once the conversation shown early is on screen. A refresh can come before the screen
        has taken in the new widgets; once they have their place, the frame that laid them out has painted them."""
        chat = self._main_screen.chat if self._main_screen is not None and self._chat_mounted() else None
        heading = chat.heading if chat is not None else None
        if heading is not None and heading.is_attached and not heading.region and waits > 0:
            self.call_after_refresh(self._build_once_painted, waits - 1)
            return
        self.build_runtime()

    def _chat_mounted(self: AntonApp) -> bool:
        chat = self._main_screen.query("ChatView") if self._main_screen is not None else None
        return bool(chat) and chat.first().is_mounted  # type: ignore[union-attr]

    async def _show_preview(self: AntonApp, session_id: str, entries: list[Any]) -> None:
        for _ in range(SCREEN_WAITS):  # read while the app started, it may come before the screen has its widgets
            if self._main_screen is None or self._chat_mounted():
                break
            await asyncio.sleep(SCREEN_WAIT_S)
        async with self._showing:
            if self._resumed_shown or not self._chat_mounted():
                return  # the resume itself came first
            self._preview = (session_id, entries)
            await self._main_screen.show_conversation(entries, f"Resuming conversation {session_id}…")

    @work(group="conversations", exclusive=True, exit_on_error=False)
    async def resume_at_start(self: AntonApp, session_id: str | None) -> None:
        try:
            await self.resume_conversation(session_id)
        finally:
            if self._main_screen is not None:
                self._main_screen.mount_inspector_if_waiting()  # shown or not, the conversation came first

    @work(group="conversations", exclusive=True, exit_on_error=False)
    async def open_rewind(self: AntonApp) -> None:
        """Go back to before a chosen message: later turns leave the conversation, its text returns to the prompt."""
        from anton_tui.tui.screens.resume import RewindScreen

        runtime = self.runtime
        if runtime is None or self._main_screen is None:
            return
        if self._main_screen.busy:
            self.notify("Finish or cancel the running turn first (Escape).", severity="warning")
            return
        turns = runtime.user_turns()
        if not turns:
            self.notify("Nothing to go back to yet.", title="Rewind")
            return
        choice = await self.push_screen_wait(RewindScreen(turns))
        if choice is not None:
            await self._rewind(turns, int(choice.key))

    @work(group="conversations", exclusive=True, exit_on_error=False)
    async def rewind_to(self: AntonApp, index: int) -> None:
        """Go back to before the message at history `index` (picked in the chat), after the same question."""
        if self.runtime is None or self._main_screen is None:
            return
        if self._main_screen.busy:
            self.notify("Finish or cancel the running turn first (Escape).", severity="warning")
            return
        await self._rewind(self.runtime.user_turns(), index)

    async def _rewind(self: AntonApp, turns: list, index: int) -> None:
        runtime = self.runtime
        dropped = sum(1 for turn in turns if turn.index >= index)
        question = (f"Go back to before this message? {dropped} turn{'s' if dropped > 1 else ''} leave the conversation "
                    "and its saved file; memory they wrote stays.")  # fmt: skip
        if runtime is None or self._main_screen is None or not await self.confirm(question):
            return
        try:
            text = await runtime.rewind(index)
        except (ValueError, RuntimeError, OSError) as exc:
            self.notify(str(exc), title="Not rewound", severity="error")
            return
        await self._main_screen.show_conversation(
            runtime.transcript(), "Went back: your message is in the prompt, to edit and send again."
        )
        self._main_screen.fill_prompt(text)

    # --- questions -----------------------------------------------------------------------------------------------

    async def confirm(self: AntonApp, question: str) -> bool:
        """Ask in a modal; only from a worker (the slash-command worker is one)."""
        from anton_tui.tui.screens.confirm import ConfirmScreen

        return bool(await self.push_screen_wait(ConfirmScreen(question)))

    async def choose_skills(self: AntonApp, source: str, offers: list[Any]) -> list[str] | None:
        """The skills to install out of `offers` (`/skill install`), chosen in a modal; None installs nothing."""
        from anton_tui.tui.screens.install_skills import InstallSkillsScreen

        return await self.push_screen_wait(InstallSkillsScreen(source, offers))

    async def ask_text(self: AntonApp, question: str, current: str = "") -> str | None:
        from anton_tui.tui.screens.edit_entry import EditEntryScreen

        return await self.push_screen_wait(EditEntryScreen(current, title=question))
