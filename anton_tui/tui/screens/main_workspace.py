"""The main screen's part in `@` mentions and `!` commands (a mixin of `MainScreen`).

`@`: the prompt reports the text after an `@` (`Prompt.MentionTyped`); a worker asks the runtime for the matching
workspace files and fills the picker. Mentions that cannot be passed on come back from the turn as
`MentionRefused` events and are shown as one line each.

`!`: a message starting with `!` runs the rest in the workspace folder through `Runtime.run_shell`, in a worker
that posts each event; a `ShellBlock` in the chat shows the output live. Escape stops the command (the runtime ends
its process group). While a command runs no message is sent, so the next turn sees the whole of its output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.content import Content
from textual.message import Message
from textual.worker import Worker

from anton_tui.tui.widgets.file_picker import FilePicker
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.shell_block import ShellBlock

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime
    from anton_tui.tui.widgets.chat import ChatView

SHELL_GROUP = "shell"


class ShellEventMessage(Message, bubble=False):
    """One event of the running `!` command, in order."""

    def __init__(self, event: Any, block: ShellBlock) -> None:
        super().__init__()
        self.event = event
        self.block = block


class WorkspaceInput:
    """`@` file picking and `!` commands for `MainScreen`."""

    runtime: Runtime | None
    chat: ChatView
    _shell_worker: Worker | None = None

    # ----------------------------------------------------------------- `@` mentions

    def on_prompt_mention_typed(self, message: Prompt.MentionTyped) -> None:  # by name: `@on` needs a DOM class
        if message.query is not None and self.runtime is not None:
            self.find_files(message.query)

    @work(group="file-picker", exclusive=True, exit_on_error=False)
    async def find_files(self, query: str) -> None:
        paths = await self.runtime.match_files(query)  # type: ignore[union-attr]
        prompt = self.query_one(Prompt)  # type: ignore[attr-defined]
        found = prompt.mention_at_cursor()
        if found is not None and found[1] == query:  # still what is typed
            capped = self.runtime.workspace_capped  # type: ignore[union-attr]
            self.query_one(FilePicker).show_files(query, paths, capped=capped)  # type: ignore[attr-defined]

    async def workspace_event(self, event: Any) -> bool:
        """Show a turn event of this part (a refused mention); False for any other event."""
        from anton_tui.agent.mentions import MentionRefused

        if isinstance(event, MentionRefused):
            await self.chat.add_notice(Content(event.line), "mention")
            return True
        return False

    # ----------------------------------------------------------------- `!` commands

    @property
    def shell_running(self) -> bool:
        return self._shell_worker is not None and not self._shell_worker.is_finished

    async def shell_prompt(self, text: str) -> bool:
        """Run `text` as a command when it starts with `!`; True when it was taken (run, or refused with a word)."""
        stripped = text.strip()
        if not stripped.startswith("!"):
            return False
        command = stripped[1:].strip()
        if not command:
            return self._refuse("Type a command after ! to run it in the workspace folder.")
        if self.shell_running:
            return self._refuse("A command is still running. Press Escape to stop it.")
        if getattr(self, "busy", False):
            return self._refuse("Anton is still working on the last message. Press Escape to cancel it.")
        if self.runtime is None:
            return self._refuse("Anton is still starting; try again in a moment.")
        self.query_one(Prompt).commit()  # type: ignore[attr-defined]
        block = ShellBlock(command)
        await self.chat.end_answer()
        await self.chat.add_block(block)
        self._shell_worker = self.run_shell_command(command, block)
        self.refresh_bindings()  # type: ignore[attr-defined]
        return True

    def _refuse(self, text: str) -> bool:
        """Say why the command was not run (the text stays in the prompt); the message counts as taken."""
        self.notify(text, severity="warning")  # type: ignore[attr-defined]
        return True

    @work(group=SHELL_GROUP, exclusive=True, exit_on_error=False)
    async def run_shell_command(self, command: str, block: ShellBlock) -> None:
        async for event in self.runtime.run_shell(command):  # type: ignore[union-attr]
            self.post_message(ShellEventMessage(event, block))  # type: ignore[attr-defined]

    def on_shell_event_message(self, message: ShellEventMessage) -> None:
        from anton_tui.agent.shell import ShellFinished, ShellOutput

        event, block = message.event, message.block
        if isinstance(event, ShellOutput):
            block.append(event.text)
        elif isinstance(event, ShellFinished):
            block.finish(event.exit_code, cancelled=event.cancelled, duration=event.duration)

    def stop_shell(self) -> bool:
        """Stop the running command (Escape); False when none runs."""
        if not self.shell_running:
            return False
        self._shell_worker.cancel()  # type: ignore[union-attr]
        return True

    def on_worker_state_changed_shell(self, event: Worker.StateChanged) -> None:
        """Called by the screen's worker handler: a stopped command's block says so."""
        worker = event.worker
        if worker.group != SHELL_GROUP or not worker.is_finished:
            return
        for block in self.chat.query(ShellBlock):
            if block.running:
                block.finish(None, cancelled=True, duration=0.0)
        self.refresh_bindings()  # type: ignore[attr-defined]
