"""Turn-level error monitor: records what happened during a turn and turns repeated failure patterns into rules.

The session reports events (scratchpad calls and results, tool results, kills, resets, history repairs, the round
cap) with `observe`. After each tool round `at_round_n` returns fresh lessons to show the model straight away
(`format_nudge` renders them); at the end of the turn `at_end_of_turn` returns the lessons worth keeping in rules.md.
Nothing here reads or writes files or calls a model: the caller owns storage and passes in the rules it already has.

Brain analogy: the anterior cingulate cortex, which raises an error signal when outcomes keep diverging from intent
and pushes for a change of strategy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from anton_tui.memory.learners.acc_detectors import (
    DETECTORS,
    EVENT_KINDS,
    Detector,
    Event,
    Lesson,
    detect_repeated_error_signature,
    detect_repeated_tool_error,
    normalise_error_signature,
    repeated_signature_groups,
    tool_failure_runs,
)

__all__ = [
    "DETECTORS",
    "EVENT_KINDS",
    "AnteriorCingulate",
    "Event",
    "Lesson",
    "events_from_records",
    "format_nudge",
    "normalise_error_signature",
    "rules_similarity_predicate",
]

SimilarityPredicate = Callable[[str], bool]

JACCARD_SIMILAR = 0.8


def _tool_runs_are_one_signature(events: Sequence[Event]) -> bool:
    """True when every repeated-tool-error run is made of failures that also form a repeated error signature."""
    in_signature_groups = {i for group in repeated_signature_groups(events) for i in group}
    return all(in_signature_groups.intersection(run) for run in tool_failure_runs(events))


# general detector -> (the more specific detector, test that both fired on the same underlying failure).
# The repeated-signature lesson needs the same error text at least three times, so when the tool-error runs are that
# very error it says strictly more than "change something before retrying"; the generic one is then dropped.
_SUPERSEDED_BY: dict[str, tuple[str, Callable[[Sequence[Event]], bool]]] = {
    detect_repeated_tool_error.__name__: (detect_repeated_error_signature.__name__, _tool_runs_are_one_signature),
}


class AnteriorCingulate:
    """Collects one turn's events and runs the detectors over them.

    Cross-detector rules, applied by both `at_end_of_turn` and `at_round_n`:
    - a lesson whose rule text equals an earlier lesson's is dropped;
    - a general lesson is dropped when a more specific detector fired on the same failure (see `_SUPERSEDED_BY`):
      repeated tool errors that are all the same repeated error signature yield only the signature lesson. Both
      detectors are still reported (as Anton reports both): the kept lesson names the other in `also`.
    """

    def __init__(
        self, has_similar_lesson: SimilarityPredicate | None = None, *, detectors: Sequence[Detector] = DETECTORS
    ) -> None:
        self._has_similar_lesson = has_similar_lesson
        self._detectors = tuple(detectors)
        self._events: list[Event] = []
        self._nudged: set[str] = set()

    def observe(
        self, kind: str, detail: Mapping[str, Any] | None = None, *, severity: int = 1, round_idx: int = 0
    ) -> Event:
        """Record one event; an unknown `kind` raises `ValueError` and records nothing."""
        event = Event(kind, severity, detail or {}, round_idx)
        self._events.append(event)
        return event

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def event_kind_counts(self) -> dict[str, int]:
        return dict(Counter(e.kind for e in self._events))

    def _fired(self) -> list[Lesson]:
        fired = [lesson for detector in self._detectors if (lesson := detector(self._events)) is not None]
        names = {lesson.detector for lesson in fired}
        kept: list[Lesson] = []
        rules: set[str] = set()
        covered: dict[str, list[str]] = {}
        for lesson in fired:
            superseding = _SUPERSEDED_BY.get(lesson.detector)
            if superseding is not None and superseding[0] in names and superseding[1](self._events):
                covered.setdefault(superseding[0], []).append(lesson.detector)  # reported, through the specific lesson
                continue
            if lesson.rule in rules:
                continue
            rules.add(lesson.rule)
            kept.append(lesson)
        return [
            replace(lesson, also=(*lesson.also, *covered[lesson.detector])) if lesson.detector in covered else lesson
            for lesson in kept
        ]

    def at_end_of_turn(self, has_similar_lesson: SimilarityPredicate | None = None) -> list[Lesson]:
        """Every lesson this turn supports that memory does not already hold. Events are kept until `clear()`."""
        predicate = has_similar_lesson or self._has_similar_lesson
        return [lesson for lesson in self._fired() if predicate is None or not predicate(lesson.rule)]

    def patterns_seen(self) -> frozenset[str]:
        """The detectors that fired on this turn's events (those folded into another's lesson too), whether or not
        memory already holds their rule: what outcome tracking counts (see `engrams.outcomes`)."""
        return frozenset(name for lesson in self._fired() for name in lesson.detectors)

    def at_round_n(self) -> list[Lesson]:
        """Lessons from detectors that have not nudged yet this turn; each detector nudges at most once per turn.

        Known rules are not filtered out here: if the model is breaking a rule it already has, repeating it in the
        moment is the point.
        """
        fresh = [lesson for lesson in self._fired() if lesson.detector not in self._nudged]
        self._nudged.update(name for lesson in fresh for name in lesson.detectors)
        return fresh

    def clear(self) -> None:
        """Start a new turn: forget the events and which detectors have nudged."""
        self._events.clear()
        self._nudged.clear()


def events_from_records(records: Iterable[object]) -> list[Event]:
    """Build events from plain records `{kind, severity=1, detail={}, round_idx=0}`, e.g. a replayed JSON array."""
    events: list[Event] = []
    for position, record in enumerate(records):
        if not isinstance(record, Mapping) or "kind" not in record:
            raise ValueError(f"event record {position} must be an object with a 'kind' field, got {record!r}")
        try:
            events.append(
                Event(
                    record["kind"],
                    record.get("severity", 1),
                    record.get("detail") or {},
                    record.get("round_idx", 0),
                )
            )
        except ValueError as exc:
            raise ValueError(f"event record {position}: {exc}") from None
    return events


def format_nudge(lesson: Lesson) -> str:
    """The text block appended to a round's tool results when the monitor runs in active mode."""
    return (
        f"[Automatic self-check: {', '.join(lesson.detectors)}] {lesson.rule}\n"
        "(This note comes from your own error monitor, which watches the tool calls of this turn; "
        "it was not written by the user.)"
    )


_COMMENT = re.compile(r"<!--.*?-->")
_WORD = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def rules_similarity_predicate(rules_text: str) -> SimilarityPredicate:
    """A test for "memory already has this rule" over the given rules text (pass both scopes' rules.md joined).

    Each `- ` entry is compared word by word, case and punctuation ignored: a candidate is already present when it
    equals or is contained in an existing rule, or when the two word sets overlap with a Jaccard index of 0.8 or more.
    """
    existing: list[tuple[str, frozenset[str]]] = []
    for line in rules_text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = _tokens(_COMMENT.sub(" ", line.removeprefix("- ")))
        if words:
            existing.append((f" {' '.join(words)} ", frozenset(words)))

    def has_similar(rule: str) -> bool:
        words = _tokens(rule)
        if not words:
            return False
        phrase, word_set = f" {' '.join(words)} ", frozenset(words)
        for known_phrase, known_words in existing:
            if phrase in known_phrase:
                return True
            if len(word_set & known_words) / len(word_set | known_words) >= JACCARD_SIMILAR:
                return True
        return False

    return has_similar
