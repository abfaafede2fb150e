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
    """One line of memory and what became of it: ``pinned``, ``loaded`` (ranked in) or ``left_out``. `line` is the
    line as the prompt shows it (a lesson with its metadata comment); `entry_id` names a rule or lesson."""

    kind: str  # always | never | when | lesson | profile
    scope: str  # global | project | operator
    text: str
    tokens: int
    status: str
    score: float | None = None
    why: str = ""
    line: str = ""
    entry_id: str = ""

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": self.kind, "scope": self.scope, "text": self.text, "tokens": self.tokens}
        if self.status in {"left_out", "pinned"}:
            found["why"] = self.why
        if self.score is not None:
            found["score"] = round(self.score, 4)
        return found


@dataclass(frozen=True, slots=True)
class MemorySelection:
    """The memory of one prompt (see the module docstring); `present`: per scope, the ids of its candidate rules
    and lessons (pinned ones included), per file."""

    budget_tokens: int
    items: tuple[MemoryItem, ...]
    text: str  # the memory sections of the system prompt ("" or "\n\n" + sections)
    present: dict[str, dict[str, list[str]]] = field(default_factory=dict)

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
            item.entry_id for item in self.items if item.entry_id and item.scope == scope and item.status != "left_out"
        }

    def prompt_record(self, scope: str) -> PromptRecord:
        """What this prompt did with `scope`'s entries, for its counters."""
        loaded: dict[str, list[str]] = {"rules": [], "lessons": []}
        left: dict[str, list[str]] = {"rules": [], "lessons": []}
        for item in self.items:
            if not item.entry_id or item.scope != scope:
                continue
            file = "lessons" if item.kind == "lesson" else "rules"
            if item.status != "left_out":
                loaded[file].append(item.entry_id)
            elif item.score is not None:  # matched the turn, did not fit
                left[file].append(item.entry_id)
        return PromptRecord(loaded, left, self.present.get(scope, {}))


@dataclass(frozen=True, slots=True)
class _Candidate:
    key: tuple[str, str, str]  # scope, file, text
    entry: Engram
    line: str
    tokens: int
    newer: float
    entry_id: str
    unmatched: MemoryItem  # this entry left out for sharing no word with the turn (the same every time)

    @property
    def scope(self) -> str:
        return self.key[0]

    def item(self, status: str, *, score: float | None = None, why: str = "") -> MemoryItem:
        entry = self.entry
        return MemoryItem(entry.kind, self.scope, entry.text, self.tokens, status, score, why, self.line, self.entry_id)


def _candidate(scope: str, entry: Engram) -> _Candidate:
    key = (scope, "lessons" if entry.kind == "lesson" else "rules", entry.text)
    line = lesson_for_prompt(entry) if entry.kind == "lesson" else f"- {entry.text}"
    tokens, entry_id = tokens_of(line), entry.id
    newer = entry.updated_at.timestamp() if entry.updated_at is not None else 0.0
    unmatched = MemoryItem(entry.kind, scope, entry.text, tokens, "left_out", None, LEFT_NO_MATCH, line, entry_id)
    return _Candidate(key, entry, line, tokens, newer, entry_id, unmatched)


def _candidate_kind(entry: Engram) -> bool:
    """A rule of a known kind or a lesson, not a When rule or lesson about the scratchpad (those go with the tool)."""
    if entry.kind not in (*RULE_KINDS, "lesson"):
        return False
    return entry.kind in ("always", "never") or not is_scratchpad_related(entry)


def _same(one: list[Engram], other: list[Engram]) -> bool:
    """The same entries, object for object (a file's parse is kept while it is unchanged, so its entries are)."""
    return len(one) == len(other) and all(a is b for a, b in zip(one, other, strict=True))


@dataclass(slots=True)
class _Pool:
    """The candidates of every scope while no memory file changed, and what each prompt would otherwise work out
    again from all of them."""

    per_scope: list[tuple[str, list[_Candidate]]]
    pinned: list[_Candidate] = field(default_factory=list)
    ranked: list[_Candidate] = field(default_factory=list)
    by_key: dict[Hashable, _Candidate] = field(default_factory=dict)
    order: dict[Hashable, int] = field(default_factory=dict)  # place in the files, for the prompt's order
    ranked_tokens: int = 0
    present: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    synced: bool = False  # the ranking index holds these candidates

    def __post_init__(self) -> None:
        everything = [c for _label, candidates in self.per_scope for c in candidates]
        self.pinned = [c for c in everything if c.entry.source == "user"]
        self.ranked = [c for c in everything if c.entry.source != "user"]
        self.by_key = {c.key: c for c in everything}
        self.order = {c.key: place for place, c in enumerate(everything)}
        self.ranked_tokens = sum(c.tokens for c in self.ranked)
        self.present = {
            label.lower(): {
                "rules": [c.entry_id for c in candidates if c.entry.kind != "lesson"],
                "lessons": [c.entry_id for c in candidates if c.entry.kind == "lesson"],
            }
            for label, candidates in self.per_scope
        }


