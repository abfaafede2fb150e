"""What the agent saw: which rules, lessons, profile lines and skills went into a turn's request, with their sizes.

`ChatSession.system_prompt()` chooses the request's memory (`engrams.selection`); `report_from_selection(...)` lists
its lines (the memory files at the front, the profile, rules and lessons per scope, each pinned, ranked in with its
score, or left out with the reason; the skills, the preloaded skills, and the scratchpad wisdom given with the
scratchpad tool) and counts characters and estimated tokens (characters divided by the ratio the session has learned
from the provider, as `context_window.RequestSizer` does). `context_report(...)` does the same from memory sections
given as text (every line in them was sent). Of the entries left out, the best-scored `LEFT_OUT_KEPT` are kept, and
the rest counted. The session keeps the report of every turn of the
conversation (`ContextReports`, emptied when a new conversation starts or one is resumed, trimmed on a rewind); the
Context tab shows the current one, and a turn picked in the chat shows its own. A report names the message that
started its turn, so `match_from_end` can tell which typed message in the history (or in the chat) it belongs to.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anton_tui.memory.engrams.selection import MemorySelection

_SECTION = re.compile(r"^## Your Memory — (?P<what>.+)$")
KEEP = 1000  # turns whose reports are kept (lines shared between turns are stored once)
LEFT_OUT_KEPT = 300  # entries left out that a report lists (the best-scored first); the rest are counted


@dataclasses.dataclass(frozen=True, slots=True)
class ContextItem:
    section: str  # memory file | identity | rules | lessons | skills | skill | scratchpad
    scope: str  # global | project | operator | user | local | ""
    text: str
    chars: int
    tokens: int
    status: str = "sent"  # sent | pinned | ranked | left out
    score: float | None = None  # BM25 against the turn, for ranked entries
    why: str = ""  # why pinned or left out

    @property
    def sent(self) -> bool:
        return self.status != "left out"


@dataclasses.dataclass(frozen=True, slots=True)
class ContextReport:
    turn: int
    items: tuple[ContextItem, ...] = ()
    system_chars: int = 0
    chars_per_token: float = 4.0
    user_text: str = ""  # the message that started the turn
    budget_tokens: int | None = None  # the ranked memory's budget (None: memory was not ranked)
    ranked_tokens: int = 0  # of that budget, what the ranked entries took
    left_out_more: int = 0  # entries left out beyond those listed

    @property
    def chars(self) -> int:
        return sum(item.chars for item in self.items if item.sent)

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items if item.sent)

    def count(self, status: str) -> int:
        """Items of one status (``left out`` includes those counted but not listed)."""
        listed = sum(1 for item in self.items if item.status == status)
        return listed + (self.left_out_more if status == "left out" else 0)

    def totals(self) -> dict[str, tuple[int, int, int]]:
        """Per section: (lines, characters, tokens) of what was sent."""
        found: dict[str, tuple[int, int, int]] = {}
        for item in self.items:
            if not item.sent:
                continue
            lines, chars, tokens = found.get(item.section, (0, 0, 0))
            found[item.section] = (lines + 1, chars + item.chars, tokens + item.tokens)
        return found


def _item(section: str, scope: str, line: str, ratio: float, status: str = "sent", score: float | None = None,
          why: str = "") -> ContextItem:  # fmt: skip
    chars = len(line) + 1
    return ContextItem(section, scope, line.strip(), chars, math.ceil(chars / ratio), status, score, why)


_SECTIONS = {"profile": "identity", "lesson": "lessons"}
_STATUS = {"pinned": "pinned", "loaded": "ranked", "left_out": "left out"}


def report_from_selection(
    turn: int,
    selection: MemorySelection,
    *,
    files: Sequence[tuple[str, str, str]] = (),
    preloaded: Sequence[str] = (),
    skills: str = "",
    wisdom: str = "",
    system_chars: int = 0,
    ratio: float = 4.0,
    user_text: str = "",
) -> ContextReport:
    """The report of a request whose memory is `selection`; `files`: its memory files as (level, name, text),
    `preloaded`: the recall texts of the skills preloaded at its front."""
    ratio = ratio if ratio > 0 else 4.0
    items = [_item("memory file", level, f"{name}: {text}", ratio, "pinned", why="memory file") for level, name, text
             in files]  # fmt: skip
    items += [_item("skill", "", text, ratio, "pinned", why="preloaded") for text in preloaded]
    left: list[ContextItem] = []
    for entry in selection.items:
        section = _SECTIONS.get(entry.kind, "rules")
        made = _item(section, entry.scope, entry.line, ratio, _STATUS[entry.status], entry.score, entry.why)
        (left if entry.status == "left_out" else items).append(made)
    items += [_item("skills", "", line, ratio) for line in skills.splitlines() if line.startswith("- ")]
    items += [_item("scratchpad", "", line, ratio) for line in wisdom.splitlines() if line.startswith("- ")]
    left.sort(key=lambda item: -(item.score or 0.0))
    return ContextReport(
        turn, tuple(items + left[:LEFT_OUT_KEPT]), system_chars, ratio, user_text, selection.budget_tokens,
        selection.ranked_tokens, max(0, len(left) - LEFT_OUT_KEPT),
    )  # fmt: skip


def context_report(
    turn: int, memory: str, skills: str, wisdom: str, system_chars: int, ratio: float, user_text: str = ""
) -> ContextReport:
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
    return ContextReport(turn, tuple(items), system_chars, ratio, user_text)


def match_from_end(left: Sequence[str], right: Sequence[str]) -> dict[int, int]:
    """Pair equal texts of two lists of messages in order, starting from the newest (the end): position in `left` →
    position in `right`. A text with no partner further back (a pruned, dropped or older message) stays unpaired."""
    pairs: dict[int, int] = {}
    upper = len(right)
    for i in range(len(left) - 1, -1, -1):
        for j in range(upper - 1, -1, -1):
            if right[j] == left[i]:
                pairs[i] = j
                upper = j
                break
    return pairs


class ContextReports:
    """The reports of this conversation's turns (the last `KEEP`), by turn number."""

    def __init__(self) -> None:
        self.by_turn: dict[int, ContextReport] = {}
        self._lines: dict[ContextItem, ContextItem] = {}  # one copy of a line the turns share

    def record(self, report: ContextReport) -> None:
        if len(self._lines) > 50 * KEEP:
            self._lines.clear()
        shared = tuple(self._lines.setdefault(item, item) for item in report.items)
        self.by_turn[report.turn] = dataclasses.replace(report, items=shared)
        for old in sorted(self.by_turn)[:-KEEP]:
            del self.by_turn[old]

    def clear(self) -> None:
        """A new conversation: no turn of the old one is shown any more."""
        self.by_turn.clear()
        self._lines.clear()

    def drop_from(self, turn: int) -> None:
        """Turns from `turn` on left the conversation (a rewind)."""
        for number in [n for n in self.by_turn if n >= turn]:
            del self.by_turn[number]

    def turn_numbers(self, texts: Sequence[str]) -> list[int | None]:
        """For the typed messages of the history (oldest first), the turn each one started, when its report is kept."""
        turns = sorted(self.by_turn)
        pairs = match_from_end(list(texts), [self.by_turn[turn].user_text for turn in turns])
        return [turns[pairs[i]] if i in pairs else None for i in range(len(texts))]

    def latest(self) -> ContextReport | None:
        return self.by_turn[max(self.by_turn)] if self.by_turn else None
