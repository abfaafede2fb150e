"""When the model SDK is imported: as soon as the user starts typing, never while the app is only being looked at.

The SDK is the largest single import (some 50 to 60 MB of memory and a second or so of work): nothing on the screen
needs it, only the first answer. Imported in a worker thread once the user starts writing a message, it is ready by
the time the message is sent.
"""

from __future__ import annotations

import asyncio
import logging

from anton_tui.runtime.protocols import ModelWarmingUp

logger = logging.getLogger(__name__)


class ModelWarmUp:
    """Imports the session's model SDK once, when it is first likely to be needed."""

    def __init__(self, session: ModelWarmingUp) -> None:
        self._session = session
        self._task: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        """Start importing the model SDK in the background (once); the user started typing, say."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._warm())
        return self._task

    async def _warm(self) -> None:
        try:
            await self._session.warm_up_model()
        except Exception:  # the first turn imports it then, and reports what goes wrong
            logger.exception("Warming up the model SDK failed")
