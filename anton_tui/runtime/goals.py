"""`/goal` runs as the Runtime offers them: start one over the session, and stop it.

`Goals.start(objective, max_turns)` gives the events of a `GoalRun` (`agent/goal.py`): the events of each turn as the
session gives them, with `GoalTurnStarted` before each and `GoalFinished` at the end. `Runtime.cancel()` calls
`stop()`, so Escape both cancels the running turn and keeps the next one from starting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from anton_tui.runtime.protocols import TurnTaking

if TYPE_CHECKING:
    from anton_tui.agent.goal import GoalRun


class Goals:
    """The goal run of one session (one at a time)."""

    def __init__(self, session: TurnTaking) -> None:
        self._session = session
        self._run: GoalRun | None = None

    @staticmethod
    def parse(raw: str) -> tuple[str, int]:
        """What follows `/goal` as (objective, turns). Raises `GoalUsageError` (a ValueError) saying how to use it."""
        from anton_tui.agent.goal import parse_goal

        return parse_goal(raw)

    def start(self, objective: str, max_turns: int) -> AsyncIterator[Any]:
        """The events of a goal run (an async iterator); the run stops at `max_turns` turns at most."""
        from anton_tui.agent.goal import GoalRun

        run = GoalRun(self._session, objective, max_turns)
        self._run = run
        return run.events()

    @property
    def running(self) -> bool:
        return self._run is not None and not self._run.finished

    def stop(self) -> bool:
        """Start no further turn of the running goal; False when no goal runs."""
        if self._run is None or self._run.finished:
            return False
        self._run.stop()
        return True
