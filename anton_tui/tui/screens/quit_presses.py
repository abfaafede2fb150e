"""Ctrl+C with nothing running and an empty prompt, as in other agent CLIs: the first press says how to quit, and a
second one within `QUIT_AGAIN_WITHIN` seconds quits."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App

QUIT_AGAIN_WITHIN = 2.0  # seconds


class QuitHost(Protocol):
    """What the presses need of the screen that counts them (the `MainScreen`)."""

    @property
    def app(self) -> App[Any]: ...
    def notify(self, message: str, *, timeout: float | None = None) -> None: ...


class QuitPresses:
    """When Ctrl+C last said how to quit, on `screen`."""

    def __init__(self, screen: QuitHost) -> None:
        self.screen = screen
        self._asked_at: float | None = None

    def forget(self) -> None:
        """Ctrl+C stopped something or emptied the prompt: the next press on an empty prompt asks again."""
        self._asked_at = None

    def press(self) -> None:
        """Ctrl+C on an idle, empty prompt: quit when it came again in time, else say how to quit."""
        now = time.monotonic()
        if self._asked_at is not None and now - self._asked_at < QUIT_AGAIN_WITHIN:
            self.screen.app.exit()
            return
        self._asked_at = now
        self.screen.notify("Press Ctrl+C again to quit (or Ctrl+Q).", timeout=QUIT_AGAIN_WITHIN)
