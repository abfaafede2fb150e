"""Typed events a chat turn emits, in order, for whoever is watching (the TUI, a headless test, the demo).

`ChatSession.turn()` yields these; nothing else crosses from the engine to the UI. The one event the engine waits
on is `MemoryConfirmationNeeded`: it carries a future that the watcher resolves with the engrams to keep.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anton_tui.scratchpad.events import ScratchpadEvent

if TYPE_CHECKING:
    from anton_tui.agent.ledger import Ledger
    from anton_tui.memory.engrams.cortex import Encoded
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.learners.acc import Event as AccEvent
    from anton_tui.memory.learners.acc import Lesson as AccLesson
    from anton_tui.memory.review.proposal import HeldChange


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn: int
    user_text: str


@dataclass(frozen=True, slots=True)
class AssistantTextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class AssistantMessageDone:
    """One assistant message (one model round) is complete; `text` is all of it."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    id: str
    name: str
    input: dict[str, Any]
    result: str
    success: bool
    duration: float


@dataclass(frozen=True, slots=True)
class ScratchpadActivity:
    """A live event from a scratchpad cell, forwarded while the tool call runs."""

    event: ScratchpadEvent


@dataclass(frozen=True, slots=True)
class MemoryWritten:
    engrams: tuple[Engram, ...]
    actions: tuple[str, ...]
    producer: str  # memorize | cerebellum | consolidator | acc | identity | compaction | confirmation


@dataclass(frozen=True, slots=True)
class SecretsRemoved:
    """Secrets were taken out of text before it was saved (`where`: a memory file) or given to the model (the
    output of scratchpad `pad`, cell `cell`). `kinds` names each secret, e.g. ``"GitHub token"``."""

    kinds: tuple[str, ...]
    where: str
    producer: str
    pad: str | None = None
    cell: int | None = None

    @property
    def described(self) -> str:
        """``"2 × GitHub token, AWS secret key"``: the kinds in words, for a notice."""
        from anton_tui.redact import describe

        return describe(self.kinds)


def memory_events(encoded: Encoded, producer: str) -> list[MemoryWritten | SecretsRemoved]:
    """The events that tell what one `Cortex.encode_all` wrote: the memories, then any secrets taken out of them."""
    events: list[MemoryWritten | SecretsRemoved] = [
        MemoryWritten(engrams=encoded.engrams, actions=encoded.actions, producer=producer)
    ]
    events += [SecretsRemoved(kinds=kinds, where=where, producer=producer) for where, kinds in encoded.removed]
    return events


@dataclass(slots=True)
class MemoryConfirmationNeeded:
    """Copilot mode: engrams the gate held back, and changes the review holds for a person (`changes`: a
    reflection's proposals, a skill). Resolve `future` with the engrams to save and the changes to apply; the changes
    left out are rejected."""

    engrams: tuple[Engram, ...]
    future: asyncio.Future = field(repr=False)
    reasons: tuple[tuple[str, ...], ...] = ()  # per engram, why it was held (empty: the memory mode asked)
    changes: tuple[HeldChange, ...] = ()

    def keep_for_review(self) -> None:
        """Answer "not now" (no one is there to ask): every engram waits for review again, kept for the app's next
        start, none written and none dropped."""
        if not self.future.done():
            self.future.set_result(None)


@dataclass(frozen=True, slots=True)
class AccEventObserved:
    event: AccEvent


@dataclass(frozen=True, slots=True)
class AccNudge:
    """A lesson the ACC fired: mid-turn (`nudged=True`, active mode) or drained to rules at end of turn."""

    lesson: AccLesson
    nudged: bool


@dataclass(frozen=True, slots=True)
class HistoryRepaired:
    reason: str
    sealed_count: int


@dataclass(frozen=True, slots=True)
class SummaryAhead:
    """The conversation nears the size at which its older turns get summarised: said once before it happens.
    `tokens` is the estimated size of the next request, `at_tokens` the size that starts the summary."""

    tokens: int
    at_tokens: int


@dataclass(frozen=True, slots=True)
class HistorySummarising:
    """The older turns are being summarised by the coding model before the next request (`messages` of them)."""

    messages: int


