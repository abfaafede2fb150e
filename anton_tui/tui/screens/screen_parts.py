"""What the main screen's helpers (its turns, waiting reviews, event router, prompt lines and the runtime's hand-over)
reach of it, typed once: its parts (`ScreenParts`) and Textual's ways of scheduling work on it (`ScreenWork`). Each
helper's own protocol extends these with the little more it needs; the `MainScreen` is what they are given.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.worker import Worker

    from anton_tui.tui.widgets.conversation import Conversation
    from anton_tui.tui.widgets.header import AntonHeader
    from anton_tui.tui.widgets.side_column import SideColumn


class ScreenParts(Protocol):
    """The conversation column (chat, prompt, the line of waiting reviews), the side column and the header."""

    @property
    def conversation(self) -> Conversation: ...
    @property
    def side(self) -> SideColumn: ...
    @property
    def header(self) -> AntonHeader: ...


class ScreenWork(Protocol):
    """Running something later, posting a message, starting a worker: on the screen, as Textual does."""

    def call_later(self, callback: Callable[..., Any], *args: Any) -> bool: ...
    def post_message(self, message: Message) -> bool: ...
    def run_worker(
        self, work: Coroutine[Any, Any, None], name: str | None = "", group: str = "default", description: str = "",
        exit_on_error: bool = True, start: bool = True, exclusive: bool = False,
    ) -> Worker[None]: ...  # fmt: skip
