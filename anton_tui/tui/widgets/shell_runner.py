"""Runs a `!` command typed in the prompt: one at a time, in the workspace folder, its output shown live in the
`ShellBlock` the screen put in the chat for it.

The runtime runs the command (`Runtime.run_shell`, which ends the command's process group when it is stopped) and
yields its events; the worker here only posts them, and the handler writes them into the block. Escape stops the
command (`stop`). However the worker ends, the runner then posts `ShellRunner.Ended` (after a `WorkerFailed` if it failed).
The block may leave the chat while the command runs (`/clear`); the command goes on, and what it prints is dropped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from textual import work
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker

from anton_tui.tui.messages import WorkerFailed
from anton_tui.tui.widgets.shell_block import ShellBlock


class ShellCommands(Protocol):
    """What runs the commands (the `Runtime`)."""

    def run_shell(self, command: str) -> AsyncIterator[object]: ...  # the events of `agent/shell.py`


class ShellRunner(Widget):
    """Not drawn: holds the worker of the running `!` command and the block that shows it."""

    DEFAULT_CSS = "ShellRunner { display: none; }"

    class Output(Message, bubble=False):
        """One event of the running command, in order."""

        def __init__(self, event: object) -> None:
            super().__init__()
            self.event = event

    class Ended(Message):
        """The command's worker ended: finished, stopped, or failed (a `WorkerFailed` came first)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.block: ShellBlock | None = None  # what shows the command that runs, or ran last
        self._command_worker: Worker[None] | None = None

    @property
    def running(self) -> bool:
        return self._command_worker is not None and not self._command_worker.is_finished

    def start(self, commands: ShellCommands, command: str, block: ShellBlock) -> None:
        """Run `command`, its output shown in `block` (already in the chat)."""
        self.block = block
        self._command_worker = self.run_command(commands, command)

    def stop(self) -> bool:
        """Stop the running command (Escape); False when none runs."""
        if self._command_worker is None or not self.running:
            return False
        self._command_worker.cancel()
        return True

    @work(group="shell", exclusive=True, exit_on_error=False)
    async def run_command(self, commands: ShellCommands, command: str) -> None:
        async for event in commands.run_shell(command):
            self.post_message(self.Output(event))

    def on_shell_runner_output(self, message: Output) -> None:
        from anton_tui.agent.shell import ShellFinished, ShellOutput

        block, event = self.block, message.event
        if block is None or not block.is_attached:
            return
        if isinstance(event, ShellOutput):
            block.append(event.text)
        elif isinstance(event, ShellFinished):
            block.finish(event.exit_code, cancelled=event.cancelled, duration=event.duration)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker is not self._command_worker or not worker.is_finished:
            return
        block = self.block
        if block is not None and block.running and block.is_attached:  # stopped before the command could say so
            block.finish(None, cancelled=True, duration=0.0)
        if (failed := WorkerFailed.of(event)) is not None:
            self.post_message(failed)
        self.post_message(self.Ended())
