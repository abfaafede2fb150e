"""The workspace folder as the Runtime offers it: the file list behind `@` mentions, `!` shell commands, and what
both add to the next turn.

`Workspace` lists and ranks files off the event loop. A command run with `run_shell` is remembered (`ShellRecord`)
until the next turn, whose user message then carries it, after the mentioned files' note, as text blocks behind the
user's own text (`agent/turn_notes.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from anton_tui.agent.events import SessionEvent
from anton_tui.runtime.protocols import WorkspaceSession, WorkspaceSettings

if TYPE_CHECKING:
    from anton_tui.agent.mentions import MentionCheck, MentionRefused
    from anton_tui.agent.shell import ShellEvent, ShellRecord
    from anton_tui.agent.workspace_files import FileListing, WorkspaceFiles


class Workspace:
    """The project folder: its files for `@`, the `!` commands run since the last turn, and the turn that carries
    both."""

    def __init__(self, session: WorkspaceSession, settings: Callable[[], WorkspaceSettings]) -> None:
        self._session = session
        self._settings = settings
        self._files: WorkspaceFiles | None = None
        self.held_commands: list[ShellRecord] = []
        """Commands run since the last turn started; the next turn passes them to the agent."""

    @property
    def folder(self) -> Path:
        return Path(self._settings().project_dir)

    def _listing(self) -> WorkspaceFiles:
        from anton_tui.agent.workspace_files import WorkspaceFiles

        files = self._files
        if files is None or files.root != self.folder:
            files = self._files = WorkspaceFiles(self.folder)
        return files

    async def files(self, *, refresh: bool = False) -> FileListing:
        """The workspace's files (gitignored ones left out), from the cache while it is fresh."""
        files = self._listing()
        return await asyncio.to_thread(lambda: files.listing(refresh=refresh))

    async def match_files(self, query: str, limit: int = 50) -> list[str]:
        """The workspace files that best match `query`, best first (for the `@` picker)."""
        files = self._listing()
        return await asyncio.to_thread(files.match, query, limit)

    @property
    def capped(self) -> bool:
        """Whether the last file listing stopped at its cap (the picker says so)."""
        return self._files is not None and self._files.capped

    async def check_mentions(self, text: str) -> MentionCheck:
        from anton_tui.agent.mentions import check_mentions

        return await asyncio.to_thread(check_mentions, text, self.folder)

    # ----------------------------------------------------------------- `!` commands

    async def run_shell(self, command: str) -> AsyncIterator[ShellEvent]:
        """Run `command` in the workspace folder; its events as they come. Closing the iterator stops the command.
        Whatever ran (finished or stopped) is held for the next turn."""
        from anton_tui.agent.shell import ShellFinished, ShellOutput, ShellRecord, cap_output, run_shell

        pieces: list[str] = []
        size = 0
        finished: ShellFinished | None = None
        try:
            async for event in run_shell(command, self.folder):
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

    async def turn(self, text: str) -> AsyncIterator[SessionEvent | MentionRefused]:
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
            records, redact = list(self.held_commands), self._session.redact
            notes.extend(await asyncio.to_thread(lambda: [record.note(redact) for record in records]))
            self.held_commands.clear()
        events = self._session.turn(text, tuple(notes)) if notes else self._session.turn(text)
        try:
            async for event in events:
                yield event
        finally:
            if isinstance(events, AsyncGenerator):  # a plain async iterator has nothing to close
                await events.aclose()
