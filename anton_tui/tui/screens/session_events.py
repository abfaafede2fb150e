"""Where each engine event of a turn, a goal run or the work after a turn shows on the main screen.

The workers post the engine's `SessionEvent`s to the screen as `SessionEventMessage`s, in order; `SessionEventRouter`
hands each to the part that shows it: streamed text, tool calls and notices to the chat, cells to the scratchpad pane,
the held count, sync state and usage to the header, a question about memories to the waiting reviews, the end of the
turn to the turns, and every event to the side column (the inspector follows memory changes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.content import Content

from anton_tui.agent.events import (
    AccNudge,
    AssistantMessageDone,
    AssistantTextDelta,
    ErrorOccurred,
    HistoryNotSaved,
    HistoryRepaired,
    HistorySummarised,
    HistoryTrimmed,
    MemoryConfirmationNeeded,
    MemoryHistoryBroken,
    MemorySynced,
    MemoryWritten,
    ScratchpadActivity,
    SecretsRemoved,
    SummaryAhead,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageUpdated,
)
from anton_tui.agent.goal import GoalFinished, GoalTurnStarted
from anton_tui.tui.screens.screen_parts import ScreenParts
from anton_tui.tui.widgets.chat import acc_notice, history_notice, memory_notice, repair_notice, secrets_notice
from anton_tui.tui.widgets.summary_block import SummaryBlock, summary_ahead_notice

if TYPE_CHECKING:
    from anton_tui.agent.events import SessionEvent
    from anton_tui.runtime import Runtime
    from anton_tui.tui.screens.pane_layout import PaneLayout
    from anton_tui.tui.screens.turns import Turns
    from anton_tui.tui.screens.waiting_reviews import WaitingReviews
    from anton_tui.tui.widgets.chat import ChatView


class RoutedScreen(ScreenParts, Protocol):
    """The parts of the screen that show the events (the `MainScreen`'s)."""

    @property
    def chat(self) -> ChatView: ...
    @property
    def panes(self) -> PaneLayout: ...
    @property
    def turns(self) -> Turns: ...
    @property
    def reviews(self) -> WaitingReviews: ...
    @property
    def attached_runtime(self) -> Runtime: ...  # events come only once the runtime is there
    def alert(self, title: str, body: str) -> None: ...


class SessionEventRouter:
    """Shows each engine event in the parts of `screen`."""

    def __init__(self, screen: RoutedScreen) -> None:
        self.screen = screen

    async def route(self, event: SessionEvent) -> None:
        screen = self.screen
        chat = screen.chat
        if await self.workspace_event(event):
            return
        match event:
            case AssistantTextDelta(text=text):
                await chat.append_answer(text)
                return  # nothing else follows streamed text
            case AssistantMessageDone(text=text):
                await chat.end_answer(text)
            case ToolCallStarted():
                await chat.start_tool(event)
            case ToolCallFinished():
                await chat.finish_tool(event)
            case ScratchpadActivity(event=activity):
                await screen.side.scratchpad.apply(activity)
                screen.panes.mark_news("scratchpad")
            case MemoryWritten(producer="acc"):
                pass  # the AccNudge that comes with it already shows the new rule, with its detector
            case MemoryWritten():
                await chat.add_notice(memory_notice(event), "memory")
            case SecretsRemoved():
                await chat.add_notice(secrets_notice(event), "secrets")
                if event.pad is not None and event.cell is not None:
                    screen.side.scratchpad.mark_hidden(event.pad, event.cell, event.kinds)
            case MemoryConfirmationNeeded():
                screen.header.set_held(screen.attached_runtime.held_count)
                screen.alert("Anton is waiting", "Memories to confirm.")
                screen.reviews.add(event)
            case AccNudge():
                await chat.add_notice(acc_notice(event), "acc")
            case HistoryRepaired():
                await chat.add_notice(repair_notice(event), "info")
            case HistorySummarised():
                detail = f"({event.folded} messages, about {event.tokens_before:,} → {event.tokens_after:,} tokens)"
                await chat.add_block(SummaryBlock(event.summary, detail, (event.ledger,) if event.ledger else ()))
            case SummaryAhead(tokens=tokens, at_tokens=at):
                await chat.add_notice(summary_ahead_notice(tokens, at), "info")
            case HistoryTrimmed() | HistoryNotSaved():
                await chat.add_notice(history_notice(event), "info")
            case MemoryHistoryBroken(message=text):
                await chat.add_notice(Content(text), "info")
            case MemorySynced(line=line, ok=ok, waiting=waiting, detail=detail):
                screen.header.set_sync(line, ok, waiting)
                if detail:
                    await chat.add_notice(Content(detail), "info")
            case UsageUpdated():
                screen.header.show_usage(screen.attached_runtime.note_usage(event))  # tokens, cost, context
            case ErrorOccurred(message=text, retryable=retryable):
                screen.alert("Anton: error", text)
                screen.turns.offer_retry(retryable)
                await chat.add_error(text, retryable=retryable)
            case TurnFinished(stop_reason=reason):
                await screen.turns.close(reason)
            case GoalTurnStarted() | GoalFinished():
                await screen.turns.goal_event(event)
        screen.side.apply_event(event)

    async def workspace_event(self, event: SessionEvent) -> bool:
        """Show a turn event about the workspace (a mention that could not be passed on); False for any other."""
        from anton_tui.agent.mentions import MentionRefused

        if isinstance(event, MentionRefused):
            await self.screen.chat.add_notice(Content(event.line), "mention")
            return True
        return False
