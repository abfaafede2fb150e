"""Work a session runs beside its turns: the learners after each turn, a memory question between turns.

`BackgroundWork` keeps these tasks, so they can be waited for (tests, shutdown) and cancelled when the session
closes; a task that fails is logged and reported once as an `ErrorOccurred` event instead of vanishing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from anton_tui.agent.events import ErrorOccurred, SessionEvent

log = logging.getLogger(__name__)


class BackgroundWork:
    """The session's background tasks. `report` sends an event to whoever watches the session."""

    def __init__(self, report: Callable[[SessionEvent], None]) -> None:
        self._report = report
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def tasks(self) -> frozenset[asyncio.Task[None]]:
        """The tasks still running."""
        return frozenset(self._tasks)

    def start(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = asyncio.ensure_future(self._guard(coro, name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # a task cancelled before it ran leaves `coro` unstarted: close it quietly
        task.add_done_callback(lambda done: coro.close() if done.cancelled() else None)
        return task

    async def wait(self, timeout: float | None = None) -> None:
        """Wait for every task, those started meanwhile too; with `timeout`, for one round of at most that long."""
        while self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
            if timeout is not None:
                break

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def _guard(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("background task %s failed", name, exc_info=True)
            self._report(ErrorOccurred(message=f"Background {name} failed: {exc}", retryable=False))
