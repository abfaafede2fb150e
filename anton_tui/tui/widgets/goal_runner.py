"""A `/goal` run on screen: the line above the prompt that says which turn of how many runs and what the objective
is, and the worker that runs the turns.

The screen mounts it above the prompt when the goal starts, starts it (`start`, which hands back the worker: the
screen treats it as the running turn, so Escape cancels it as it cancels a turn), and removes it once it has ended
(`GoalRunner.Ended`). The run's events go to the screen as `SessionEventMessage`s, as a turn's do, so the chat, the
scratchpad and the inspector show them as usual; for `GoalTurnStarted` and `GoalFinished` the screen asks `note`
what to say in the chat. The runtime also stops the run when the turn is cancelled, so no further turn starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from textual import work
from textual.content import Content
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from anton_tui.agent.goal import GoalFinished, GoalTurnStarted
from anton_tui.tui.messages import SessionEventMessage


class Goals(Protocol):
    """What runs a goal (the `Runtime`)."""

    def goal(self, objective: str, max_turns: int) -> AsyncIterator[Any]: ...


class GoalRunner(Static):
    """Shown from the start of a goal run until the run says how it ended; posts `Ended` when its worker ends."""

    DEFAULT_CSS = """
    GoalRunner {
        height: 1;
        padding: 0 1;
        background: $boost;
        color: $text-accent;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    class Ended(Message):
        """The goal's worker ended: `reason` is "end_turn", "cancelled" or "error" (with `error`)."""

        def __init__(self, runner: GoalRunner, reason: str, error: BaseException | None) -> None:
            super().__init__()
            self.runner = runner
            self.reason = reason
            self.error = error

    def __init__(self, objective: str, max_turns: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.objective = objective
        self.max_turns = max_turns
        self.turn = 0
        self.said_end = False  # the run said how it ended (`GoalFinished`)
        self.tooltip = f"Goal: {self.one_line}"
        self._run_worker: Worker[Any] | None = None

    @property
    def one_line(self) -> str:
        return " ".join(self.objective.split())

    @property
    def counter(self) -> str:
        return f"goal: turn {self.turn} of {self.max_turns}"

    def show_turn(self, turn: int) -> None:
        self.turn = turn
        self.update(Content.assemble((self.counter, "bold"), " · Esc stops · ", (self.one_line, "italic")))

    def on_mount(self) -> None:
        self.show_turn(self.turn)

    def start(self, goals: Goals, report_to: MessagePump) -> Worker[Any]:
        """Run the goal; its events are posted to `report_to` in order, then `Ended` when the worker is done."""
        self._run_worker = self.run_goal(goals, report_to)
        return self._run_worker

    @work(group="goal", exclusive=True, exit_on_error=False)
    async def run_goal(self, goals: Goals, report_to: MessagePump) -> None:
        async for event in goals.goal(self.objective, self.max_turns):
            report_to.post_message(SessionEventMessage(event))

    def note(self, event: GoalTurnStarted | GoalFinished) -> str | None:
        """What the chat says of this event of the run, if anything; the counter follows it."""
        if isinstance(event, GoalTurnStarted):
            self.show_turn(event.turn)
            return event.line if event.turn > 1 else None
        self.said_end = True
        self.display = False  # the counter goes with the run's end; the screen removes it when its worker ends
        return event.line

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker is not self._run_worker or not worker.is_finished:
            return
        reason = {WorkerState.CANCELLED: "cancelled", WorkerState.ERROR: "error"}.get(event.state, "end_turn")
        self.post_message(self.Ended(self, reason, worker.error if event.state == WorkerState.ERROR else None))

    @property
    def untold_end(self) -> str | None:
        """How the run ended, when it did not say so itself (stopped before it could): asked once its events are
        all shown, as they are when `Ended` reaches the screen."""
        if self.said_end:
            return None
        return GoalFinished("stopped", self.turn, self.max_turns).line
