"""The main screen's panes and its scratchpad controls: which pane a narrow terminal shows, showing, hiding, widening
and maximising the side panes, moving the focus into a pane, and the scratchpad pane's cancel, reset and remove, find in the conversation and the prompt's focus.

A mixin of `MainScreen` (`screens/main.py`), which declares the reactives (`narrow_pane`, `side_width`) these
watch, and the bindings that call the actions.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from textual import events, work
from textual.css.query import NoMatches
from textual.types import NoActiveAppError
from textual.widget import Widget
from textual.widgets import Footer

from anton_tui.tui.messages import ScratchpadControlDone
from anton_tui.tui.widgets.find_bar import FindBar
from anton_tui.tui.widgets.pane_bar import PANES, PaneBar
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane

if TYPE_CHECKING:
    from anton_tui.tui.screens.main import MainScreen

SIDE_WIDTH_RANGE = (20, 75)  # percent of the screen the side column may take
NARROW_BELOW = 100  # columns; below this one pane at a time fills the body (the screen's `-narrow` class)
COMPACT_FOOTER_BELOW = 140  # columns; below this the footer drops its extra spaces so that every key fits


class PaneLayout:
    """Panes and scratchpad controls of the main screen. Its handlers go by name: `@on` needs a DOM class."""

    # --- scratchpad actions --------------------------------------------------------------------------------------

    def on_scratchpad_pane_cancel_cell_requested(self: MainScreen, message: ScratchpadPane.CancelCellRequested) -> None:
        self._scratchpad_action("cancel_cell", message.pad)

    def on_scratchpad_pane_reset_pad_requested(self: MainScreen, message: ScratchpadPane.ResetPadRequested) -> None:
        self._scratchpad_action("reset_pad", message.pad)

    def on_scratchpad_pane_remove_pad_requested(self: MainScreen, message: ScratchpadPane.RemovePadRequested) -> None:
        self._scratchpad_action("remove_pad", message.pad)

    def _scratchpad_action(self: MainScreen, action: str, pad: str) -> None:
        if self.runtime is None or self.runtime.control is None:
            self.notify("This session cannot control its scratchpads.", severity="warning")
            return
        self.call_scratchpad(action, pad)

    @work(group="scratchpad-control", exit_on_error=False)
    async def call_scratchpad(self: MainScreen, action: str, pad: str) -> None:
        result = await self.runtime.scratchpad_action(action, pad)  # type: ignore[union-attr]
        self.post_message(ScratchpadControlDone(action, pad, result))

    async def on_scratchpad_control_done(self: MainScreen, message: ScratchpadControlDone) -> None:
        if message.action == "reset_pad":
            await self.scratchpad.clear_pad(message.pad)
            self.notify(f"Pad {message.pad!r} was reset.")
        elif message.action == "remove_pad":
            await self.scratchpad.drop_pad(message.pad)
            self.notify(f"Pad {message.pad!r} was removed.")
        else:
            self.notify(f"Asked pad {message.pad!r} to stop its cell.")

    @property
    def narrow(self: MainScreen) -> bool:
        return self.has_class("-narrow")

    def _compact_footer(self: MainScreen) -> bool:
        try:
            return self.app.size.width < COMPACT_FOOTER_BELOW
        except NoActiveAppError:
            return False

    def on_resize(self: MainScreen, event: events.Resize) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one(Footer).compact = self._compact_footer()
        self._apply_side_width(event.size.width)

    def action_toggle_scratchpad(self: MainScreen) -> None:
        if self.narrow:
            self.narrow_pane = "conversation" if self.narrow_pane == "scratchpad" else "scratchpad"
        else:
            self._toggle_side_pane(self.scratchpad)

    def action_toggle_inspector(self: MainScreen) -> None:
        if self.narrow:
            self.narrow_pane = "conversation" if self.narrow_pane == "inspector" else "inspector"
        else:
            self._toggle_side_pane(self.inspector)

    def action_next_pane(self: MainScreen) -> None:
        names = [name for name, _ in PANES]
        self.narrow_pane = names[(names.index(self.narrow_pane) + 1) % len(names)]

    def on_pane_bar_chosen(self: MainScreen, message: PaneBar.Chosen) -> None:
        self.narrow_pane = message.pane

    def watch_narrow_pane(self: MainScreen, pane: str) -> None:
        for name, _ in PANES:
            self.set_class(name == pane, f"-pane-{name}")
        self.query_one(PaneBar).show(pane, self._key_of("main.next-pane"))
        if pane == "conversation":
            self.action_focus_prompt()
        else:
            self.call_after_refresh(self._focus_into, pane)

    def _focus_into(self: MainScreen, pane: str) -> None:
        target = self.query_one(f"#{pane}")
        if self.focused is not None and target in self.focused.ancestors_with_self:
            return
        first = next((widget for widget in target.query("*") if widget.focusable), None)
        if first is not None:
            first.focus()
        else:
            self.set_focus(None)

    def _key_of(self: MainScreen, binding_id: str) -> str:
        keymap = getattr(self.app, "keymap", None) or {}
        return keymap.get(binding_id, "f4")

    def _toggle_side_pane(self: MainScreen, pane: Widget) -> None:
        """Hide or show a side pane in a wide terminal, by a class of the screen (main.tcss): a narrow terminal's
        one-pane-at-a-time layout is left as it is, also after the terminal narrows."""
        hidden = self.toggle_class(f"-hide-{pane.id}").has_class(f"-hide-{pane.id}")
        self.set_class(self.has_class("-hide-scratchpad") and self.has_class("-hide-inspector"), "-hide-side")
        if hidden and self.focused is not None and pane in self.focused.ancestors_with_self:
            self.action_focus_prompt()

    def action_resize_side(self: MainScreen, delta: int) -> None:
        low, high = SIDE_WIDTH_RANGE
        self.side_width = max(low, min(high, self.side_width + delta))

    def watch_side_width(self: MainScreen, width: int) -> None:
        self._apply_side_width(self.size.width)

    def _apply_side_width(self: MainScreen, columns: int) -> None:
        """The side's chosen width in a wide terminal; a narrow one's pane takes the whole body (main.tcss)."""
        try:
            side = self.query_one("#side")
        except NoMatches:
            return
        side.styles.width = None if columns < NARROW_BELOW else f"{self.side_width}%"

    def action_toggle_maximize(self: MainScreen) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        panes = (self.query_one("#conversation"), self.scratchpad, self.inspector)
        target = next(
            (node for node in (focused.ancestors_with_self if focused else ()) if node in panes),
            panes[0],
        )
        self.maximize(target, container=False)

    def action_find(self: MainScreen) -> None:
        """Find in the whole conversation, the parts no longer on screen included."""
        self.query_one(FindBar).open(self.runtime.transcript() if self.runtime is not None else [])

    def on_find_bar_closed(self: MainScreen) -> None:
        self.action_focus_prompt()

    def action_pick_message(self: MainScreen) -> None:
        """Highlight the latest message you sent, in the chat (see `widgets/chat_selection.py`)."""
        self.chat.action_select_message(-1)

    def action_focus_prompt(self: MainScreen) -> None:
        self.query_one(Prompt).focus()
