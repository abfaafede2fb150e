"""Where a session's events go: to the stream of the turn that is running, or to a queue between turns.

`stream(work)` runs one turn's work as a task and yields the events it sends, in order, until the work has ended and
every event it sent is out; an error the work raised is raised there after them. Leaving the stream early cancels
the work. Events sent while no turn runs (background memory writes, a question asked between turns) wait in
`between_turns`. A `ChatSession` holds one `EventRoute`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import Any

from anton_tui.agent.events import SessionEvent


class EventRoute:
    """The running turn's task and where events go meanwhile (see the module docstring)."""

    def __init__(self) -> None:
        self._send: Callable[[SessionEvent], None] = self._send_between_turns
        self._task: asyncio.Task[None] | None = None
        self._between_turns: asyncio.Queue[SessionEvent] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def between_turns(self) -> asyncio.Queue[SessionEvent]:
        """Events sent while no turn runs, for whoever watches the session between turns."""
        if self._between_turns is None:
            self._between_turns = asyncio.Queue()
        return self._between_turns

    def send(self, event: SessionEvent) -> None:
        self._send(event)

    async def stream(self, work: Coroutine[Any, Any, None]) -> AsyncGenerator[SessionEvent, None]:
        """Run `work` as the turn and yield what it sends (see the module docstring)."""
        queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._send = queue.put_nowait
        task = asyncio.create_task(work)
        self._task = task
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                else:
                    getter.cancel()
                while not queue.empty():
                    yield queue.get_nowait()
                if getter not in done:  # the turn has ended, and every event it sent is out
                    break
            if not task.cancelled() and (error := task.exception()) is not None:
                raise error
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self._send = self._send_between_turns

    def cancel(self) -> bool:
        """Cancel the running turn's work; False when none is running."""
        task = self._task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def _send_between_turns(self, event: SessionEvent) -> None:
        self.between_turns.put_nowait(event)
