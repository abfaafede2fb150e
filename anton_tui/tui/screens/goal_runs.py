"""The main screen's part of a `/goal` run: start it in the turn worker, show the turn counter above the prompt, and
say how it ended.

A goal's turns are ordinary turns to the rest of the screen: their events arrive as `SessionEventMessage`s from the
same worker group, so the chat, the scratchpad and the inspector show them as usual, and Escape cancels the worker as
it cancels a turn (the runtime also stops the run, so no further turn starts). `GoalTurnStarted` moves the counter
and reopens the turn in the header; `GoalFinished` says how the run ended. The worker posts `GoalEnded` last, also
when it was cancelled before the run could say so.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from textual import work
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message

from anton_tui.agent.goal import GoalFinished, GoalTurnStarted
from anton_tui.tui.messages import SessionEventMessage
from anton_tui.tui.widgets.goal_bar import GoalBar
from anton_tui.tui.widgets.header import AntonHeader

if TYPE_CHECKING:
    from anton_tui.tui.screens.main import MainScreen

TURN_GROUP = "turn"  # the main screen's turn worker group: one turn or one goal at a time


class GoalEnded(Message):
    """The goal worker is done (finished, failed or cancelled)."""


def finished_text(event: GoalFinished) -> str:
    turns = f"{event.turns} turn{'s' if event.turns != 1 else ''}"
    if event.outcome == "complete":
        return f"Goal complete after {turns}: {event.summary}"
    if event.outcome == "turn_limit":
        return f"Goal not marked complete after {turns}, the limit (/goal … --turns N allows more)."
    if event.outcome == "failed":
        return f"Goal stopped: turn {event.turns} of {event.max_turns} failed."
    return f"Goal stopped after turn {event.turns} of {event.max_turns}."


class GoalRuns:
    """Mixed into `MainScreen`."""

    _goal_bar: GoalBar | None = None
    _goal_said_end = False

    def start_goal(self: MainScreen, objective: str, max_turns: int) -> str | None:
        """Start working on `objective` over up to `max_turns` turns; the reason when it cannot start now."""
        if self.runtime is None:
            return "Still starting; try again in a moment."
        if self.busy:
            return "Anton is still working. Press Escape to cancel first, then start the goal."
        self.call_later(self._begin_goal, objective, max_turns)
        return None

    async def _begin_goal(self: MainScreen, objective: str, max_turns: int) -> None:
        self.last_prompt = None  # Ctrl+R sends a message again, not a goal
        self._turn_closed = False
        self._retry_offered = False
        self._goal_said_end = False
        await self.chat.add_user_message(f"Goal: {objective}")
        await self.chat.add_notice(
            Content(f"Anton works on this on its own, up to {max_turns} turns, until it marks the goal complete. "
                    "Escape stops it."), "goal")  # fmt: skip
        bar = self._goal_bar = GoalBar(objective, max_turns, id="goal-bar")
        await self.query_one("#conversation").mount(bar, before="#prompt-bar")
        self.query_one(AntonHeader).set_status("working…", busy=True)
        self._turn_worker = self.run_goal(objective, max_turns)
        self.refresh_bindings()

    @work(group=TURN_GROUP, exclusive=True, exit_on_error=False)
    async def run_goal(self: MainScreen, objective: str, max_turns: int) -> None:
        try:
            await self._runtime_attached.wait()
            async for event in self.runtime.goal(objective, max_turns):  # type: ignore[union-attr]
                self.post_message(SessionEventMessage(event))
        finally:
            self.post_message(GoalEnded())

    async def show_goal_event(self: MainScreen, event: Any) -> None:
        """A `GoalTurnStarted` or `GoalFinished` from the run."""
        if isinstance(event, GoalTurnStarted):
            if self._goal_bar is not None:
                self._goal_bar.show_turn(event.turn)
            if event.turn > 1:
                self._turn_closed = False  # the previous turn closed in the UI; this one is open again
                await self.chat.add_notice(Content(f"Goal: turn {event.turn} of {event.max_turns}"), "goal")
                self.query_one(AntonHeader).set_status("working…", busy=True)
        elif isinstance(event, GoalFinished):
            self._goal_said_end = True
            await self.chat.add_notice(Content(finished_text(event)), "goal")
            await self._remove_goal_bar()

    async def on_goal_ended(self: MainScreen, message: GoalEnded) -> None:
        bar = self._goal_bar
        if not self._goal_said_end and bar is not None:
            text = f"Goal stopped after turn {bar.turn} of {bar.max_turns}."
            await self.chat.add_notice(Content(text), "goal")
        self._goal_said_end = True
        await self._remove_goal_bar()

    async def _remove_goal_bar(self: MainScreen) -> None:
        bar, self._goal_bar = self._goal_bar, None
        if bar is not None:
            with contextlib.suppress(NoMatches):
                await bar.remove()
