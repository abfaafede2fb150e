"""Which answer parts of the chat are laid out: those in the view. The others rest (`AssistantMessage.rest`): each
keeps its place, at its height, with its Markdown out of the screen's layout, since every layout pass visits every
widget displayed however far from the view, a key pressed meanwhile waits, and a part's Markdown is dozens of
widgets. A part wakes as the view comes to it, in the frame that shows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.geometry import Region

    from anton_tui.tui.widgets.answer import AssistantMessage
    from anton_tui.tui.widgets.chat import ChatView

WAKE_MARGIN = 2  # lines around the view within which answer parts are laid out


class Resting:
    """Rests the answer parts of `chat` that are out of its view, and wakes the others."""

    def __init__(self, chat: ChatView) -> None:
        self.chat = chat

    def settle(self) -> None:
        """Parts out of the view rest, those in it wake. Called as the view moves (before the frame that shows it, so
        a part that wakes is laid out in that frame) and after the chat's blocks change."""
        chat = self.chat
        view = chat.scrollable_content_region.height
        if not view:  # not displayed: places and view mean nothing now (the parts wake when it is, see `wake_all`)
            return
        top, bottom = round(chat.scroll_y) - WAKE_MARGIN, round(chat.scroll_y) + view + WAKE_MARGIN
        for part, place in self._parts():
            if place.bottom >= top and place.y <= bottom:
                part.wake()
            else:
                part.rest()

    def wake_end(self) -> None:
        """The parts in the last screen of the chat wake: the view is about to jump there (following the end, the
        layout scrolls it, and no scroll of the user's tells of it)."""
        parts = list(self._parts())
        end = max((place.bottom for _, place in parts), default=0) - self.chat.scrollable_content_region.height
        for part, place in parts:
            if place.bottom >= end - WAKE_MARGIN:
                part.wake()

    def wake_all(self) -> None:
        """Every part wakes (the chat's width changed, and their heights with it)."""
        for part, _ in self._parts(all_parts=True):
            part.wake()

    def _parts(self, *, all_parts: bool = False) -> Iterator[tuple[AssistantMessage, Region]]:
        """The chat's mounted answer parts with their places (where its layout puts them)."""
        from textual.geometry import Region

        from anton_tui.tui.widgets.answer import AssistantMessage

        places = {} if all_parts else self.chat.places()
        for block in self.chat.blocks:
            if isinstance(block, AssistantMessage) and (all_parts or block in places):
                yield block, places.get(block, Region())
