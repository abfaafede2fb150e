"""Runs slash commands, typed in the prompt or picked in the command palette.

A menu entry bound to a Textual action (`/retry` runs `screen.retry`) runs that action; any other line goes to the
command table (`anton_tui.tui.commands`) in a worker, since a command may ask the user in a modal or call the model
(`/skill save`). Its reply is posted as `CommandReplied`, for the screen to show in the chat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from textual import work
from textual.widget import Widget
from textual.worker import Worker

from anton_tui.tui.command_registry import SlashCommand, parse_command_line
from anton_tui.tui.messages import CommandReplied, WorkerFailed

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime
    from anton_tui.tui.commands.context import CommandUI


class CommandRunner(Widget):
    """Not drawn: runs the commands of the prompt's menu (`commands`) and of the command table. `runtime` waits for
    the runtime (a command typed before it is built runs once it is); `ui` is what commands ask to open screens and
    ask the user (the app)."""

    DEFAULT_CSS = "CommandRunner { display: none; }"

    def __init__(
        self,
        commands: Sequence[SlashCommand],
        runtime: Callable[[], Awaitable[Runtime]],
        ui: CommandUI | None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.commands = commands
        self.runtime = runtime
        self.ui = ui

    def knows(self, text: str) -> bool:
        """Whether `text` names a menu entry bound to an action or a command of the table."""
        from anton_tui.tui.commands.parse import parse
        from anton_tui.tui.commands.registry import find

        if self._action_of(text) is not None:
            return True
        parsed = parse(text)
        return parsed is not None and find(parsed) is not None

    def unknown(self, text: str) -> str:
        """What to say of a command that is not known, naming the closest one when there is one."""
        from anton_tui.tui.commands.parse import parse
        from anton_tui.tui.commands.registry import unknown

        parsed = parse(text)
        return unknown(parsed).plain().strip() if parsed is not None else f"Not a command: {text.strip()}"

    def _action_of(self, text: str) -> str | None:
        name, _args = parse_command_line(text) or ("", "")
        return next((entry.action for entry in self.commands if entry.name == name and entry.action), None)

    async def run(self, text: str) -> None:
        if (action := self._action_of(text)) is not None:
            await self.run_action(action)
        else:
            self.run_in_table(text)

    @work(group="command", exit_on_error=False)
    async def run_in_table(self, text: str) -> None:
        from anton_tui.tui.commands import CommandContext, run

        output = await run(text, CommandContext(await self.runtime(), ui=self.ui))
        if output is not None:
            self.post_message(CommandReplied(text.strip(), output))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if (failed := WorkerFailed.of(event)) is not None:
            self.post_message(failed)
