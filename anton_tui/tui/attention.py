"""Getting the user's attention while the app is in the background: a finished turn, a question waiting for an
answer, or an error rings the terminal bell and sends a desktop notification (OSC 9, or OSC 777 where the terminal
speaks that one), but only while the terminal window is not focused.

Textual tells the app when its terminal gains or loses focus (`AppFocus`/`AppBlur`, from terminals that report it).
`ANTON_NOTIFY_BELL=false` and `ANTON_NOTIFY_DESKTOP=false` turn each off. The text of a notification comes partly
from the model, so every control character is taken out of it before it goes into an escape sequence.

In a browser tab (`anton-tui serve` sets `ANTON_SERVED` for the apps it starts) nothing is sent: the page's terminal
has no bell to ring and no desktop to notify, so what happened stays inside the app, where the answer, the question
or the error is on screen when the user comes back to the tab.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Protocol

from anton_tui.serve import SERVED_ENV

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f;]+")
MAX_BODY = 200


def clean(text: str) -> str:
    """One line without control characters (nor `;`, which OSC 777 uses between its fields)."""
    return " ".join(_CONTROL.sub(" ", text).split())[:MAX_BODY]


def osc_sequence(title: str, body: str, environ: Mapping[str, str] | None = None) -> str:
    """OSC 777 for the terminals that use it (rxvt, foot), OSC 9 (iTerm2, WezTerm, kitty, Windows Terminal…)
    for the rest."""
    env = os.environ if environ is None else environ
    term = env.get("TERM", "")
    if term.startswith(("rxvt", "foot")):
        return f"\x1b]777;notify;{clean(title)};{clean(body)}\x1b\\"
    return f"\x1b]9;{clean(title)}: {clean(body)}\x1b\\"


class AttentionSettings(Protocol):
    """The settings that turn each kind off (`ANTON_NOTIFY_BELL`, `ANTON_NOTIFY_DESKTOP`)."""

    @property
    def notify_bell(self) -> bool: ...

    @property
    def notify_desktop(self) -> bool: ...


class Attention:
    """Rings and notifies through `write` (the terminal) while `focused` is false; `sent` keeps what it wrote.
    `served` (by default: whether `ANTON_SERVED` is set) sends nothing."""

    def __init__(
        self, write: Callable[[str], None], *, bell: bool = True, desktop: bool = True, served: bool | None = None
    ) -> None:
        self.write = write
        self.bell = bell
        self.desktop = desktop
        self.served = SERVED_ENV in os.environ if served is None else served
        self.focused = True
        self.sent: list[str] = []

    def follow(self, settings: AttentionSettings) -> None:
        """Ring and notify as `settings` say."""
        self.bell = settings.notify_bell
        self.desktop = settings.notify_desktop

    def alert(self, title: str, body: str) -> None:
        if self.focused or self.served:
            return
        sequences = (["\a"] if self.bell else []) + ([osc_sequence(title, body)] if self.desktop else [])
        for sequence in sequences:
            self.sent.append(sequence)
            self.write(sequence)
