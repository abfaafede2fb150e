"""Splits a typed slash command into its words: `/memory rules edit 3 new text` → name `memory`, words after it."""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMAND = re.compile(r"/([^/\s]\S*)(.*)\Z", re.DOTALL)


@dataclass(frozen=True)
class ParsedCommand:
    """`name` is the first word without the slash, lowercased; `words` are the rest; `rest` is the raw remainder."""

    name: str
    words: tuple[str, ...]
    rest: str

    def after(self, count: int) -> str:
        """The raw text after the first `count` words of `rest` (keeps inner spacing of free text such as a hint)."""
        parts = self.rest.split(None, count)
        return parts[count].strip() if len(parts) > count else ""


def parse(text: str) -> ParsedCommand | None:
    """The command in `text`, or None when it is not one (no leading `/`, a bare `/`, or `//` to send a slash)."""
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    name, rest = match.group(1), match.group(2).strip()
    return ParsedCommand(name.lower(), tuple(rest.split()), rest)
