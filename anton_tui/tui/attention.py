"""Getting the user's attention while the app is in the background: a finished turn, a question waiting for an
answer, or an error rings the terminal bell and sends a desktop notification (OSC 9, or OSC 777 where the terminal
speaks that one), but only while the terminal window is not focused.

Textual tells the app when its terminal gains or loses focus (`AppFocus`/`AppBlur`, from terminals that report it).
`ANTON_NOTIFY_BELL=false` and `ANTON_NOTIFY_DESKTOP=false` turn each off. The text of a notification comes partly
from the model, so every control character is taken out of it before it goes into an escape sequence.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Protocol

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
    """Rings and notifies through `write` (the terminal) while `focused` is false; `sent` keeps what it wrote."""

    def __init__(self, write: Callable[[str], None], *, bell: bool = True, desktop: bool = True) -> None:
        self.write = write
        self.bell = bell
        self.desktop = desktop
        self.focused = True
        self.sent: list[str] = []

    def follow(self, settings: AttentionSettings) -> None:
        """Ring and notify as `settings` say."""
        self.bell = settings.notify_bell
        self.desktop = settings.notify_desktop

    def alert(self, title: str, body: str) -> None:
        if self.focused:
            return
        sequences = (["\a"] if self.bell else []) + ([osc_sequence(title, body)] if self.desktop else [])
        for sequence in sequences:
            self.sent.append(sequence)
            self.write(sequence)
