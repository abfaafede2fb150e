"""What the app does with the conversation when a command, the palette or the chat asks: start a turn or a `/goal` as
if typed, put text in the prompt, forget the conversation (`/clear`), continue a saved one (`/resume`, `--continue`),
go back to before one of the user's messages (`/rewind`, or `r` on a message picked in the chat) and fork there
(`f` on a picked message).

`ConversationActions` is held by the app and works on the main screen and the runtime; the engine's part goes
through the `Runtime`, the screen's part through `MainScreen`. A conversation resumed at start-up is read straight
from its file and shown while the engine is built (`preview`), so the user sees it before the settings are even
validated; the resume that follows keeps what is shown, or draws what it resumed instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from anton_tui.tui.messages import ChatCleared

if TYPE_CHECKING:
    from textual.app import App

    from anton_tui.runtime import Runtime, RuntimeStarter
    from anton_tui.tui.screens.main import MainScreen

SCREEN_WAITS, SCREEN_WAIT_S = 400, 0.005  # how long a conversation read at start-up waits for the main screen: 2 s
LAYOUT_WAITS = 10  # refreshes the engine's build waits at most for the screen to lay out a conversation shown early
BUSY = "Finish or cancel the running turn first (Escape)."


class NumberedTurn(Protocol):
    """One of the user's messages, by its place in the history (`Runtime.user_turns`)."""

    @property
    def index(self) -> int: ...


@runtime_checkable
class NamedSession(Protocol):
    """A session whose conversation is saved under an id (the real `ChatSession`; a scripted one has none)."""

    session_id: str


