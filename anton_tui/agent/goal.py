"""A goal the agent works on by itself: turn after turn, until the model says the goal is met or the turns run out.

`/goal <objective> [--turns N]` starts a `GoalRun`. Its first turn sends the objective with the instructions; each
later turn sends a short continuation message. The model ends the run by calling the `mark_goal_complete` tool
(`agent/tools/goal_complete.py`, offered only while the run lasts) with a summary of what it achieved. The run also
ends after N turns (`DEFAULT_GOAL_TURNS` when not given, as in anton-agent), when a turn is cancelled or `stop()` is
called (Escape), and when a turn fails.

`GoalRun.events()` yields the events of every turn exactly as `ChatSession.turn()` does, with a `GoalTurnStarted`
before each turn and one `GoalFinished` at the end, so whoever shows a normal turn shows a goal's turns the same way.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from anton_tui.agent.events import GoalMarkedComplete, TurnFinished
from anton_tui.agent.tools.goal_complete import MARK_GOAL_COMPLETE_TOOL, NAME

if TYPE_CHECKING:
    from anton_tui.agent.events import SessionEvent
    from anton_tui.agent.tools.registry import ToolRegistry

DEFAULT_GOAL_TURNS = 50
"""Turns a goal may take when `--turns` is not given: anton-agent's own default (2.26.10.26.1, `/goal`)."""

USAGE = "/goal <objective> [--turns N]"
_TURNS = re.compile(r"--turns(?:\s+|=)(\S+)")
_OBJECTIVE_IN_REMINDER = 300  # characters of the objective repeated in each continuation message


class GoalUsageError(ValueError):
    """What is wrong with the words given to /goal, as one line for the user."""


@dataclass(frozen=True, slots=True)
class GoalTurnStarted:
    """Turn `turn` of at most `max_turns` of a goal starts (its own `TurnStarted` follows)."""

    turn: int
    max_turns: int
    objective: str

    @property
    def line(self) -> str:
        """What the chat says of it: the objective for the first turn, the turn's number for the others."""
        if self.turn == 1:
            return f"Goal: {self.objective}"
        return f"Goal: turn {self.turn} of {self.max_turns}"


@dataclass(frozen=True, slots=True)
class GoalFinished:
    """The goal run is over after `turns` turns. `outcome`: complete (the model marked it so, `summary` says what it
    achieved), turn_limit (the turns ran out), stopped (cancelled by the user) or failed (a turn failed)."""

    outcome: str
    turns: int
    max_turns: int
    summary: str = ""

    @property
    def line(self) -> str:
        """How the run ended, as the chat says it."""
        turns = f"{self.turns} turn{'s' if self.turns != 1 else ''}"
        if self.outcome == "complete":
            return f"Goal complete after {turns}: {self.summary}"
        if self.outcome == "turn_limit":
            return f"Goal not marked complete after {turns}, the limit (/goal … --turns N allows more)."
        if self.outcome == "failed":
            return f"Goal stopped: turn {self.turns} of {self.max_turns} failed."
        return f"Goal stopped after turn {self.turns} of {self.max_turns}."


def parse_goal(raw: str, default_turns: int = DEFAULT_GOAL_TURNS) -> tuple[str, int]:
    """`raw` (what follows `/goal`) as (objective, turns). Line breaks count as spaces; the objective may be quoted."""
    text = " ".join(raw.split())
    turns = default_turns
    found = _TURNS.search(text)
    if found is not None:
        value = found.group(1)
        if not value.isdigit() or int(value) < 1:
            raise GoalUsageError(f"--turns wants a whole number of turns, 1 or more (got {value}). Usage: {USAGE}")
        turns = int(value)
        text = (text[: found.start()] + text[found.end() :]).strip()
    elif "--turns" in text:
        raise GoalUsageError(f"--turns needs a number of turns after it. Usage: {USAGE}")
    objective = text.strip()
    if len(objective) >= 2 and objective[0] == objective[-1] and objective[0] in "\"'":
        objective = objective[1:-1].strip()
    if not objective:
        raise GoalUsageError(
            f"Usage: {USAGE}. Anton then works on the objective on its own, turn after turn, until it marks the "
            f"goal complete or has used N turns ({default_turns} when not given). Escape stops it."
        )
    return objective, turns


