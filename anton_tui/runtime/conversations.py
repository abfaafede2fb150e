"""Handling saved conversations as the Runtime offers it: the tree of forks for the resume screen, rename, delete to
the trash and restore, fork, export to Markdown, and the ledgers of the conversation in progress with `unfold`.

`Conversations` works through the session's `ConversationShelf` (`agent/conversation_shelf.py`), the same one
``anton-tui conversation`` uses, and runs everything that touches the disk off the event loop. A session without
saved conversations (episodic memory off, the demo, a test's scripted one) has no shelf: the listing is empty and the
operations say why they cannot run.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from anton_tui.agent.conversation_notes import About
    from anton_tui.agent.conversation_shelf import ConversationShelf, Fork
    from anton_tui.agent.history_store import SavedSession
    from anton_tui.agent.ledger import FoldedTurn, Ledger
    from anton_tui.agent.trash import Trashed

NOT_SAVED = "Conversations are not saved in this session (episodic memory is off), so there is none to handle."


class ConversationSession(Protocol):
    """What handling conversations needs of the session."""

    @property
    def session_id(self) -> str | None: ...

    @property
    def running(self) -> bool: ...

    def conversation_shelf(self) -> ConversationShelf | None: ...

    def ledgers(self) -> list[Ledger]: ...

    def unfold(self, number: int) -> FoldedTurn: ...

    def delete_saved(self, session_id: str) -> list[Path]: ...


@dataclass(frozen=True)
class ExportedConversation:
    """A conversation as Markdown, and the file name it is offered under."""

    session_id: str
    name: str
    text: str


class Conversations:
    """The saved conversations of the project, and the ledgers of the one in progress (see the module docstring).
    `session` is None for a session that saves none."""

    def __init__(self, session: ConversationSession | None, project_dir: Path) -> None:
        self._session = session
        self._project_dir = project_dir
        self.last_deleted: str | None = None  # what `restore()` brings back by default

    def _shelf(self) -> ConversationShelf:
        shelf = self._session.conversation_shelf() if self._session is not None else None
        if shelf is None:
            raise RuntimeError(NOT_SAVED)
        return shelf

    def _current(self, session_id: str | None) -> str:
        target = session_id or (self._session.session_id if self._session is not None else None)
        if not target:
            raise LookupError("This conversation has not been saved yet: send a message first.")
        return target

    @property
    def current(self) -> str | None:
        """The id of the conversation in progress (None when conversations are not saved)."""
        return self._session.session_id if self._session is not None else None

    # ---- listing -------------------------------------------------------------------------------------------

    async def tree(self) -> list[SavedSession]:
        """The saved conversations, newest first, each fork right under the one it came from (a row's `parent`
        says which; the screen indents by it)."""
        shelf = self._session.conversation_shelf() if self._session is not None else None
        if shelf is None:
            return []
        return await asyncio.to_thread(lambda: [row for row, _depth in shelf.tree()])

    # ---- changing ------------------------------------------------------------------------------------------

    async def set_title(self, title: str, session_id: str | None = None) -> About:
        """Title a saved conversation (this one by default); an empty title goes back to its first message."""
        shelf, target = self._shelf(), self._current(session_id)
        return await asyncio.to_thread(shelf.rename, target, title)

    async def delete(self, session_id: str) -> Trashed:
        """Move a saved conversation to the trash (kept 30 days; `restore` brings it back); not the one in
        progress. Raises ValueError or LookupError."""
        shelf = self._shelf()
        if self._session is not None:  # it refuses the conversation in progress
            await asyncio.to_thread(self._session.delete_saved, session_id)
        self.last_deleted = session_id
        trashed = await asyncio.to_thread(shelf.trash.get, session_id)
        if trashed is None:
            raise LookupError(f"No saved conversation {session_id!r}.")
        return trashed

    async def restore(self, session_id: str | None = None) -> str:
        """Bring a deleted conversation back (by default the last one deleted here, else the last in the trash);
        returns its id. Raises LookupError or FileExistsError."""
        shelf = self._shelf()

        def restore() -> str:
            target = session_id or self.last_deleted
            if target is None:
                items = shelf.trash.items()
                if not items:
                    raise LookupError("The trash is empty: nothing to restore.")
                target = items[0].session_id
            shelf.restore(target)
            return target

        restored = await asyncio.to_thread(restore)
        if restored == self.last_deleted:
            self.last_deleted = None
        return restored

    async def fork(self, at: int | None = None, session_id: str | None = None) -> Fork:
        """A new conversation holding this one (or `session_id`) up to the end of the turn of your `at`-th message
        (1-based; the last by default). Raises LookupError or ValueError."""
        shelf, target = self._shelf(), self._current(session_id)
        return await asyncio.to_thread(shelf.fork, target, at)

    async def export(self, session_id: str | None = None) -> ExportedConversation:
        """A conversation (this one by default) as Markdown."""
        shelf, target = self._shelf(), self._current(session_id)
        text = await asyncio.to_thread(shelf.export, target)
        return ExportedConversation(target, f"conversation-{target}.md", text)

    async def save_export(self, export: ExportedConversation, path: str | None = None) -> Path:
        """Write an export to `path` (relative to the project folder; by default its own name there)."""

        def write() -> Path:
            target = Path(path).expanduser() if path else Path(export.name)
            if not target.is_absolute():
                target = self._project_dir / target
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(export.text, encoding="utf-8")
            return target

        return await asyncio.to_thread(write)

    # ---- the conversation in progress ------------------------------------------------------------------------

    def ledgers(self) -> list[Ledger]:
        """What this conversation's summaries folded, oldest first."""
        return self._session.ledgers() if self._session is not None else []

    def unfold(self, number: int) -> FoldedTurn:
        """Bring folded turn `number` back, word for word, in the next request. Raises LookupError."""
        if self._session is None:
            raise LookupError("No turn of this conversation has been summarised, so there is nothing to unfold.")
        return self._session.unfold(number)
