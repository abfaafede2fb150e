"""What the agent saw: which rules, lessons, profile lines and skills went into a turn's request, with their sizes.

`ChatSession.system_prompt()` builds the request's memory sections; `context_report(...)` splits those same
sections into their lines (identity, rules and lessons per scope, skills, and the scratchpad wisdom given with the
scratchpad tool) and counts characters and estimated tokens (characters divided by the ratio the session has
learned from the provider, as `context_window.RequestSizer` does). The session keeps the report of its current turn
and of the last few (`ContextReports`); the Context tab shows the current one.
"""

from __future__ import annotations

import dataclasses
import math
import re

_SECTION = re.compile(r"^## Your Memory — (?P<what>.+)$")
KEEP = 20  # turns whose reports are kept


@dataclasses.dataclass(frozen=True, slots=True)
class ContextItem:
    section: str  # identity | rules | lessons | skills | scratchpad
    scope: str  # global | project | ""
    text: str
    chars: int
    tokens: int


@dataclasses.dataclass(frozen=True, slots=True)
class ContextReport:
    turn: int
    items: tuple[ContextItem, ...] = ()
    system_chars: int = 0
    chars_per_token: float = 4.0

    @property
    def chars(self) -> int:
        return sum(item.chars for item in self.items)

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)

    def totals(self) -> dict[str, tuple[int, int, int]]:
        """Per section: (lines, characters, tokens)."""
        found: dict[str, tuple[int, int, int]] = {}
        for item in self.items:
            lines, chars, tokens = found.get(item.section, (0, 0, 0))
            found[item.section] = (lines + 1, chars + item.chars, tokens + item.tokens)
        return found


def _item(section: str, scope: str, line: str, ratio: float) -> ContextItem:
    chars = len(line) + 1
    return ContextItem(section, scope, line.strip(), chars, math.ceil(chars / ratio))


def context_report(turn: int, memory: str, skills: str, wisdom: str, system_chars: int, ratio: float) -> ContextReport:
    """Split the memory sections, the skills section and the scratchpad wisdom of a request into counted lines."""
    ratio = ratio if ratio > 0 else 4.0
    items: list[ContextItem] = []
    section = scope = ""
    for line in memory.splitlines():
        if match := _SECTION.match(line):
            words = match.group("what").split()
            section = words[-1].lower() if words else ""
            scope = words[0].lower() if len(words) > 1 else "global"
            continue
        if line.strip().startswith("- "):
            items.append(_item(section, scope, line, ratio))
    items += [_item("skills", "", line, ratio) for line in skills.splitlines() if line.startswith("- ")]
    items += [_item("scratchpad", "", line, ratio) for line in wisdom.splitlines() if line.startswith("- ")]
    return ContextReport(turn, tuple(items), system_chars, ratio)


class ContextReports:
    """The reports of the last `KEEP` turns, by turn number."""

    def __init__(self) -> None:
        self.by_turn: dict[int, ContextReport] = {}

    def record(self, report: ContextReport) -> None:
        self.by_turn[report.turn] = report
        for old in sorted(self.by_turn)[:-KEEP]:
            del self.by_turn[old]

    def latest(self) -> ContextReport | None:
        return self.by_turn[max(self.by_turn)] if self.by_turn else None
