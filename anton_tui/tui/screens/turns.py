"""The main screen's running turn: a message sent, or a `/goal` run of several turns, from its start to its end.

`Turns` starts a turn in a worker that only posts the engine's events to the screen (`SessionEventMessage`), or
mounts a `GoalRunner` above the prompt whose worker does the same for each turn of the run; either worker is "the
running turn", which Escape cancels. It closes the turn in the UI once, whichever comes first of the engine's
`TurnFinished` and the worker's end, and keeps what Ctrl+R needs: the last message sent and whether it is offered
again (after an error or a cancelled turn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual.content import Content
from textual.worker import Worker, WorkerState

from anton_tui.agent.goal import GoalTurnStarted
from anton_tui.agent.transcript import CANCELLED_TURN
from anton_tui.tui.messages import SessionEventMessage
from anton_tui.tui.screens.screen_parts import ScreenParts, ScreenWork
from anton_tui.tui.widgets.goal_runner import GoalRunner

if TYPE_CHECKING:
    from anton_tui.agent.goal import GoalFinished
    from anton_tui.runtime import Runtime

TURN_GROUP = "turn"  # the workers' group of a turn started here (a goal's worker is its `GoalRunner`'s)


class TurnHost(ScreenParts, ScreenWork, Protocol):
    """What the turns need of the screen that holds them (the `MainScreen`)."""

    @property
    def runtime(self) -> Runtime | None: ...
    async def ready_runtime(self) -> Runtime: ...  # waits for the runtime when the app builds it late
    @property
    def busy(self) -> bool: ...  # a turn or a `!` command runs
    def alert(self, title: str, body: str) -> None: ...
    def turn_closed(self, reason: str) -> None: ...  # the turn is over in the UI: what comes after it
    def refresh_bindings(self) -> None: ...


class Turns:
    """The turn that runs on `screen`, if any, and what may be sent again."""

    def __init__(self, screen: TurnHost) -> None:
        self.screen = screen
        self.worker: Worker[Any] | None = None  # the running turn's, or the running goal's
        self.goal: GoalRunner | None = None
        self.last_prompt: str | None = None
        self.closed = True
        self.retry_offered = False

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_finished

    @property
    def can_retry(self) -> bool:
        return self.retry_offered and self.last_prompt is not None

    async def send(self, text: str) -> None:
        """Show the message and start a turn with it."""
        self.last_prompt = text
        await self._open(text)
        self.worker = self.screen.run_worker(
            self._forward(text), name="run_turn", group=TURN_GROUP, exclusive=True, exit_on_error=False
        )
        self.screen.refresh_bindings()

    async def _forward(self, text: str) -> None:
        runtime = await self.screen.ready_runtime()
        async for event in runtime.turn(text):
            self.screen.post_message(SessionEventMessage(event))

    async def _open(self, shown: str) -> None:
        self.closed = False
        self.retry_offered = False
        await self.screen.conversation.chat.add_user_message(shown)
        self.screen.header.set_status("working…", busy=True)

    async def close(self, reason: str) -> None:
        """End the turn in the UI once, whichever of TurnFinished or the worker ending comes first."""
        if self.closed:
            return
        self.closed = True
        chat, scratchpad = self.screen.conversation.chat, self.screen.side.scratchpad
        cancelled = reason == "cancelled"
        if cancelled:
            await chat.cancel_running()
            scratchpad.stop_running("cancelled")
            await chat.add_notice(Content(CANCELLED_TURN), "cancelled")
            self.retry_offered = True
        else:
            await chat.end_answer()
            scratchpad.stop_running("killed" if reason == "error" else "cancelled")
        if reason == "cap_exhausted":
            await chat.add_notice(Content("Stopped at the tool-round limit; the answer so far is above."), "info")
        self.screen.header.set_status("cancelled" if cancelled else "ready", busy=False)
        self.screen.turn_closed(reason)

    async def worker_changed(self, event: Worker.StateChanged) -> bool:
        """Close the turn when its worker has ended; True when it had."""
        worker = event.worker
        if worker.group != TURN_GROUP or worker is not self.worker or not worker.is_finished:
            return False
        await self.close({WorkerState.CANCELLED: "cancelled", WorkerState.ERROR: "error"}.get(event.state, "end_turn"))
        self.screen.refresh_bindings()  # the turn may have been closed by its TurnFinished while the worker still ran
        return True

    def offer_retry(self, offered: bool) -> None:
        """The turn's error said whether sending the message again may help (Ctrl+R offers it)."""
        self.retry_offered = offered

    async def fail(self, error: BaseException) -> None:
        """The turn's work failed with `error`: said in the chat, and the message is offered again."""
        text = failure_text(error)
        self.retry_offered = True
        self.screen.alert("Anton: error", text)
        await self.screen.conversation.chat.add_error(text, retryable=True)

    async def cancel(self) -> None:
        """Escape: stop the running turn (and a goal's next turns)."""
        if self.screen.runtime is not None:
            await self.screen.runtime.cancel()
        if self.worker is not None:
            self.worker.cancel()

    # --- `/goal` runs -------------------------------------------------------------------------------------------------

    def start_goal(self, objective: str, max_turns: int) -> str | None:
        """Start working on `objective` over up to `max_turns` turns; the reason when it cannot start now."""
        runtime = self.screen.runtime
        if runtime is None:
            return "Still starting; try again in a moment."
        if self.screen.busy:
            return "Anton is still working. Press Escape to cancel first, then start the goal."
        self.screen.call_later(self._begin_goal, runtime, objective, max_turns)
        return None

    async def _begin_goal(self, runtime: Runtime, objective: str, max_turns: int) -> None:
        self.last_prompt = None  # Ctrl+R sends a message again, not a goal
        await self._open(f"Goal: {objective}")
        await self.screen.conversation.chat.add_notice(
            Content(f"Anton works on this on its own, up to {max_turns} turns, until it marks the goal complete. "
                    "Escape stops it."), "goal")  # fmt: skip
        goal = self.goal = GoalRunner(objective, max_turns, id="goal-bar")
        await self.screen.conversation.mount(goal, before="#prompt-bar")
        self.worker = goal.start(runtime, goal.screen)  # its events go to the screen, as a turn's do
        self.screen.refresh_bindings()

    async def goal_event(self, event: GoalTurnStarted | GoalFinished) -> None:
        """A `GoalTurnStarted` or `GoalFinished` from the run: a line in the chat, and a turn after the first opens
        again in the header."""
        note = self.goal.note(event) if self.goal is not None else None
        if isinstance(event, GoalTurnStarted) and event.turn > 1:
            self.closed = False  # the previous turn closed in the UI; this one is open again
            self.screen.header.set_status("working…", busy=True)
        if note is not None:
            await self.screen.conversation.chat.add_notice(Content(note), "goal")

    async def goal_ended(self, message: GoalRunner.Ended) -> None:
        """The goal's worker ended: how the run ended, if it could not say so, and the turn closes."""
        if (untold := message.runner.untold_end) is not None:
            await self.screen.conversation.chat.add_notice(Content(untold), "goal")
        if message.runner is self.goal:
            self.goal = None
        await message.runner.remove()
        if message.error is not None:
            await self.fail(message.error)
        await self.close(message.reason)


def failure_text(error: BaseException) -> str:
    """How a failed worker's `error` is told to the user."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
