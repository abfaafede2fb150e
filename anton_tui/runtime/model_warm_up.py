"""When the model SDK is imported: as soon as the user starts typing, or `MODEL_WARM_UP_AFTER_S` after the
warm-up at the latest, never during the first seconds of an app that is only being looked at.

The SDK is the largest single import (some 50 MB of memory and a second or so of work); imported in a worker
thread while the user types, it is ready by the time the message is sent.
"""

from __future__ import annotations

import asyncio
import logging

from anton_tui.runtime.protocols import ModelWarmingUp

logger = logging.getLogger(__name__)

MODEL_WARM_UP_AFTER_S = 10.0


class ModelWarmUp:
    """Imports the session's model SDK once, when it is first likely to be needed."""

    def __init__(self, session: ModelWarmingUp) -> None:
        self._session = session
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def schedule(self, delay: float | None = None) -> None:
        """Warm the model up after `delay` seconds (`MODEL_WARM_UP_AFTER_S` by default) unless asked sooner."""
        if self._task is not None or self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(MODEL_WARM_UP_AFTER_S if delay is None else delay, self.start)

    def start(self) -> asyncio.Task[None]:
        """Start importing the model SDK in the background (once); the user started typing, say."""
        self.cancel()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._warm())
        return self._task

    def cancel(self) -> None:
        """Drop the scheduled warm-up (one already running goes on)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _warm(self) -> None:
        try:
            await self._session.warm_up_model()
        except Exception:  # the first turn imports it then, and reports what goes wrong
            logger.exception("Warming up the model SDK failed")
