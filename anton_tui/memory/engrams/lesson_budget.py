"""Reading a character budget's worth of rules or lessons for the prompt without walking every entry: lines are kept
in order while they fit, and the shortest entry still to come tells when nothing more can fit, so a long file costs
only what it gives. The figures are worked out once per parse of a file (`walks_of`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anton_tui.memory.engrams.engram import ParsedFile


def within(lines: list[str], char_budget: int | None, shortest_after: list[int] | None = None) -> list[str]:
    """Keep lines in order while they fit; a line that does not fit is skipped and the next ones still get a chance.

    With `shortest_after` (the smallest ``len(line) + 1`` from each position on) it stops as soon as no later line
    can fit, so a long list costs only what it keeps.
    """
    if char_budget is None:
        return lines
    kept, used = [], 0
    for index, line in enumerate(lines):
        if shortest_after is not None and char_budget - used < shortest_after[index]:
            break
        if used + len(line) + 1 <= char_budget:
            kept.append(line)
            used += len(line) + 1
    return kept


def running_min(costs: list[int]) -> list[int]:
    """`out[i]` is the smallest of `costs[:i + 1]`."""
    out, smallest = [], 1 << 62
    for cost in costs:
        smallest = min(smallest, cost)
        out.append(smallest)
    return out


class Walks:
    """What prompt building needs from one parse, worked out once per parse: the rule lines of each kind and the
    shortest entry before or after each position, so reading a budget's worth stops as soon as nothing more fits."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self._lessons: dict[bool, list[int]] = {}
        self._rules: dict[tuple[str, bool], tuple[list[str], list[int]]] = {}

    def shortest_lesson_upto(self, exclude_scratchpad: bool) -> list[int]:
        """For each lesson, the smallest cost (text length + 1) of it and the lessons before it (in the walk)."""
        if exclude_scratchpad not in self._lessons:
            parsed = self.parsed
            costs = [
                1 << 62 if exclude_scratchpad and related else len(e.text) + 1
                for e, related in zip(parsed.entries, parsed.related, strict=False)
            ]
            self._lessons[exclude_scratchpad] = running_min(costs)
        return self._lessons[exclude_scratchpad]

    def rule_lines(self, kind: str, exclude_scratchpad: bool) -> tuple[list[str], list[int]]:
        """The ``- text`` lines of one kind in file order, with the shortest line cost from each position on."""
        key = (kind, exclude_scratchpad)
        if key not in self._rules:
            parsed = self.parsed
            lines = [
                f"- {e.text}"
                for e, related in zip(parsed.entries, parsed.related, strict=False)
                if e.kind == kind and not (exclude_scratchpad and kind == "when" and related)
            ]
            self._rules[key] = (lines, running_min([len(line) + 1 for line in reversed(lines)])[::-1])
        return self._rules[key]


_walks: dict[int, Walks] = {}


def walks_of(parsed: ParsedFile) -> Walks:
    walks = _walks.get(id(parsed))
    if walks is None or walks.parsed is not parsed:
        if len(_walks) > 64:
            _walks.clear()
        walks = _walks[id(parsed)] = Walks(parsed)
    return walks
