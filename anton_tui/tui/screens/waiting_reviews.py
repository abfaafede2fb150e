"""When the main screen opens a review of memories waiting for the user, and what waits for the review.

A question arrives as a `MemoryConfirmationNeeded` event (the engine waits on its future) and joins the queue of the
line above the prompt (`ReviewBar`). `WaitingReviews` opens the oldest one at once only while the user is not
writing in the prompt, so that the dialog never takes keys meant for the prompt; otherwise it waits until Ctrl+Y, a
click on the line, the end of the review open before it, or the user's next message, which opens the review first and
goes once every waiting review is answered and the turn has ended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual.content import Content

from anton_tui.tui.messages import MemoryConfirmationAnswered
from anton_tui.tui.screens.screen_parts import ScreenParts, ScreenWork

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from anton_tui.agent.events import MemoryConfirmationNeeded
    from anton_tui.runtime import Runtime


class ReviewHost(ScreenParts, ScreenWork, Protocol):
    """What the reviews need of the screen that holds them (the `MainScreen`)."""

    @property
    def app(self) -> App[Any]: ...
    @property
    def focused(self) -> Widget | None: ...
    @property
    def runtime(self) -> Runtime | None: ...
    @property
    def busy(self) -> bool: ...  # a turn or a `!` command runs
    async def accept_message(self, text: str) -> None: ...  # as if sent from the prompt
    def notify(self, message: str, *, timeout: float | None = None) -> None: ...


class WaitingReviews:
    """The reviews of memories waiting for the user on `screen`: which one opens when, and the message that waits for
    them (sent while one waited)."""

    def __init__(self, screen: ReviewHost) -> None:
        self.screen = screen
        self.reviewing = False  # a review dialog is open
        self.message_after: str | None = None  # a message sent while a review waited: it goes once answered

    @property
    def waiting(self) -> int:
        """How many memories wait for a review."""
        return self.screen.conversation.review_bar.waiting

    def add(self, question: MemoryConfirmationNeeded) -> None:
        """A question from the engine: opened now if the user is not writing, else it waits above the prompt."""
        self.screen.conversation.review_bar.add(question)
        self.open_if_left_alone()

    def open_if_left_alone(self) -> None:
        """Open the oldest waiting review now, unless the user is writing in the prompt (or something else has the
        keyboard): a dialog that opened then would take the keys meant for the prompt, and its one-letter keys would
        decide the review unseen. It then waits in the line above the prompt (`ReviewBar`)."""
        screen = self.screen
        prompt = screen.conversation.prompt
        on_top = screen.app.screen is prompt.screen  # no other screen or dialog is open over it
        if self.reviewing or not on_top or screen.focused not in (None, prompt) or prompt.composing:
            return
        self.open()

    def open(self) -> None:
        """Show the oldest question waiting for a review, if no review is open."""
        if self.reviewing:
            return
        question = self.screen.conversation.review_bar.take()
        if question is None:
            return
        self.reviewing = True
        self.screen.run_worker(self._ask(question), group="memory-confirmation", exit_on_error=False)

    def open_asked(self) -> None:
        """Ctrl+Y: open the oldest waiting review, or say that none waits."""
        if self.waiting:
            self.open()
        else:
            self.screen.notify("No memories wait for a review.")

    def hold_message(self, text: str) -> None:
        """`text` was sent while memories wait: the review opens first, and the message goes once it is answered."""
        self.message_after = text
        self.screen.notify("Your message goes once you have answered the review.", timeout=4)
        self.open()

    async def _ask(self, question: MemoryConfirmationNeeded) -> None:
        """Ask the user which held-back memories to keep; the engine waits on the question's future."""
        from anton_tui.tui.screens.confirm_memory import answer_confirmation

        screen = self.screen
        try:
            keep = await answer_confirmation(screen.app, question)
        finally:
            self.reviewing = False
        if screen.runtime is not None and not question.future.cancelled():  # those asked about no longer wait
            screen.header.set_held(screen.runtime.held_count_without(question.engrams))
        screen.post_message(MemoryConfirmationAnswered(len(keep), len(question.engrams) + len(question.changes)))

    async def answered(self, message: MemoryConfirmationAnswered) -> None:
        """A review was answered: say so, then open the next one the held message waits for, or send it."""
        await self.screen.conversation.chat.add_notice(
            Content(f"Kept {message.kept} of {message.offered} memories waiting for confirmation."), "memory"
        )
        if self.message_after is not None and self.waiting:
            self.open()  # the message waits for every review
            return
        await self.send_held_message()
        self.open_if_left_alone()

    async def send_held_message(self) -> None:
        """Send the message that waited for the review, once the turn that asked has ended."""
        text = self.message_after
        if text is None or self.screen.busy or self.reviewing:
            return
        self.message_after = None
        if self.screen.conversation.prompt.text.startswith(text):  # still in the prompt, as it was sent
            await self.screen.accept_message(text)