class ConversationActions:
    """The conversation's actions for `app`; `screen` is the main screen (None until the app has made it) and
    `runtime` the engine (None until it is built). `confirm` asks the user a yes/no question in a modal;
    `cursor_blink` is the app's setting for the text fields of the screens it opens."""

    def __init__(self, app: App[Any], *, confirm: Callable[[str], Awaitable[bool]], cursor_blink: bool) -> None:
        self.app = app
        self.confirm = confirm
        self.cursor_blink = cursor_blink
        self.screen: MainScreen | None = None
        self.runtime: Runtime | None = None
        self._preview: tuple[str, list[Any]] | None = None  # the conversation shown before its resume
        self._resumed_shown = False
        self._showing = asyncio.Lock()  # one conversation drawn into the chat at a time

    # --- as if typed ---------------------------------------------------------------------------------------------

    def send_prompt(self, text: str) -> None:
        """Start a turn with `text`, as if the user had typed it (a skill's own slash command does this)."""
        if self.screen is not None:
            self.screen.call_later(self.screen.send, text)

    def fill_prompt(self, text: str) -> None:
        """Put `text` in the prompt, to be finished and sent by the user."""
        if self.screen is not None:
            self.screen.fill_prompt(text)

    def start_goal(self, objective: str, max_turns: int) -> str | None:
        """Work on `objective` over up to `max_turns` turns (/goal); the reason when it cannot start now."""
        if self.screen is None:
            return "Still starting; try again in a moment."
        return self.screen.start_goal(objective, max_turns)

    def clear_chat(self) -> None:
        if self.runtime is not None:
            self.runtime.new_conversation()
        if self.screen is not None:
            self.screen.post_message(ChatCleared())

    # --- saved conversations -------------------------------------------------------------------------------------

    def open_resume(self) -> None:
        """The list of saved conversations (renamed, forked, exported or deleted there); the one chosen continues
        here."""
        self.app.run_worker(self._choose_and_resume(), group="conversations", exclusive=True, exit_on_error=False)

    async def _choose_and_resume(self) -> None:
        from anton_tui.tui.screens.resume import ResumeScreen

        runtime = self.runtime
        if runtime is None:
            return
        sessions = await runtime.conversations.tree()
        if not sessions:
            self.app.notify("No saved conversations in this project yet.", title="Resume")
            return
        screen = ResumeScreen(
            sessions, current=runtime.conversations.current, runtime=runtime, cursor_blink=self.cursor_blink
        )
        choice = await self.app.push_screen_wait(screen)
        if choice is not None:
            await self.resume(choice.key)

    def fork_at(self, index: int) -> None:
        """Fork this conversation at the message at history `index` (picked in the chat) and continue in the fork."""
        self.app.run_worker(self._fork_at(index), group="conversations", exclusive=True, exit_on_error=False)

    async def _fork_at(self, index: int) -> None:
        runtime, screen = self.runtime, self.screen
        if runtime is None or screen is None:
            return
        if screen.busy:
            self.app.notify(BUSY, severity="warning")
            return
        numbers = [turn.index for turn in runtime.user_turns()]
        try:
            fork = await runtime.conversations.fork(numbers.index(index) + 1 if index in numbers else None)
        except (LookupError, ValueError, RuntimeError, OSError) as exc:
            self.app.notify(str(exc), title="Not forked", severity="error")
            return
        await self.resume(fork.session_id)
        self.app.notify(f"Forked at your message {fork.at} into {fork.session_id}; {fork.parent} stays as it was.",
                        title="Forked")  # fmt: skip

    async def resume(self, session_id: str | None) -> None:
        """Continue `session_id` (None: the newest) and show it in the chat."""
        runtime, screen = self.runtime, self.screen
        if runtime is None or screen is None:
            return
        if screen.busy:
            self.app.notify(BUSY, severity="warning")
            return
        target = session_id or await runtime.newest_conversation()
        if target is None:
            self.app.notify("No saved conversation to continue in this project.", title="Resume", severity="warning")
            return
        try:
            resumed = await runtime.resume(target)
        except (LookupError, ValueError, RuntimeError, OSError) as exc:
            async with self._showing:
                self._resumed_shown = True
                if self._preview is not None:  # shown early, but not resumed after all
                    self._preview = None
                    await screen.clear_conversation()
            self.app.notify(str(exc), title="Not resumed", severity="error", timeout=10)
            return
        where = "Anton's episode log (rebuilt)" if resumed.source == "episodes" else "its saved file"
        heading = f"Resumed conversation {resumed.session_id}: {resumed.turns} turns, from {where}."
        if resumed.lost_pads:
            heading += f" Its scratchpads ({', '.join(resumed.lost_pads)}) ended with the app that ran them."
        entries = runtime.transcript()
        async with self._showing:
            self._resumed_shown = True
            if self._preview == (resumed.session_id, entries):
                screen.retitle_conversation(heading)
            else:
                await screen.show_conversation(entries, heading)
            self._preview = None

    def resume_at_start(self, session_id: str | None) -> None:
        """`--resume`/`--continue`: continue the conversation, then mount the inspector that waited for it."""
        self.app.run_worker(self._resume_at_start(session_id), group="conversations", exclusive=True,
                            exit_on_error=False)  # fmt: skip

    async def _resume_at_start(self, session_id: str | None) -> None:
        try:
            await self.resume(session_id)
        finally:
            if self.screen is not None:
                self.screen.mount_inspector_if_waiting()  # shown or not, the conversation came first

    def drop_preview(self) -> None:
        """The conversation shown early will not be resumed now (the setup must come first): it leaves the chat."""
        if self._preview is not None and self.screen is not None:
            self._preview = None
            self.screen.call_later(self.screen.clear_conversation)

    # --- shown early, while the engine is built --------------------------------------------------------------------

    def preview(self, starter: RuntimeStarter, then_build: Callable[[], object]) -> None:
        """Read the conversation to resume straight from its file and show it, then build the runtime (`then_build`):
        the chat has it in front of the user before the settings are validated and the engine built (both need the
        one CPU Python has: side by side, each would wait for the other). Called when the app mounts, so that the
        reading overlaps the drawing of the first frame (which then often shows the conversation already); the build
        starts once the frame showing it is painted."""
        self.app.run_worker(
            lambda: self._read_preview(starter, then_build), thread=True, group="preview", exit_on_error=False
        )

    def _read_preview(self, starter: RuntimeStarter, then_build: Callable[[], object]) -> None:
        try:
            preview = starter.preview()
            if preview is not None:
                session_id, entries = preview
                self.app.call_from_thread(self._show_preview, session_id, entries)  # type: ignore[arg-type]  # mypy reads Textual's `T | Awaitable[T]` as Awaitable[Never] for a coroutine function
        finally:
            self.app.call_from_thread(self.app.call_after_refresh, self._build_once_painted, then_build, LAYOUT_WAITS)

    def _build_once_painted(self, build: Callable[[], object], waits: int) -> None:
        """Build the runtime once the conversation shown early is on screen. A refresh can come before the screen
        has taken in the new widgets; once they have their place, the frame that laid them out has painted them."""
        chat = self.screen.chat if self.screen is not None and self._chat_mounted() else None
        heading = chat.heading if chat is not None else None
        if heading is not None and heading.is_attached and not heading.region and waits > 0:
            self.app.call_after_refresh(self._build_once_painted, build, waits - 1)
            return
        build()

    def _chat_mounted(self) -> bool:
        from anton_tui.tui.widgets.chat import ChatView

        found = self.screen.query(ChatView) if self.screen is not None else None
        return found is not None and bool(found) and found.first().is_mounted

    async def _show_preview(self, session_id: str, entries: list[Any]) -> None:
        for _ in range(SCREEN_WAITS):  # read while the app started, it may come before the screen has its widgets
            if self.screen is None or self._chat_mounted():
                break
            await asyncio.sleep(SCREEN_WAIT_S)
        async with self._showing:
            if self._resumed_shown or self.screen is None or not self._chat_mounted():
                return  # the resume itself came first
            self._preview = (session_id, entries)
            await self.screen.show_conversation(entries, f"Resuming conversation {session_id}…")

    # --- going back ----------------------------------------------------------------------------------------------

    def open_rewind(self) -> None:
        """Go back to before a chosen message: later turns leave the conversation, its text returns to the prompt."""
        self.app.run_worker(self._choose_and_rewind(), group="conversations", exclusive=True, exit_on_error=False)

    async def _choose_and_rewind(self) -> None:
        from anton_tui.tui.screens.resume import RewindScreen

        runtime = self.runtime
        if runtime is None or self.screen is None:
            return
        if self.screen.busy:
            self.app.notify(BUSY, severity="warning")
            return
        turns = runtime.user_turns()
        if not turns:
            self.app.notify("Nothing to go back to yet.", title="Rewind")
            return
        choice = await self.app.push_screen_wait(RewindScreen(turns))
        if choice is not None:
            await self._rewind(turns, int(choice.key))

    def rewind_to(self, index: int) -> None:
        """Go back to before the message at history `index` (picked in the chat), after the same question."""
        self.app.run_worker(self._rewind_to(index), group="conversations", exclusive=True, exit_on_error=False)

    async def _rewind_to(self, index: int) -> None:
        if self.runtime is None or self.screen is None:
            return
        if self.screen.busy:
            self.app.notify(BUSY, severity="warning")
            return
        await self._rewind(self.runtime.user_turns(), index)

    async def _rewind(self, turns: Sequence[NumberedTurn], index: int) -> None:
        runtime, screen = self.runtime, self.screen
        dropped = sum(1 for turn in turns if turn.index >= index)
        question = (f"Go back to before this message? {dropped} turn{'s' if dropped > 1 else ''} leave the conversation "
                    "and its saved file; memory they wrote stays.")  # fmt: skip
        if runtime is None or screen is None or not await self.confirm(question):
            return
        try:
            text = await runtime.rewind(index)
        except (ValueError, RuntimeError, OSError) as exc:
            self.app.notify(str(exc), title="Not rewound", severity="error")
            return
        await screen.show_conversation(
            runtime.transcript(), "Went back: your message is in the prompt, to edit and send again."
        )
        screen.fill_prompt(text)
