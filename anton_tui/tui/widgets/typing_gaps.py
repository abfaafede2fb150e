"""Heavy chat updates kept out of the way of the keyboard.

Handing streamed text to the chat, starting a new part of an answer and keeping a finished part's lines each lay
the screen out again, which takes tens of milliseconds; a key pressed meanwhile waits for it. So while the user
types, such jobs run one per keystroke, each right after a keystroke has been shown, when the next key is furthest
away. When the typing pauses (`QUIET` without a keystroke), whatever still waits runs, and `on_pause` is called.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

QUIET = 0.12  # seconds without a keystroke that count as a pause in the typing

Job = Callable[[], Awaitable[Any] | Any]


class TypingGaps:
    """Runs the jobs of `owner` (a widget) where they do not delay a keystroke's echo."""

    def __init__(self, owner: Widget, on_pause: Callable[[], Any] | None = None) -> None:
        self._owner = owner
        self._on_pause = on_pause
        self._last_keystroke = float("-inf")
        self._waiting: list[Job] = []
        self._quiet_timer: Timer | None = None

    @property
    def typing(self) -> bool:
        return time.monotonic() - self._last_keystroke < QUIET

    def run(self, job: Job) -> None:
        """Run `job` next, unless the user is typing: then it waits for a gap (once, however often asked for)."""
        if not self.typing and not self._waiting:
            self._owner.call_later(job)
        elif job not in self._waiting:
            self._waiting.append(job)

    def keystroke(self) -> None:
        """A keystroke has just been painted: the oldest waiting job runs now, in the gap before the next key."""
        self._last_keystroke = time.monotonic()
        if self._waiting:
            self._owner.call_later(self._waiting.pop(0))
        if self._quiet_timer is None:
            self._quiet_timer = self._owner.set_timer(QUIET, self._check_quiet)

    def _check_quiet(self) -> None:
        self._quiet_timer = None
        if self.typing:
            self._quiet_timer = self._owner.set_timer(
                self._last_keystroke + QUIET - time.monotonic(), self._check_quiet
            )
            return
        jobs, self._waiting = self._waiting, []
        for job in jobs:
            self._owner.call_later(job)
        if self._on_pause is not None:
            self._on_pause()
