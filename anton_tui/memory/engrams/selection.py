"""Choosing the memory a turn's prompt carries: what is pinned, what is ranked in within the budget, what is left out.

Pinned, always loaded and counted beside the budget: the profile, the operator's managed tier, and every rule or
lesson the user wrote or confirmed (``source:user``). Everything else (the learned rules and lessons of both scopes,
except those about the scratchpad, which go with the scratchpad tool) is a candidate: when all candidates fit the
budget they are all loaded, as before; otherwise they are scored against the turn by BM25 (`ranking`) and loaded
best first (the newer of equal scores first) while they fit. A candidate sharing no word with the turn is not
loaded then. `MemorySelection` says which is which, with scores and reasons; its `text` is the memory sections of
the system prompt, laid out as before (per scope, rules by kind in file order, lessons newest first).

Tokens are characters divided by `CHARS_PER_TOKEN` (4), the same figure everywhere (the prompt, the Context tab,
``anton-tui memory context``), so what the command line predicts is what a session sends.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anton_tui.memory.engrams.counters import PromptRecord
from anton_tui.memory.engrams.engram import RULE_KINDS, Engram, is_scratchpad_related
from anton_tui.memory.engrams.hippocampus import lesson_for_prompt, render_lessons
from anton_tui.memory.engrams.ranking import RuleRanker, TurnQuery, rank_keys

if TYPE_CHECKING:
    from anton_tui.memory.engrams.hippocampus import Hippocampus

CHARS_PER_TOKEN = 4
DEFAULT_BUDGET_TOKENS = 2000  # measured: benchmarks/bench_memory_budget.py (README, "Memory given to a turn")
RANK_DEPTH = 2000  # best matches asked of the index; past them an entry counts as not matching the turn
PINNED_USER = "written or confirmed by the user (source:user)"
PINNED_PROFILE = "the profile"
PINNED_OPERATOR = "the operator's managed memory"
LEFT_BUDGET = "over the budget"
LEFT_NO_MATCH = "shares no word with the turn"


def tokens_of(line: str) -> int:
    return math.ceil((len(line) + 1) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One line of memory and what became of it: ``pinned``, ``loaded`` (ranked in) or ``left_out``."""

    kind: str  # always | never | when | lesson | profile
    scope: str  # global | project | operator
    text: str
    tokens: int
    status: str
    score: float | None = None
    why: str = ""
    entry: Engram | None = field(default=None, compare=False)

    @property
    def line(self) -> str:
        """The line as the prompt shows it (a lesson with its metadata comment)."""
        return lesson_for_prompt(self.entry) if self.entry is not None and self.kind == "lesson" else f"- {self.text}"

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": self.kind, "scope": self.scope, "text": self.text, "tokens": self.tokens}
        if self.status in {"left_out", "pinned"}:
            found["why"] = self.why
        if self.score is not None:
            found["score"] = round(self.score, 4)
        return found


@dataclass(frozen=True, slots=True)
class MemorySelection:
    """The memory of one prompt (see the module docstring)."""

    budget_tokens: int
    items: tuple[MemoryItem, ...]
    text: str  # the memory sections of the system prompt ("" or "\n\n" + sections)

    def of(self, status: str) -> list[MemoryItem]:
        return [item for item in self.items if item.status == status]

    @property
    def ranked_tokens(self) -> int:
        return sum(item.tokens for item in self.items if item.status == "loaded")

    @property
    def total_tokens(self) -> int:
        return sum(item.tokens for item in self.items if item.status != "left_out")

    def as_json(self) -> dict[str, Any]:
        return {
            "budget_tokens": self.budget_tokens,
            "ranked_tokens": self.ranked_tokens,
            "total_tokens": self.total_tokens,
            **{name: [item.as_json() for item in self.of(name)] for name in ("pinned", "loaded", "left_out")},
        }

    def loaded_ids(self, scope: str) -> set[str]:
        """Ids of the rules and lessons of `scope` this prompt carried (pinned or ranked in)."""
        return {
            item.entry.id
            for item in self.items
            if item.entry is not None and item.scope == scope and item.status != "left_out"
        }

    def prompt_record(self, scope: str, present: dict[str, list[str]]) -> PromptRecord:
        """What this prompt did with `scope`'s entries, for its counters; `present`: every entry id per file."""
        loaded: dict[str, list[str]] = {"rules": [], "lessons": []}
        left: dict[str, list[str]] = {"rules": [], "lessons": []}
        for item in self.items:
            if item.entry is None or item.scope != scope or item.kind == "profile":
                continue
            file = "lessons" if item.kind == "lesson" else "rules"
            if item.status != "left_out":
                loaded[file].append(item.entry.id)
            elif item.score is not None:  # matched the turn, did not fit
                left[file].append(item.entry.id)
        return PromptRecord(loaded, left, present)


@dataclass(frozen=True, slots=True)
class _Candidate:
    key: tuple[str, str, str]  # scope, file, text
    entry: Engram
    line: str
    tokens: int
    newer: float

    @property
    def scope(self) -> str:
        return self.key[0]


