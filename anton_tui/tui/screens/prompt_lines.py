"""What a line sent from the main screen's prompt does: a slash command runs, a `!` command runs in the workspace
folder, a message starts a turn, or the reason it cannot shows and the text stays in the prompt to be corrected.

A message or `!` command sent while memories wait for a review opens the review first and goes once it is answered
(`WaitingReviews`). Sending the last message again (Ctrl+R, the error's button) and a folded turn picked in a summary's
ledger, which goes back into the next message, are sent from here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.content import Content
from textual.notifications import SeverityLevel

from anton_tui.tui.command_registry import parse_command_line
from anton_tui.tui.screens.screen_parts import ScreenParts
from anton_tui.tui.widgets.shell_block import ShellBlock

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime
    from anton_tui.tui.screens.turns import Turns
    from anton_tui.tui.screens.waiting_reviews import WaitingReviews
    from anton_tui.tui.widgets.command_runner import CommandRunner
    from anton_tui.tui.widgets.shell_runner import ShellRunner

BUSY = "Anton is still working on the last message. Press Escape to cancel it."


class SendingScreen(ScreenParts, Protocol):
    """What sending needs of the screen that holds it (the `MainScreen`)."""

    @property
    def runtime(self) -> Runtime | None: ...
    @property
    def busy(self) -> bool: ...  # a turn or a `!` command runs
    @property
    def command_runner(self) -> CommandRunner: ...
    @property
    def shell(self) -> ShellRunner: ...
    @property
    def turns(self) -> Turns: ...
    @property
    def reviews(self) -> WaitingReviews: ...
    def refresh_bindings(self) -> None: ...
    def notify(self, message: str, *, severity: SeverityLevel = "information") -> None: ...


class PromptLines:
    """Sends the lines of `screen`'s prompt where they go."""

    def __init__(self, screen: SendingScreen) -> None:
        self.screen = screen

    async def accept(self, text: str) -> None:
        """What the user sent from the prompt (`text`, still in it); see the module's docstring."""
        screen = self.screen
        prompt = screen.conversation.prompt
        shell = text.strip().startswith("!")
        if not shell and parse_command_line(text) is not None:
            if not screen.command_runner.knows(text) and not await prompt.names_skill_command(text):
                screen.notify(screen.command_runner.unknown(text), severity="warning")
                return  # the text stays in the prompt, to be corrected
            prompt.commit(text)
            await screen.command_runner.run(text)
            return
        if screen.reviews.waiting:
            screen.reviews.hold_message(text)
            return
        if shell:
            await self.run_shell(text.strip()[1:].strip(), typed=text)
            return
        if screen.busy:
            screen.notify(BUSY, severity="warning")
            return
        prompt.commit(text)
        await screen.turns.send(text)

    async def run_shell(self, command: str, *, typed: str | None = None) -> None:
        """Run `command` (typed after a `!`) in the workspace folder, shown live in the chat; or say why not (the
        text then stays in the prompt). While it runs no message is sent, so the next turn sees all of its output."""
        screen = self.screen
        if not command:
            refusal = "Type a command after ! to run it in the workspace folder."
        elif screen.shell.running:
            refusal = "A command is still running. Press Escape to stop it."
        elif screen.busy:
            refusal = BUSY
        elif screen.runtime is None:
            refusal = "Anton is still starting; try again in a moment."
        else:
            screen.conversation.prompt.commit(typed)
            block = ShellBlock(command)
            chat = screen.conversation.chat
            await chat.end_answer()
            await chat.add_block(block)
            screen.shell.start(screen.runtime, command, block)
            screen.refresh_bindings()
            return
        screen.notify(refusal, severity="warning")

    async def retry(self) -> None:
        """Send the last message again (Ctrl+R, or the error's button), or say why not."""
        screen = self.screen
        if screen.busy:
            screen.notify("Anton is still working. Press Escape to cancel first.", severity="warning")
        elif screen.turns.last_prompt is None:
            screen.notify("There is no message to send again.", severity="warning")
        else:
            await screen.turns.send(screen.turns.last_prompt)

    async def unfold(self, number: int) -> None:
        """A ledger's message picked: that folded turn goes back into the next message (as `/unfold N`)."""
        runtime = self.screen.runtime
        if runtime is None:
            return
        try:
            turn = runtime.conversations.unfold(number)
        except LookupError as exc:
            self.screen.notify(str(exc), severity="warning")
            return
        await self.screen.conversation.chat.add_notice(
            Content(f"Turn {turn.number} goes back into your next message, word for word."), "info"
        )
