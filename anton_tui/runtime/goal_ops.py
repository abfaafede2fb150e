"""The Runtime's goal operations: start a `/goal` run over the session, and stop it.

`Runtime.goal(objective, max_turns)` gives the events of a `GoalRun` (`agent/goal.py`): the events of each turn as
`turn()` gives them, with `GoalTurnStarted` before each and `GoalFinished` at the end. `Runtime.cancel()` calls
`stop_goal()`, so Escape both cancels the running turn and keeps the next one from starting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.agent.goal import GoalRun


class GoalOps:
    """Goal runs of the `Runtime` (over its `session`)."""

    session: Any
    _goal_run: GoalRun | None = None

    def goal(self, objective: str, max_turns: int) -> Any:
        """The events of a goal run (an async iterator); the run stops at `max_turns` turns at most."""
        from anton_tui.agent.goal import GoalRun

        run = GoalRun(self.session, objective, max_turns)
        self._goal_run = run
        return run.events()

    @property
    def goal_running(self) -> bool:
        return self._goal_run is not None and not self._goal_run.finished

    def stop_goal(self) -> bool:
        """Start no further turn of the running goal; False when no goal runs."""
        if not self.goal_running:
            return False
        self._goal_run.stop()  # type: ignore[union-attr]
        return True
