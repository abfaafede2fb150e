"""A loaded conversation as the chat shows it: what the user typed, the answers, each tool call with its result,
the summary standing for earlier turns, and the lines of a `/goal` run.

`transcript` reads Anton's message list (ours or Anton's) without changing it; the chat, the early view of a
conversation being resumed and the Markdown export all draw from it. A goal's turns are sent with messages this
program wrote (`agent/goal.py`); they are known by their exact shape and shown as the live chat showed the run: its
start, "turn N of M" for each later turn, and how it ended, read back from what the turns hold.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anton_tui.agent.goal import CONTINUATION_MESSAGE, FIRST_MESSAGE, GoalFinished, GoalTurnStarted
from anton_tui.agent.history import CANCELLED_CLOSING
from anton_tui.agent.messages import is_user_turn, message_text, user_text
from anton_tui.agent.prompts import CANCELLED_RESULT
from anton_tui.agent.summarise import summary_prefix, summary_text
from anton_tui.agent.tools.goal_complete import NAME as MARK_GOAL_COMPLETE

if TYPE_CHECKING:
    from anton_tui.agent.ledger import Ledger

CANCELLED_TURN = "Turn cancelled."
"""What the chat says of a cancelled turn, live and in a saved conversation."""


@dataclass(frozen=True)
class TranscriptEntry:
    """One thing to show of a loaded conversation: "user" (what was typed; `index` is its place in the history,
    for rewinding), "answer" (Markdown), "tool" (a call: `tool`, `input`, its result in `text`, `success`, and
    `cancelled` when the user cancelled it before it finished), "cancelled" (a turn the user cancelled before the
    model wrote anything; `text` says so), "summary" (the record standing for the earlier turns, with the `ledgers`
    of what they held when this program summarised them) or "goal" (a line of a `/goal` run: `goal` is its
    `GoalTurnStarted` or `GoalFinished`, `text` what the chat says of it)."""

    kind: str
    text: str
    index: int
    tool: str | None = None
    input: Any = None
    success: bool = True
    ledgers: tuple[Ledger, ...] = ()
    goal: GoalTurnStarted | GoalFinished | None = None
    cancelled: bool = False

    @property
    def starts_goal(self) -> bool:
        """The start of a `/goal` run (the chat shows it, as it did live, as the message that started the run)."""
        return isinstance(self.goal, GoalTurnStarted) and self.goal.turn == 1


def _template_pattern(template: str, fields: dict[str, str]) -> re.Pattern[str]:
    """A pattern that matches exactly the texts `template` makes, each of its fields caught by `fields[name]`."""
    parts = [
        re.escape(literal) + (f"(?P<{name}>{fields[name]})" if name else "")
        for literal, name, _spec, _conversion in string.Formatter().parse(template)
    ]
    return re.compile("".join(parts))


_FIRST = _template_pattern(FIRST_MESSAGE, {"objective": ".+", "max_turns": r"\d+"})
_CONTINUATION = _template_pattern(CONTINUATION_MESSAGE, {"turn": r"\d+", "max_turns": r"\d+", "reminder": ".+"})


def goal_turn(text: str) -> GoalTurnStarted | None:
    """The goal turn a user message started, when it is one of the messages a `/goal` run sends."""
    if (found := _FIRST.fullmatch(text)) is not None:
        return GoalTurnStarted(1, int(found["max_turns"]), found["objective"])
    if (found := _CONTINUATION.fullmatch(text)) is not None:
        return GoalTurnStarted(int(found["turn"]), int(found["max_turns"]), found["reminder"])
    return None


@dataclass
class _GoalRead:
    """A goal run being read back: how far it went, and what its turns held of its end."""

    max_turns: int
    turns: int = 0
    summary: str = ""
    answered: bool = False  # the latest turn has a reply
    cancelled: bool = False  # the latest turn was cancelled by the user

    def next_turn(self, turn: int) -> None:
        self.turns, self.answered, self.cancelled = turn, False, False

    def finished(self) -> GoalFinished:
        if self.summary:
            outcome = "complete"
        elif self.cancelled:
            outcome = "stopped"
        elif not self.answered:
            outcome = "failed"
        elif self.turns >= self.max_turns:
            outcome = "turn_limit"
        else:
            outcome = "stopped"
        return GoalFinished(outcome, self.turns, self.max_turns, self.summary)


@dataclass
class _Reader:
    """Turns the history into entries, one message after another."""

    results: dict[str, dict[str, Any]]
    entries: list[TranscriptEntry] = field(default_factory=list)
    goal: _GoalRead | None = None

    def user(self, message: dict[str, Any], index: int) -> None:
        text = user_text(message)
        started = goal_turn(text)
        goal = self.goal
        if goal is not None and (started is None or started.turn != goal.turns + 1):
            self.end_goal(index)
            goal = None
        if started is None:
            self.entries.append(TranscriptEntry("user", text, index))
            return
        if goal is None:
            goal = self.goal = _GoalRead(started.max_turns)
        goal.next_turn(started.turn)
        self.entries.append(TranscriptEntry("goal", started.line, index, goal=started))

    def end_goal(self, index: int) -> None:
        if self.goal is not None:
            finished = self.goal.finished()
            self.entries.append(TranscriptEntry("goal", finished.line, index, goal=finished))
            self.goal = None

    def assistant(self, message: dict[str, Any], index: int) -> None:
        content = message.get("content")
        closing = message_text(message).strip() == CANCELLED_CLOSING
        if self.goal is not None:
            self.goal.answered = True
            self.goal.cancelled = self.goal.cancelled or closing
        if closing:  # (the stand-in answer the session writes after a cancel, not the model's)
            self.entries.append(TranscriptEntry("cancelled", CANCELLED_TURN, index))
            return
        if isinstance(content, str):
            if content.strip():
                self.entries.append(TranscriptEntry("answer", content, index))
            return
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                self.entries.append(TranscriptEntry("answer", str(block["text"]), index))
            elif block.get("type") == "tool_use":
                self.tool_call(block, index)

    def tool_call(self, block: dict[str, Any], index: int) -> None:
        result = self.results.get(str(block.get("id")), {})
        text = message_text({"content": result.get("content", "")})
        success = not result.get("is_error", False)
        cancelled = not success and text == CANCELLED_RESULT
        tool_input = block.get("input")
        if self.goal is not None:
            self.goal.cancelled = self.goal.cancelled or cancelled
            if block.get("name") == MARK_GOAL_COMPLETE and success and result and isinstance(tool_input, dict):
                self.goal.summary = " ".join(str(tool_input.get("summary") or "").split())
        self.entries.append(
            TranscriptEntry(
                "tool", text, index, tool=str(block.get("name")), input=tool_input, success=success, cancelled=cancelled
            )
        )


def transcript(history: list[dict[str, Any]], ledgers: tuple[Ledger, ...] = ()) -> list[TranscriptEntry]:
    """The conversation as the chat shows it, oldest first (tool results sit with their calls); a summary entry
    carries `ledgers`."""
    results: dict[str, dict[str, Any]] = {}
    for message in history:
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[str(block.get("tool_use_id"))] = block
    reader = _Reader(results)
    skip = summary_prefix(history)
    if skip:
        reader.entries.append(TranscriptEntry("summary", summary_text(history[0]), 0, ledgers=ledgers))
    for index, message in enumerate(history[skip:], start=skip):
        if message.get("role") == "user":
            if is_user_turn(message):
                reader.user(message, index)
        else:
            reader.assistant(message, index)
    reader.end_goal(len(history))
    return reader.entries
