"""When what only a turn needs is loaded: as soon as the user starts typing, never while the app is only looked at.

The model SDK is the largest single import (some 50 to 60 MB of memory and a second or so of work), and nothing on
the screen needs it, only the first answer; the same goes for the memory's ranking index, what an episode search
needs (the turn index's library and word analysers, some 7 MB; the index itself catches up at start) and the skills'
change feed (an inotify watch per skill folder, which makes each turn's skill listing cheap). Loaded in worker
threads once the user starts writing a message, they are ready by the time the message is sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from anton_tui.runtime.protocols import ModelWarmingUp

logger = logging.getLogger(__name__)


class ModelWarmUp:
    """Loads what the session's turns need once, when it is first likely to be needed: the model SDK, then `also`
    (what an episode search needs and the skills' change feed)."""

    def __init__(self, session: ModelWarmingUp, also: Callable[[], Awaitable[None]] | None = None) -> None:
        self._session = session
        self._also = also
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
        if self._also is not None:
            try:
                await self._also()
            except Exception:  # recall scans the files meanwhile, and the listing checks each skill by stat
                logger.exception("Warming up the episode search or the skills' change feed failed")
