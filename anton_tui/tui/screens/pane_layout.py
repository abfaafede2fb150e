"""How the main screen arranges its panes: how wide the right-hand column is, which side panes a wide terminal
hides, and, below `NARROW_BELOW` columns, the one pane that fills the screen.

`PaneLayout` owns that state and shows it through classes of the screen (`main.tcss` turns them into the layout):
`-narrow` or `-wide`, `-pane-<name>` for the pane a narrow terminal shows, `-hide-scratchpad`, `-hide-inspector` and
`-hide-side` for what a wide one hides. The screen's key bindings call its methods, and the screen tells it the
width on every resize (`fit`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from anton_tui.tui.widgets.pane_bar import PANES, PaneBar

SIDE_WIDTH_DEFAULT = 40  # percent of the screen; main.tcss sets the same default
SIDE_WIDTH_STEP = 5
SIDE_WIDTH_RANGE = (20, 75)  # percent of the screen the side column may take
NARROW_BELOW = 100  # columns; below this one pane at a time fills the body
COMPACT_FOOTER_BELOW = 140  # columns; below this the footer drops its extra spaces so that every key fits
SIDE_PANES = ("scratchpad", "inspector")


class PaneLayout:
    """The panes of `screen` (found by their ids: `conversation`, `scratchpad`, `inspector`, in `side`).

    `focus_prompt` puts the focus back in the prompt when the chat comes back into view; `next_pane_key` is the key
    that shows the next pane in a narrow terminal, as the pane bar names it.
    """

    def __init__(self, screen: Screen[Any], *, focus_prompt: Callable[[], None], next_pane_key: str) -> None:
        self.screen = screen
        self.focus_prompt = focus_prompt
        self.next_pane_key = next_pane_key
        self.side_width = SIDE_WIDTH_DEFAULT  # percent of a wide screen
        self.narrow_pane = PANES[0][0]  # the pane a narrow terminal shows across its width
        self.hidden: set[str] = set()  # side panes a wide terminal hides
        self.narrow = False
        self.columns = 0
        screen.add_class(f"-pane-{self.narrow_pane}", update=False)

    @property
    def compact_footer(self) -> bool:
        return 0 < self.columns < COMPACT_FOOTER_BELOW

    def fit(self, columns: int, *, update: bool = True) -> None:
        """The screen is `columns` wide. (Before the screen is first styled, `update=False` sets its classes only:
        a class that changes later restyles every widget on it before the first frame.)"""
        self.columns = columns
        narrow = self.narrow = columns < NARROW_BELOW
        changed = not self.screen.has_class("-narrow" if narrow else "-wide")
        if changed:
            self.screen.set_class(narrow, "-narrow", update=update)
            self.screen.set_class(not narrow, "-wide", update=update)
        if not update:
            return
        with contextlib.suppress(NoMatches):
            self.screen.query_one(Footer).compact = self.compact_footer
        self._apply_side_width()
        if changed:
            self.screen.refresh_bindings()  # F4 switches panes only in a narrow terminal, F5 maximises only in a wide one

    # --- the side column ---------------------------------------------------------------------------------------------

    def resize_side(self, delta: int) -> None:
        low, high = SIDE_WIDTH_RANGE
        self.side_width = max(low, min(high, self.side_width + delta))
        self._apply_side_width()

    def _apply_side_width(self) -> None:
        """The side's chosen width in a wide terminal; a narrow one's pane takes the whole body (main.tcss)."""
        try:
            side = self.screen.query_one("#side")
        except NoMatches:
            return
        side.styles.width = None if self.narrow else f"{self.side_width}%"

    def fit_side_to_tabs(self) -> None:
        """Widen the right-hand column towards the width of all the inspector's tab labels, but never past half the
        screen: the chat keeps the larger part, and the tab row scrolls to keep the chosen tab in view."""
        from textual.widgets import Tab  # (the tabs come with the inspector, after the first frame)

        labels = [tab.label.cell_length for tab in self.screen.query("#inspector Tab").results(Tab)]
        if labels:
            wanted = sum(width + 2 for width in labels) + 1  # + the border
            self.screen.query_one("#side").styles.min_width = min(wanted, self.screen.size.width // 2)

    # --- showing and hiding panes -------------------------------------------------------------------------------------

    def toggle(self, pane: str) -> None:
        """F2 / F3: a wide terminal hides or shows the side pane; a narrow one shows it, or the chat again."""
        if self.narrow:
            self.show(PANES[0][0] if self.narrow_pane == pane else pane)
            return
        hidden = pane not in self.hidden
        self.hidden.symmetric_difference_update({pane})
        self.screen.set_class(hidden, f"-hide-{pane}")
        self.screen.set_class(self.hidden.issuperset(SIDE_PANES), "-hide-side")
        focused = self.screen.focused
        if hidden and focused is not None and self.pane(pane) in focused.ancestors_with_self:
            self.focus_prompt()

    def next_pane(self) -> None:
        """F4 in a narrow terminal: the next pane fills the screen."""
        names = [name for name, _ in PANES]
        self.show(names[(names.index(self.narrow_pane) + 1) % len(names)])

    def show(self, pane: str) -> None:
        """Show `pane` across a narrow terminal, and move the focus into it."""
        if pane == self.narrow_pane:
            return
        self.narrow_pane = pane
        for name, _ in PANES:
            self.screen.set_class(name == pane, f"-pane-{name}")
        self.screen.query_one(PaneBar).show(pane, self.next_pane_key)
        if pane == PANES[0][0]:
            self.focus_prompt()
        else:
            self.screen.call_after_refresh(self._focus_into, pane)

    def mark_news(self, pane: str) -> None:
        """Something happened in `pane`: in a narrow terminal that shows another one, the pane bar says so."""
        if self.narrow:
            self.screen.query_one(PaneBar).mark_news(pane)

    def pane(self, name: str) -> Widget:
        return self.screen.query_one(f"#{name}")

    def _focus_into(self, pane: str) -> None:
        target = self.pane(pane)
        focused = self.screen.focused
        if focused is not None and target in focused.ancestors_with_self:
            return
        first = next((widget for widget in target.query("*") if widget.focusable), None)
        if first is not None:
            first.focus()
        else:
            self.screen.set_focus(None)

    def toggle_maximize(self) -> None:
        """F5: the pane that holds the focus fills the screen (the chat when none does), or the layout comes back."""
        if self.screen.maximized is not None:
            self.screen.minimize()
            return
        focused = self.screen.focused
        panes = [self.pane(name) for name, _ in PANES]
        target = next((node for node in (focused.ancestors_with_self if focused else ()) if node in panes), panes[0])
        self.screen.maximize(target, container=False)