def _candidates(scopes: Sequence[tuple[str, Hippocampus]]) -> list[tuple[str, list[_Candidate]]]:
    """Per scope (its label), its rules (Always, Never, When; file order) then its lessons (file order), each once,
    those about the scratchpad left out (they go with the scratchpad tool)."""
    found: list[tuple[str, list[_Candidate]]] = []
    seen: set[tuple[str, str, str]] = set()
    for label, hc in scopes:
        scope = label.lower()
        entries = [
            e for e in hc.get_rules() if e.kind in RULE_KINDS and not (e.kind == "when" and is_scratchpad_related(e))
        ]
        entries += [e for e in hc.get_lessons() if not is_scratchpad_related(e)]
        candidates = []
        for entry in entries:
            key = (scope, "lessons" if entry.kind == "lesson" else "rules", entry.text)
            if key in seen:
                continue
            seen.add(key)
            line = lesson_for_prompt(entry) if entry.kind == "lesson" else f"- {entry.text}"
            newer = entry.updated_at.timestamp() if entry.updated_at is not None else 0.0
            candidates.append(_Candidate(key, entry, line, tokens_of(line), newer))
        found.append((label, candidates))
    return found


class MemorySelector:
    """Chooses each prompt's memory; keeps the ranking index of the candidates between prompts."""

    def __init__(self) -> None:
        self._ranker: RuleRanker | None = None

    def select(
        self,
        scopes: Sequence[tuple[str, Hippocampus]],
        query: TurnQuery,
        budget_tokens: int,
        *,
        identity: str = "",
        operator: Sequence[tuple[str, str]] = (),
        head: Sequence[str] = (),
        name: str = "Your Memory",
    ) -> MemorySelection:
        """The memory for one prompt. `identity`: the profile as the prompt shows it; `operator`: the managed tier's
        (kind, text) lines (rendered in `head`, the sections that come first, as Anton orders them)."""
        per_scope = _candidates(scopes)
        everything = [c for _label, candidates in per_scope for c in candidates]
        pinned = [c for c in everything if c.entry.source == "user"]
        ranked = [c for c in everything if c.entry.source != "user"]
        facts = [line.strip() for line in identity.splitlines() if line.strip() and not line.strip().startswith("#")]
        items = [MemoryItem("profile", "global", fact.removeprefix("- "), tokens_of(fact), "pinned", why=PINNED_PROFILE)
                 for fact in facts]  # fmt: skip
        items += [MemoryItem(kind, "operator", text, tokens_of(f"- {text}"), "pinned", why=PINNED_OPERATOR)
                  for kind, text in operator]  # fmt: skip
        items += [_item(c.entry, c.scope, "pinned", why=PINNED_USER) for c in pinned]
        scores = self._scores(ranked, query)
        chosen = _within(ranked, scores, budget_tokens)
        for c in ranked:
            score = scores.get(c.key)
            if c.key in chosen:
                items.append(_item(c.entry, c.scope, "loaded", score=score))
            else:
                items.append(_item(c.entry, c.scope, "left_out", score=score,
                                   why=LEFT_BUDGET if score is not None else LEFT_NO_MATCH))  # fmt: skip
        shown = {c.key for c in pinned} | chosen
        text = _render(per_scope, shown, identity, head, name)
        return MemorySelection(budget_tokens, tuple(items), text)

    def _scores(self, ranked: list[_Candidate], query: TurnQuery) -> dict[Hashable, float]:
        if not ranked:
            return {}
        if self._ranker is None:
            self._ranker = RuleRanker()
        self._ranker.sync({c.key: f"{c.entry.text} {c.entry.topic or ''}" for c in ranked})
        return self._ranker.scores(query, RANK_DEPTH)


def _item(entry: Engram, scope: str, status: str, *, score: float | None = None, why: str = "") -> MemoryItem:
    line = lesson_for_prompt(entry) if entry.kind == "lesson" else f"- {entry.text}"
    return MemoryItem(entry.kind, scope, entry.text, tokens_of(line), status, score, why, entry)


def _within(ranked: list[_Candidate], scores: dict[Hashable, float], budget: int) -> set[Hashable]:
    """Keys loaded: all when all fit, else the best matches while they fit."""
    if sum(c.tokens for c in ranked) <= budget:
        return {c.key for c in ranked}
    by_key: dict[Hashable, _Candidate] = {c.key: c for c in ranked}
    newer = {key: c.newer for key, c in by_key.items()}
    chosen: set[Hashable] = set()
    used = 0
    for key in rank_keys(scores, newer, scores):
        cost = by_key[key].tokens
        if used + cost <= budget:
            chosen.add(key)
            used += cost
    return chosen


def _render(
    per_scope: list[tuple[str, list[_Candidate]]],
    shown: set[Hashable],
    identity: str,
    head: Sequence[str],
    name: str,
) -> str:
    """The memory sections of the system prompt, for the entries whose keys are in `shown`."""
    sections = list(head)
    if identity:
        sections.append(f"## {name} — Identity\n{identity}")
    for label, candidates in per_scope:
        parts = []
        for kind in RULE_KINDS:
            lines = [c.line for c in candidates if c.entry.kind == kind and c.key in shown]
            if lines:
                parts.append(f"## {kind.capitalize()}\n" + "\n".join(lines))
        if parts:
            sections.append(f"## {name} — {label} Rules\n" + "\n\n".join(parts))
    for label, candidates in per_scope:
        lessons = [c.entry for c in reversed(candidates) if c.entry.kind == "lesson" and c.key in shown]
        if lessons:
            sections.append(f"## {name} — {label} Lessons\n{render_lessons(lessons)}")
    return "\n\n" + "\n\n".join(sections) if sections else ""