FIRST_MESSAGE = (
    "Goal: {objective}\n\n"
    "Work on this goal on your own, over up to {max_turns} turns; nobody will answer in between. In each turn take "
    "the next concrete step and check what it gives. When every part of the goal is done and checked, call "
    "`mark_goal_complete` with a short summary of what was achieved."
)
"""The message of a goal's first turn. The transcript knows a goal's messages by their shape: change both as one."""

CONTINUATION_MESSAGE = (
    "Goal turn {turn} of {max_turns}. Carry on with the goal ({reminder}): take the next step. If it is fully done "
    "and checked, call `mark_goal_complete` with a short summary."
)
"""The message of each later turn of a goal (`reminder`: the objective, cut to `_OBJECTIVE_IN_REMINDER`)."""


def first_message(objective: str, max_turns: int) -> str:
    return FIRST_MESSAGE.format(objective=objective, max_turns=max_turns)


def continuation_message(objective: str, turn: int, max_turns: int) -> str:
    reminder = objective if len(objective) <= _OBJECTIVE_IN_REMINDER else objective[:_OBJECTIVE_IN_REMINDER] + "…"
    return CONTINUATION_MESSAGE.format(turn=turn, max_turns=max_turns, reminder=reminder)


class GoalSession(Protocol):
    """What a goal runs over: a conversation whose turns stream events."""

    def turn(self, user_text: str) -> AsyncIterator[SessionEvent]: ...


@runtime_checkable
class WithTools(Protocol):
    """A session whose model is offered tools from a registry (the goal adds `mark_goal_complete` to it)."""

    tools: ToolRegistry


class GoalRun:
    """One run of a goal over `session`; a session `WithTools` is offered the tool that marks the goal complete."""

    def __init__(self, session: GoalSession, objective: str, max_turns: int = DEFAULT_GOAL_TURNS) -> None:
        if max_turns < 1:
            raise GoalUsageError("A goal needs at least one turn.")
        self.session = session
        self.objective = objective
        self.max_turns = max_turns
        self.turn = 0
        self.finished = False
        self._stopped = False

    def stop(self) -> None:
        """Start no further turn (the running one is cancelled by whoever called this, as for any turn)."""
        self._stopped = True

    async def events(self) -> AsyncIterator[Any]:
        tools = self.session.tools if isinstance(self.session, WithTools) else None
        offered = tools is not None and tools.get(NAME) is None
        if tools is not None and offered:
            tools.register(MARK_GOAL_COMPLETE_TOOL)
        outcome, summary = "turn_limit", ""
        try:
            while self.turn < self.max_turns:
                if self._stopped:
                    outcome = "stopped"
                    break
                self.turn += 1
                yield GoalTurnStarted(self.turn, self.max_turns, self.objective)
                if self.turn == 1:
                    text = first_message(self.objective, self.max_turns)
                else:
                    text = continuation_message(self.objective, self.turn, self.max_turns)
                reason = "end_turn"
                async for event in self.session.turn(text):
                    if isinstance(event, GoalMarkedComplete):
                        summary = event.summary
                    elif isinstance(event, TurnFinished):
                        reason = event.stop_reason
                    yield event
                if summary:
                    outcome = "complete"
                    break
                if reason == "cancelled" or self._stopped:
                    outcome = "stopped"
                    break
                if reason == "error":
                    outcome = "failed"
                    break
            self.finished = True
            yield GoalFinished(outcome, self.turn, self.max_turns, summary)
        finally:
            self.finished = True
            if tools is not None and offered:
                tools.unregister(NAME)
