"""The runtime the app hands the main screen: at once, or after the first frame when the app paints before it builds
the engine. `RuntimeHandover` holds it, lets what needs it wait for it (a message sent early goes once it is there),
and on its arrival gives the screen's parts what they show of it: the banner, the prompt's skills and files, the model
in the header, a suggested first message, and the events of engine work that outlives a turn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from textual.content import Content
from textual.css.query import NoMatches

from anton_tui.tui.messages import SessionEventMessage
from anton_tui.tui.screens.screen_parts import ScreenParts, ScreenWork

if TYPE_CHECKING:
    from anton_tui.agent.events import SessionEvent
    from anton_tui.runtime import Runtime


class HandoverHost(ScreenParts, ScreenWork, Protocol):
    """What the hand-over needs of the screen that receives the runtime (the `MainScreen`)."""


class RuntimeHandover:
    """The runtime of `screen`, None until the app hands it over."""

    def __init__(self, screen: HandoverHost, runtime: Runtime | None) -> None:
        self.screen = screen
        self.runtime = runtime
        self._attached = asyncio.Event()
        if runtime is not None:
            self._attached.set()

    async def ready(self) -> Runtime:
        """The runtime, once the app has built it."""
        await self._attached.wait()
        assert self.runtime is not None
        return self.runtime

    @property
    def attached(self) -> Runtime:
        """The runtime, for what happens only once it is there (its events)."""
        assert self.runtime is not None, "an engine event came before the runtime"
        return self.runtime

    def attach(self, runtime: Runtime, *, inspector_later: bool = False) -> None:
        """Take `runtime` from the app (again: nothing happens); the inspector comes with it, or with
        `inspector_later` waits for `SideColumn.mount_inspector_if_waiting`."""
        if self.runtime is runtime and self._attached.is_set():
            return
        self.runtime = runtime
        self._attached.set()
        self.screen.side.attach(runtime, inspector_later=inspector_later)
        self.arrived(runtime)

    def arrived(self, runtime: Runtime) -> None:
        """The screen's parts take what they show of the runtime (once the screen is mounted)."""
        screen = self.screen
        if runtime.banner:
            screen.call_later(screen.conversation.chat.add_notice, Content(runtime.banner), "info")
        screen.conversation.prompt_bar.attach(runtime)
        self.show_model(runtime)
        self.offer_next_prompt()
        if runtime.background_events is not None:
            screen.run_worker(self._follow(runtime.background_events), group="background-events", exit_on_error=False)

    def show_model(self, runtime: Runtime) -> None:
        """The header follows the runtime's provider, model and memory mode."""
        shown = runtime.first_frame  # the settings as the header shows them
        try:
            header = self.screen.header
        except NoMatches:
            return  # the app is closing: the screen's widgets are already gone
        header.set_model(runtime.provider_label, shown.planning_model, shown.effective_memory_mode)

    def offer_next_prompt(self) -> None:
        """The runtime's suggestion for the next message, in an empty prompt."""
        suggest = self.runtime.suggest_prompt if self.runtime is not None else None
        if suggest is not None:
            self.screen.conversation.offer_prompt(suggest())

    async def _follow(self, queue: asyncio.Queue[SessionEvent]) -> None:
        """Forward events from engine work that outlives a turn (memory written or to confirm after it ended)."""
        while True:
            self.screen.post_message(SessionEventMessage(await queue.get()))
