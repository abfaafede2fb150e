"""Builds the user message of a turn that carries notes besides what the user typed (the files mentioned with `@`,
the commands run with `!`).

Without notes the message is the typed text, as always. With notes it is a list of text blocks, the typed text
first: Anton reads such a list as one user turn and takes the first text block for its preview, so a saved
conversation still shows (and rewinds to) what the user typed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def user_content(text: str, notes: Sequence[str] = ()) -> str | list[dict[str, Any]]:
    if not notes:
        return text
    return [{"type": "text", "text": text}, *({"type": "text", "text": note} for note in notes)]
