"""Picking one of your past messages in the chat from the keyboard, to see what its turn saw or to go back to it.

`SelectableChat` is the chat's base class. **Alt+Up** / **Alt+Down** (and **Up** / **Down** once a message is
picked) move a highlight over your messages still on screen; **i** opens what that turn's request carried of memory
and skills (`TurnContextScreen`), **r** goes back to before the message (the same question and outcome as
`/rewind`), **f** forks the conversation at it (`/conversation fork`) and continues in the fork, **Escape** drops the highlight and returns to the prompt. Which history entry and which turn a message on
screen is comes from the engine's list of typed messages (`Runtime.user_turns()`), paired from the newest by text
(`Runtime.user_turn_shown`) with all the chat's messages, mounted or not (`user_texts`); a resumed
conversation's messages have no turn of this run.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget

from anton_tui.tui.holds_runtime import runtime_of

SELECTED = "-selected"


class SelectableChat(VerticalScroll):
    """A transcript whose user messages can be picked from the keyboard (see the module docstring)."""

    SCOPED_CSS = False
    DEFAULT_CSS = """
    SelectableChat > UserMessage.-selected {
        border-left: outer $warning;
        background: $warning 15%;
    }
    """

    BINDINGS = [
        Binding("alt+up", "select_message(-1)", "Pick a message", id="chat.select-previous"),
        Binding("alt+down", "select_message(1)", "Next message", id="chat.select-next", show=False),
        Binding("i", "turn_context", "What it saw", id="chat.turn-context"),
        Binding("r", "rewind_here", "Rewind here", id="chat.rewind-here"),
        Binding("f", "fork_here", "Fork here", id="chat.fork-here"),
        Binding("escape", "clear_selection", "Done", id="chat.clear-selection"),
    ]

    selected: Widget | None = None

    def user_message_blocks(self) -> list[Widget]:
        return list(self.query_children("UserMessage"))

    def picked(self) -> Widget | None:
        """The highlighted message, if it is still on screen (a rewind or a new conversation clears the chat)."""
        if self.selected is not None and self.selected.parent is not self:
            self.selected = None
        return self.selected

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("turn_context", "rewind_here", "fork_here", "clear_selection"):
            return self.picked() is not None
        return super().check_action(action, parameters)

    def action_select_message(self, step: int) -> None:
        """Move the highlight `step` messages (negative: older); the first move picks the newest message."""
        messages = self.user_message_blocks()
        if not messages:
            self.notify("None of your messages is in the chat yet.", title="Pick a message")
            return
        current = self.picked()
        at = messages.index(current) if current in messages else len(messages)
        target = messages[min(max(at + step, 0), len(messages) - 1)]
        if current is not None:
            current.remove_class(SELECTED)
        self.selected = target
        target.add_class(SELECTED)
        self.focus()
        self.scroll_to_widget(target, animate=False, top=False)
        self.refresh_bindings()

    def action_clear_selection(self) -> None:
        if (current := self.picked()) is not None:
            current.remove_class(SELECTED)
        self.selected = None
        self.refresh_bindings()
        self.call_later(self.run_action, "screen.focus_prompt")  # (a screen without a prompt has no such action)

    def action_scroll_up(self) -> None:
        if self.picked() is not None:
            self.action_select_message(-1)
        else:
            super().action_scroll_up()

    def action_scroll_down(self) -> None:
        if self.picked() is not None:
            self.action_select_message(1)
        else:
            super().action_scroll_down()

    def user_texts(self, picked: Widget) -> tuple[list[str], int]:
        """The texts of the user's messages in the conversation, oldest first, and the place of `picked` among them
        (the chat knows those no longer mounted too)."""
        messages = self.user_message_blocks()
        return [str(getattr(m, "text", "")) for m in messages], messages.index(picked)

    def picked_turn(self) -> Any:
        """The `UserTurn` of the highlighted message (None when it is no longer in the conversation)."""
        current, runtime = self.picked(), runtime_of(self.app)
        if current is None or runtime is None:
            return None
        texts, at = self.user_texts(current)
        return runtime.user_turn_shown(texts, at)

    def action_turn_context(self) -> None:
        from anton_tui.tui.screens.turn_context import TurnContextScreen

        turn = self.picked_turn()
        if turn is None:
            self.notify("This message is no longer in the conversation.", severity="warning")
            return
        runtime = runtime_of(self.app)
        report = runtime.context_report(turn.turn) if turn.turn is not None and runtime is not None else None
        self.app.push_screen(TurnContextScreen(report, turn.text))

    def action_rewind_here(self) -> None:
        turn = self.picked_turn()
        if turn is None:
            self.notify("This message is no longer in the conversation.", severity="warning")
            return
        self.app.rewind_to(turn.index)  # type: ignore[attr-defined]

    def action_fork_here(self) -> None:
        turn = self.picked_turn()
        if turn is None:
            self.notify("This message is no longer in the conversation.", severity="warning")
            return
        self.app.fork_at(turn.index)  # type: ignore[attr-defined]  # AntonApp's, as rewind_to above