class MemorySelector:
    """Chooses each prompt's memory; keeps the candidates (while the memory files are unchanged) and the ranking
    index between prompts, so a prompt costs little more than its ranking with 50,000 lessons."""

    def __init__(self) -> None:
        self._ranker: RuleRanker | None = None
        self._kept: dict[str, tuple[list[Engram], list[_Candidate]]] = {}
        self._pool: _Pool | None = None

    def _candidates(self, scopes: Sequence[tuple[str, Hippocampus]]) -> _Pool:
        """Per scope (its label), its rules (Always, Never, When; file order) then its lessons (file order), each
        once, those about the scratchpad left out (they go with the scratchpad tool)."""
        found: list[tuple[str, list[_Candidate]]] = []
        changed = self._pool is None or [label for label, _hc in scopes] != [
            label for label, _c in self._pool.per_scope
        ]
        for label, hc in scopes:
            entries = hc.get_rules() + hc.get_lessons()
            kept = self._kept.get(label)
            if kept is None or not _same(kept[0], entries):
                changed = True
                candidates, seen = [], set()
                for entry in entries:
                    if not _candidate_kind(entry):
                        continue
                    candidate = _candidate(label.lower(), entry)
                    if candidate.key not in seen:
                        seen.add(candidate.key)
                        candidates.append(candidate)
                kept = self._kept[label] = (entries, candidates)
            found.append((label, kept[1]))
        if changed or self._pool is None:
            self._pool = _Pool(found)
        return self._pool

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
        pool = self._candidates(scopes)
        facts = [line.strip() for line in identity.splitlines() if line.strip() and not line.strip().startswith("#")]
        items = [MemoryItem("profile", "global", fact.removeprefix("- "), tokens_of(fact), "pinned", why=PINNED_PROFILE,
                            line=fact) for fact in facts]  # fmt: skip
        items += [MemoryItem(kind, "operator", text, tokens_of(f"- {text}"), "pinned", why=PINNED_OPERATOR,
                             line=f"- {text}") for kind, text in operator]  # fmt: skip
        items += [c.item("pinned", why=PINNED_USER) for c in pool.pinned]
        scores = self._scores(pool, query)
        chosen = _within(pool, scores, budget_tokens)
        if len(chosen) == len(pool.ranked):
            items += [c.item("loaded", score=scores.get(c.key)) for c in pool.ranked]
        else:
            for key in chosen:
                items.append(pool.by_key[key].item("loaded", score=scores[key]))
            for key, score in scores.items():
                if key not in chosen:
                    items.append(pool.by_key[key].item("left_out", score=score, why=LEFT_BUDGET))
            items += [c.unmatched for c in pool.ranked if c.key not in scores]
        shown = sorted([c.key for c in pool.pinned] + list(chosen), key=pool.order.__getitem__)
        text = _render(
            [pool.by_key[key] for key in shown], identity, head, name, [label for label, _ in pool.per_scope]
        )
        return MemorySelection(budget_tokens, tuple(items), text, pool.present)

    def _scores(self, pool: _Pool, query: TurnQuery) -> dict[Hashable, float]:
        if not pool.ranked:
            return {}
        if self._ranker is None:
            self._ranker = RuleRanker()
        if not pool.synced:
            self._ranker.sync({c.key: f"{c.entry.text} {c.entry.topic or ''}" for c in pool.ranked})
            pool.synced = True
        return self._ranker.scores(query, RANK_DEPTH)


def _within(pool: _Pool, scores: dict[Hashable, float], budget: int) -> set[Hashable]:
    """Keys loaded: all when all fit, else the best matches while they fit."""
    if pool.ranked_tokens <= budget:
        return {c.key for c in pool.ranked}
    newer = {key: pool.by_key[key].newer for key in scores}
    chosen: set[Hashable] = set()
    used = 0
    for key in rank_keys(scores, newer, scores):
        cost = pool.by_key[key].tokens
        if used + cost <= budget:
            chosen.add(key)
            used += cost
    return chosen


def _render(shown: list[_Candidate], identity: str, head: Sequence[str], name: str, labels: list[str]) -> str:
    """The memory sections of the system prompt for the `shown` entries (in file order, scope by scope)."""
    sections = list(head)
    if identity:
        sections.append(f"## {name} — Identity\n{identity}")
    for label in labels:
        parts = []
        for kind in RULE_KINDS:
            lines = [c.line for c in shown if c.scope == label.lower() and c.entry.kind == kind]
            if lines:
                parts.append(f"## {kind.capitalize()}\n" + "\n".join(lines))
        if parts:
            sections.append(f"## {name} — {label} Rules\n" + "\n\n".join(parts))
    for label in labels:
        lessons = [c.entry for c in reversed(shown) if c.scope == label.lower() and c.entry.kind == "lesson"]
        if lessons:
            sections.append(f"## {name} — {label} Lessons\n{render_lessons(lessons)}")
    return "\n\n" + "\n\n".join(sections) if sections else ""
