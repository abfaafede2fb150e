"""Event vocabulary and the nine pattern detectors of the turn-level error monitor.

Each detector is a pure function over one turn's events that returns a `Lesson` (a rule the agent should follow from
now on) or `None`. They know nothing about storage, the session or the model; `acc.py` runs them.

Brain analogy: these are the comparators of the anterior cingulate cortex, each tuned to one kind of mismatch between
what the agent meant to do and what happened.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

EVENT_KINDS: frozenset[str] = frozenset(
    {
        "scratchpad_call",
        "scratchpad_result",
        "scratchpad_empty_code",
        "scratchpad_reset",
        "scratchpad_killed",
        "tool_call",
        "tool_result",
        "history_repair",
        "cap_exhausted",
    }
)
LessonKind = Literal["always", "never", "when"]
LESSON_KINDS: frozenset[str] = frozenset({"always", "never", "when"})

OVERSIZED_CODE_CHARS = 5000
OVERSIZED_CELLS = 2
NAME_SWITCH_NAMES = 2
REPEATED_TOOL_ERROR_RUN = 2
REPEATED_SIGNATURE_COUNT = 3
RESET_CHURN_COUNT = 2
KILL_LOOP_COUNT = 2
SEVERITY_CLIMB_LENGTH = 3
SEVERITY_CLIMB_PEAK = 5
REPAIR_CHURN_COUNT = 3

RULE_NAME_SWITCH = (
    "Always keep one scratchpad name for the whole task, because every name is a separate process and variables or "
    "imports made in one scratchpad do not exist in another."
)
RULE_OVERSIZED_CELL = (
    "Always keep scratchpad cells well under 5,000 characters of code and build large content such as HTML or "
    "reports over several cells that append to a file on disk, because an oversized cell can arrive with empty code."
)
RULE_REPEATED_TOOL_ERROR = (
    "When a tool call fails, read the error and change the arguments or the approach before calling that tool again, "
    "because repeating the same call brings back the same failure."
)
RULE_REPEATED_SIGNATURE = (
    "When the same error message comes back after a retry, stop retrying and find its root cause (inputs, missing "
    "setup, wrong assumption) or ask the user, because tweaking arguments does not change the cause."
)
RULE_RESET_CHURN = (
    "Never reset a scratchpad to get past an error; debug the failing cell in place, because a reset throws away "
    "every variable and import the task has built up."
)
RULE_KILL_LOOP_LIVENESS = (
    "When a scratchpad cell is killed for going quiet, rerun the same cell in the same scratchpad with a realistic "
    "execution-time estimate and call progress() inside long loops so the work is not mistaken for a hang."
)
RULE_KILL_LOOP_HEAVY = (
    "When scratchpad cells keep getting killed for running too long, split the work into smaller cells in the same "
    "scratchpad (try a sample first, then process in chunks) instead of resubmitting the same heavy cell."
)
RULE_SEVERITY_CLIMB = (
    "When failures on the same scratchpad or tool keep getting worse from one attempt to the next, stop pushing the "
    "current approach and switch to a different strategy."
)
RULE_REPAIR_CHURN = (
    "When the conversation history has to be repaired again and again in one turn, stop making tool calls, "
    "summarise where things stand and ask the user how to continue."
)
RULE_CAP_EXHAUSTED = (
    "When the tool-round limit is reached, stop and tell the user plainly what worked, what failed and what is left, "
    "and never claim the task is finished."
)


@dataclass(frozen=True)
class Event:
    """One thing that happened during a turn. `detail` is a read-only mapping."""

    kind: str
    severity: int = 1
    detail: Mapping[str, Any] = field(default_factory=dict)
    round_idx: int = 0

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            known = ", ".join(sorted(EVENT_KINDS))
            raise ValueError(f"unknown event kind {self.kind!r}; expected one of: {known}")
        if not isinstance(self.detail, Mapping):
            raise ValueError(f"event detail must be a mapping, got {type(self.detail).__name__}")
        try:
            severity, round_idx = int(self.severity), int(self.round_idx)
        except (TypeError, ValueError):
            raise ValueError(
                f"event severity and round_idx must be integers, got {self.severity!r} and {self.round_idx!r}"
            ) from None
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "round_idx", round_idx)
        object.__setattr__(self, "detail", MappingProxyType(dict(self.detail)))

    def text(self, key: str) -> str:
        value = self.detail.get(key)
        return "" if value is None else str(value)


@dataclass(frozen=True)
class Lesson:
    """A rule learned from a turn: `kind` is the rules.md section, `severity` how serious the evidence was."""

    rule: str
    kind: LessonKind
    detector: str
    severity: int = 1
    also: tuple[str, ...] = ()
    """Other detectors that fired on the same failure and whose own lesson this one stands for."""

    def __post_init__(self) -> None:
        if self.kind not in LESSON_KINDS:
            raise ValueError(f"lesson kind must be one of always, never, when; got {self.kind!r}")

    @property
    def detectors(self) -> tuple[str, ...]:
        """Every detector behind this lesson, its own first."""
        return (self.detector, *self.also)


Detector = Callable[[Sequence[Event]], "Lesson | None"]


def _lesson(rule: str, kind: LessonKind, detector: Callable, evidence: Sequence[Event]) -> Lesson:
    return Lesson(rule, kind, detector.__name__, max((e.severity for e in evidence), default=1))


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


# --- error signatures -------------------------------------------------------------------------------------------

_HEX = re.compile(r"0x[0-9a-fA-F]+")
_INTEGER = re.compile(r"\b\d+\b")
_SINGLE_QUOTED = re.compile(r"'[^']{1,80}'")
_DOUBLE_QUOTED = re.compile(r'"[^"]{1,80}"')
# POSIX paths, drive-letter paths with either slash (C:\Users\f.txt, C:/data) and backslash or UNC paths.
_PATH = re.compile(r"(?:\b[A-Za-z]:)?[/\\][^\s'\"]+")
_WHITESPACE = re.compile(r"\s+")


def _envelope_message(text: str) -> str | None:
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    for candidate in (data, data.get("error") if isinstance(data, dict) else None):
        if isinstance(candidate, dict):
            message = candidate.get("message")
            if isinstance(message, str) and message.strip():
                return message
    return None


def normalise_error_signature(text: str) -> str:
    """Reduce an error to its shape, so retries that differ only in ids, numbers, names or paths compare equal."""
    signature = _envelope_message(text) or text
    signature = _HEX.sub("0xN", signature)
    signature = _INTEGER.sub("N", signature)
    signature = _SINGLE_QUOTED.sub("'X'", signature)
    signature = _DOUBLE_QUOTED.sub('"X"', signature)
    signature = _PATH.sub("/P", signature)
    return _WHITESPACE.sub(" ", signature).strip()


# --- evidence finders, shared by the detectors and by the overlap rule in acc.py ---------------------------------


def tool_failure_runs(events: Sequence[Event]) -> list[list[int]]:
    """Index lists of consecutive `tool_result` failures of one tool that reach the repeated-error threshold.

    A result without `success` counts as a failure; a failure of another tool starts a new run; a success ends it.
    """
    runs: list[list[int]] = []
    current: list[int] = []
    current_name: str | None = None
    for index, event in enumerate(events):
        if event.kind != "tool_result":
            continue
        if event.detail.get("success", False):
            current, current_name = [], None
            continue
        name = event.text("name")
        if name != current_name:
            current, current_name = [], name
            runs.append(current)
        current.append(index)
    return [run for run in runs if len(run) >= REPEATED_TOOL_ERROR_RUN]


def repeated_signature_groups(events: Sequence[Event]) -> list[list[int]]:
    """Index lists of failed results sharing one error signature at least the threshold number of times.

    Results are `tool_result` and `scratchpad_result` with `success` false (missing means success) and an error text.
    """
    groups: defaultdict[str, list[int]] = defaultdict(list)
    for index, event in enumerate(events):
        if event.kind not in ("tool_result", "scratchpad_result") or event.detail.get("success", True):
            continue
        error = event.text("error")
        if error.strip():
            groups[normalise_error_signature(error)].append(index)
    ranked = sorted(groups.values(), key=len, reverse=True)
    return [group for group in ranked if len(group) >= REPEATED_SIGNATURE_COUNT]


def classify_kill_reason(reason: str) -> Literal["liveness", "heavy", "ambiguous"]:
    """Why a cell was killed: it went quiet (liveness), ran too long or too big (heavy), or we cannot tell."""
    reason = reason.lower()
    if "auto-install" in reason:
        return "ambiguous"
    if "liveness" in reason or "inactivity" in reason or "without output" in reason:
        return "liveness"  # "without output" is how our scratchpads word an inactivity kill
    if not reason.strip() or "without producing any output" in reason:
        return "ambiguous"
    return "heavy"


# --- the detectors -------------------------------------------------------------------------------------------------


def detect_name_switch(events: Sequence[Event]) -> Lesson | None:
    """Several scratchpad names used in one turn: state built in one pad is invisible in the others."""
    calls = [e for e in events if e.kind == "scratchpad_call" and e.detail.get("name")]
    if len({e.text("name") for e in calls}) < NAME_SWITCH_NAMES:
        return None
    return _lesson(RULE_NAME_SWITCH, "always", detect_name_switch, calls)


def detect_oversized_cell(events: Sequence[Event]) -> Lesson | None:
    """A cell arrived with empty code, or several cells were huge: big code strings get dropped on the wire."""
    empty = [e for e in events if e.kind == "scratchpad_empty_code"]
    huge = [
        e for e in events if e.kind == "scratchpad_call" and _as_int(e.detail.get("code_len")) >= OVERSIZED_CODE_CHARS
    ]
    if not empty and len(huge) < OVERSIZED_CELLS:
        return None
    return _lesson(RULE_OVERSIZED_CELL, "always", detect_oversized_cell, empty + huge)


def detect_repeated_tool_error(events: Sequence[Event]) -> Lesson | None:
    """The same tool failed several times in a row: blind retries."""
    runs = tool_failure_runs(events)
    if not runs:
        return None
    return _lesson(RULE_REPEATED_TOOL_ERROR, "when", detect_repeated_tool_error, [events[i] for r in runs for i in r])


def detect_repeated_error_signature(events: Sequence[Event]) -> Lesson | None:
    """The same error, up to ids, numbers, names and paths, came back several times from any tool or scratchpad."""
    groups = repeated_signature_groups(events)
    if not groups:
        return None
    evidence = [events[i] for group in groups for i in group]
    return _lesson(RULE_REPEATED_SIGNATURE, "when", detect_repeated_error_signature, evidence)


def detect_reset_churn(events: Sequence[Event]) -> Lesson | None:
    """Scratchpads were reset more than once: resetting used as a way around errors."""
    resets = [e for e in events if e.kind == "scratchpad_reset"]
    if len(resets) < RESET_CHURN_COUNT:
        return None
    return _lesson(RULE_RESET_CHURN, "never", detect_reset_churn, resets)


def detect_kill_loop(events: Sequence[Event]) -> Lesson | None:
    """Cells keep getting killed, on one pad or spread over renamed pads.

    Kills are grouped by reason. A group counts once it holds the threshold number of kills in total, whatever pad
    names they happened on. Liveness kills win ties (the fix is to keep the same cell alive); heavy kills must
    outnumber them to get the make-it-smaller rule. Ambiguous kills count for neither.
    """
    groups: dict[str, list[Event]] = {"liveness": [], "heavy": [], "ambiguous": []}
    for event in events:
        if event.kind == "scratchpad_killed":
            groups[classify_kill_reason(event.text("reason"))].append(event)
    liveness, heavy = groups["liveness"], groups["heavy"]
    if len(liveness) >= len(heavy) and len(liveness) >= KILL_LOOP_COUNT:
        return _lesson(RULE_KILL_LOOP_LIVENESS, "when", detect_kill_loop, liveness)
    if len(heavy) > len(liveness) and len(heavy) >= KILL_LOOP_COUNT:
        return _lesson(RULE_KILL_LOOP_HEAVY, "when", detect_kill_loop, heavy)
    return None


def detect_severity_climb(events: Sequence[Event]) -> Lesson | None:
    """One pad or tool produced ever more severe events (a strictly rising run ending high): things are deteriorating."""
    runs: dict[str, list[Event]] = {}
    peaks: list[Event] = []
    for event in events:
        name = event.text("name")
        if not name:
            continue
        run = runs.get(name)
        if run and event.severity > run[-1].severity:
            run.append(event)
        else:
            runs[name] = run = [event]
        if len(run) >= SEVERITY_CLIMB_LENGTH and event.severity >= SEVERITY_CLIMB_PEAK:
            peaks.append(event)
    if not peaks:
        return None
    return _lesson(RULE_SEVERITY_CLIMB, "when", detect_severity_climb, peaks)


def detect_repair_churn(events: Sequence[Event]) -> Lesson | None:
    """The tool-call history needed repair several times: the conversation is coming apart."""
    repairs = [e for e in events if e.kind == "history_repair"]
    if len(repairs) < REPAIR_CHURN_COUNT:
        return None
    return _lesson(RULE_REPAIR_CHURN, "when", detect_repair_churn, repairs)


def detect_cap_exhausted(events: Sequence[Event]) -> Lesson | None:
    """The turn ran out of tool rounds: the user is owed an honest account, not a claim of success."""
    caps = [e for e in events if e.kind == "cap_exhausted"]
    if not caps:
        return None
    return _lesson(RULE_CAP_EXHAUSTED, "when", detect_cap_exhausted, caps)


DETECTORS: tuple[Detector, ...] = (
    detect_name_switch,
    detect_oversized_cell,
    detect_repeated_tool_error,
    detect_repeated_error_signature,
    detect_reset_churn,
    detect_kill_loop,
    detect_severity_climb,
    detect_repair_churn,
    detect_cap_exhausted,
)
