"""The Runtime's operations on the workspace folder: the file list behind `@` mentions, `!` shell commands, and
what both add to the next turn.

`Runtime` takes these methods from `WorkspaceOps`. Listing and ranking files run off the event loop. A command run
with `run_shell` is remembered (`ShellRecord`) until the next turn, whose user message then carries it, after the
mentioned files' note, as text blocks behind the user's own text (`agent/turn_notes.py`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.agent.mentions import MentionCheck
    from anton_tui.agent.shell import ShellEvent, ShellRecord
    from anton_tui.agent.workspace_files import FileListing, WorkspaceFiles


class WorkspaceOps:
    """Workspace operations of the `Runtime` (they use its `settings` and `session`)."""

    settings: Any
    session: Any
    _workspace_files: WorkspaceFiles | None = None
    _shell_records: list[ShellRecord] | None = None

    @property
    def workspace_dir(self) -> Path:
        return Path(self.settings.project_dir)

    def _files(self) -> WorkspaceFiles:
        from anton_tui.agent.workspace_files import WorkspaceFiles

        files = self._workspace_files
        if files is None or files.root != self.workspace_dir:
            files = self._workspace_files = WorkspaceFiles(self.workspace_dir)
        return files

    async def workspace_files(self, *, refresh: bool = False) -> FileListing:
        """The workspace's files (gitignored ones left out), from the cache while it is fresh."""
        files = self._files()
        return await asyncio.to_thread(lambda: files.listing(refresh=refresh))

    async def match_files(self, query: str, limit: int = 50) -> list[str]:
        """The workspace files that best match `query`, best first (for the `@` picker)."""
        files = self._files()
        return await asyncio.to_thread(files.match, query, limit)

    @property
    def workspace_capped(self) -> bool:
        """Whether the last file listing stopped at its cap (the picker says so)."""
        return self._workspace_files is not None and self._workspace_files.capped

    async def check_mentions(self, text: str) -> MentionCheck:
        from anton_tui.agent.mentions import check_mentions

        return await asyncio.to_thread(check_mentions, text, self.workspace_dir)

    # ----------------------------------------------------------------- `!` commands

    @property
    def held_commands(self) -> list[ShellRecord]:
        """Commands run since the last turn started; the next turn passes them to the agent."""
        if self._shell_records is None:
            self._shell_records = []
        return self._shell_records

    async def run_shell(self, command: str) -> AsyncIterator[ShellEvent]:
        """Run `command` in the workspace folder; its events as they come. Closing the iterator stops the command.
        Whatever ran (finished or stopped) is held for the next turn."""
        from anton_tui.agent.shell import ShellFinished, ShellOutput, ShellRecord, cap_output, run_shell

        pieces: list[str] = []
        size = 0
        finished: ShellFinished | None = None
        try:
            async for event in run_shell(command, self.workspace_dir):
                if isinstance(event, ShellOutput) and size < 4 * 1024 * 1024:  # enough to cut head and tail from
                    pieces.append(event.text)
                    size += len(event.text)
                elif isinstance(event, ShellFinished):
                    finished = event
                yield event
        finally:
            output = cap_output("".join(pieces))
            if finished is not None:
                self.held_commands.append(ShellRecord(command, output, finished.exit_code))
            else:
                self.held_commands.append(ShellRecord(command, output, None, cancelled=True))

    def forget_held_commands(self) -> None:
        self.held_commands.clear()

    # ----------------------------------------------------------------- the turn, with what it carries

    async def turn_with_context(self, text: str) -> AsyncIterator[Any]:
        """One turn of the session, with the `@` files' note and the held commands added to the user's message.
        Refused mentions come first, as `MentionRefused` events."""
        from anton_tui.agent.mentions import mentioned_paths

        notes: list[str] = []
        if mentioned_paths(text):
            check = await self.check_mentions(text)
            for refused in check.refused:
                yield refused
            if check.note:
                notes.append(check.note)
        if self.held_commands:
            redact = getattr(self.session, "redact", None)
            if redact is None:
                from anton_tui.redact import Redactor

                redact = Redactor()
            notes.extend(await asyncio.to_thread(lambda: [record.note(redact) for record in self.held_commands]))
            self.held_commands.clear()
        turn = self.session.turn
        if not notes:
            events = turn(text)
        elif "notes" in inspect.signature(turn).parameters:
            events = turn(text, notes=tuple(notes))
        else:  # a session that takes text only (a test's scripted one): the notes follow the text
            events = turn("\n\n".join([text, *notes]))
        try:
            async for event in events:
                yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
