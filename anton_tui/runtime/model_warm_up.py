"""When the model SDK is imported: as soon as the user starts typing, or `MODEL_WARM_UP_AFTER_S` after the
warm-up at the latest, never during the first seconds of an app that is only being looked at.

The SDK is the largest single import (some 50 MB of memory and a second or so of work); imported in a worker
thread while the user types, it is ready by the time the message is sent. `Runtime` takes these methods from
`ModelWarmUpOps`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger(__name__)

MODEL_WARM_UP_AFTER_S = 10.0


class ModelWarmUpOps:
    """The Runtime's model warm-up (it uses its `session`)."""

    session: Any
    _model_warm_up: asyncio.Task[None] | None = None
    _model_timer: asyncio.TimerHandle | None = None

    def schedule_model_warm_up(self, delay: float | None = None) -> None:
        """Warm the model up after `delay` seconds (`MODEL_WARM_UP_AFTER_S` by default) unless asked sooner."""
        if self._model_warm_up is not None or self._model_timer is not None:
            return
        loop = asyncio.get_running_loop()
        self._model_timer = loop.call_later(MODEL_WARM_UP_AFTER_S if delay is None else delay, self.warm_up_model)

    def warm_up_model(self) -> asyncio.Task[None] | None:
        """Start importing the model SDK in the background (once); the user started typing, say."""
        if self._model_timer is not None:
            self._model_timer.cancel()
            self._model_timer = None
        warm = getattr(self.session, "warm_up_model", None)
        if self._model_warm_up is None and warm is not None:
            self._model_warm_up = asyncio.get_running_loop().create_task(self._warm_model(warm))
        return self._model_warm_up

    def cancel_model_warm_up(self) -> None:
        if self._model_timer is not None:
            self._model_timer.cancel()
            self._model_timer = None

    @staticmethod
    async def _warm_model(warm: Any) -> None:
        try:
            await warm()
        except Exception:  # the first turn imports it then, and reports what goes wrong
            logger.exception("Warming up the model SDK failed")