@dataclass(frozen=True, slots=True)
class HistorySummarised:
    """The older turns were replaced by one summary message; `summary` is its record, for an "earlier turns
    summarised" block. `reason` is "long" (the request would have passed its share of the window) or "overflow"
    (the provider refused it as too long)."""

    summary: str
    folded: int  # messages replaced by the summary (an earlier summary among them counts as one)
    kept: int  # recent messages kept word for word
    tokens_before: int  # estimated size of the request before and after
    tokens_after: int
    reason: str
    ledger: Ledger | None = None  # what the folded turns held, word for word (kept beside the conversation)


@dataclass(frozen=True, slots=True)
class TextCut:
    """A text the user sent that was cut in the middle to fit the context window. `what` names it for the user
    ("your message", "an earlier message of yours", "the note on your @ files", "the output of your ! command")."""

    what: str
    kind: str  # message (typed or pasted) | note (added to a message: the `@` files, a `!` command's output)
    chars_before: int
    chars_after: int


@dataclass(frozen=True, slots=True)
class HistoryTrimmed:
    """Room was made without a summary: the oldest messages dropped, large tool results cut down and/or a text the
    user sent cut in the middle (`cut`). `notice` is one line for the user that names each of them."""

    dropped: int
    stubbed: int
    notice: str
    reason: str  # long | overflow
    tokens_before: int
    tokens_after: int
    ledger: Ledger | None = None  # what the dropped messages held, word for word
    cut: tuple[TextCut, ...] = ()  # the user's texts cut to fit, largest first


@dataclass(frozen=True, slots=True)
class OutsideAccess:
    """A running cell opened a network connection or read a file outside the workspace: the turn is untrusted."""

    pad: str
    cell: int
    kind: str  # network | file
    target: str


@dataclass(frozen=True, slots=True)
class MemoryHistoryBroken:
    """The history of a memory scope cannot be written; memory itself is saved as usual (said once per scope)."""

    scope: str
    message: str


@dataclass(frozen=True, slots=True)
class MemorySynced:
    """A sync of shared memory ended (or the last one is recalled at start): a short line for the header, whether it
    went well, and whether parts of a merge wait in the History tab."""

    line: str
    ok: bool
    waiting: int = 0
    detail: str = ""  # what went wrong, for a chat notice (a timed sync that needs the user; empty otherwise)


@dataclass(frozen=True, slots=True)
class HistoryNotSaved:
    """The conversation could not be saved to its history file (`reason` is one line; the file was left alone)."""

    session_id: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    input_tokens: int
    output_tokens: int
    total_input_tokens: int
    total_output_tokens: int


@dataclass(frozen=True, slots=True)
class TurnFinished:
    turn: int
    stop_reason: str  # end_turn | cancelled | error | cap_exhausted
    text: str


@dataclass(frozen=True, slots=True)
class GoalMarkedComplete:
    """During a `/goal` run the model called `mark_goal_complete`; `summary` is what it says it achieved."""

    summary: str


@dataclass(frozen=True, slots=True)
class ErrorOccurred:
    message: str
    retryable: bool = True


@dataclass(frozen=True, slots=True)
class ConversationSummarised:
    """A finished conversation's summary was written (in the background): its id and title."""

    session_id: str
    title: str


@dataclass(frozen=True, slots=True)
class ReflectionsWritten:
    """Reflections ran in the background: the files written, the quiet periods, and how many proposals now wait for
    a person."""

    written: tuple[str, ...]
    quiet: tuple[str, ...]
    held: int = 0
    failed: tuple[str, ...] = ()


SessionEvent = (
    TurnStarted
    | AssistantTextDelta
    | AssistantMessageDone
    | ToolCallStarted
    | ToolCallFinished
    | ScratchpadActivity
    | MemoryWritten
    | SecretsRemoved
    | MemoryConfirmationNeeded
    | AccEventObserved
    | AccNudge
    | HistoryRepaired
    | SummaryAhead
    | HistorySummarising
    | HistorySummarised
    | HistoryTrimmed
    | HistoryNotSaved
    | MemoryHistoryBroken
    | MemorySynced
    | OutsideAccess
    | UsageUpdated
    | TurnFinished
    | GoalMarkedComplete
    | ErrorOccurred
    | ConversationSummarised
    | ReflectionsWritten
)
