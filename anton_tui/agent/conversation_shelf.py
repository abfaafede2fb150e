"""Handling saved conversations: list them as a tree of forks, show one with its ledgers, rename, delete to the trash
and restore, fork at one of the user's messages, export to Markdown.

`ConversationShelf` works on one project's episodes folder with no model and no app, so the app (through the
`Runtime`) and the ``anton-tui conversation`` command share it. The history files stay exactly Anton's (a fork is a
new ``{id}_history.json`` Anton lists and resumes like any other); titles, forks' origins and ledgers are kept
beside them (`conversation_notes`), deleted conversations in the trash (`trash`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from anton_tui.agent.conversation_notes import About, ConversationNotes
from anton_tui.agent.history_store import HistoryStore, SavedSession
from anton_tui.agent.ledger import Ledger
from anton_tui.agent.messages import is_summary_message, is_user_turn
from anton_tui.agent.summarise import current_summary
from anton_tui.agent.transcript import TranscriptEntry, transcript
from anton_tui.agent.trash import ConversationTrash, Trashed
from anton_tui.memory.episodes.store import SESSION_FORMAT


@dataclass(frozen=True)
class ConversationView:
    """One saved conversation in full: its list row, messages, the summary of earlier turns and the ledgers."""

    row: SavedSession
    history: list[dict[str, Any]]
    ledgers: list[Ledger]

    @property
    def summary(self) -> str | None:
        return current_summary(self.history)

    @property
    def entries(self) -> list[TranscriptEntry]:
        return transcript(self.history)


@dataclass(frozen=True)
class Fork:
    """A fork just made: the new conversation's id, its parent, and the parent's user message it was forked at."""

    session_id: str
    parent: str
    at: int
    messages: int


def user_message_starts(history: list[dict[str, Any]]) -> list[int]:
    """History indices of the user's typed messages (a summary is not one), oldest first."""
    return [index for index, message in enumerate(history) if is_user_turn(message) and not is_summary_message(message)]


def fork_tree(rows: list[SavedSession]) -> list[tuple[SavedSession, int]]:
    """The rows with each fork right under the conversation it came from: `(row, depth)`, roots and siblings in
    the order given (newest first). A fork whose parent is not listed (deleted, say) is a root."""
    ids = {row.session_id for row in rows}
    children: dict[str, list[SavedSession]] = {}
    roots = []
    for row in rows:
        if row.parent and row.parent in ids and row.parent != row.session_id:
            children.setdefault(row.parent, []).append(row)
        else:
            roots.append(row)
    ordered: list[tuple[SavedSession, int]] = []
    seen: set[str] = set()

    def walk(row: SavedSession, depth: int) -> None:
        if row.session_id in seen:
            return
        seen.add(row.session_id)
        ordered.append((row, depth))
        for child in children.get(row.session_id, ()):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    for row in rows:  # a loop of parents (files edited by hand) still lists every row
        walk(row, 0)
    return ordered


class ConversationShelf:
    """The saved conversations of one project (see the module docstring)."""

    def __init__(self, episodes_dir: Path | str, store: HistoryStore | None = None) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.store = store or HistoryStore(self.episodes_dir)
        self.notes = ConversationNotes(self.episodes_dir)
        self.trash = ConversationTrash(self.episodes_dir)

    # ---- reading -------------------------------------------------------------------------------------------

    def rows(self, limit: int | None = None) -> list[SavedSession]:
        """The saved conversations, newest first, with their titles and where forks came from."""
        return [self._with_notes(row) for row in self.store.list_sessions(limit)]

    def tree(self) -> list[tuple[SavedSession, int]]:
        """Every saved conversation with its forks under it (see `fork_tree`)."""
        return fork_tree(self.rows())

    def row(self, session_id: str) -> SavedSession:
        """One conversation's list row. Raises LookupError when there is no such conversation."""
        row = self.store.describe(session_id) if self.store.exists(session_id) else None
        if row is None:
            raise LookupError(f"No saved conversation {session_id!r}.")
        return self._with_notes(row)

    def _with_notes(self, row: SavedSession) -> SavedSession:
        about = self.notes.about(row.session_id)
        return dataclasses.replace(row, title=about.title, parent=about.parent, forked_at=about.forked_at)

    def show(self, session_id: str) -> ConversationView:
        """A conversation in full. Raises LookupError (none such) or HistoryBroken (its file does not parse)."""
        row = self.row(session_id)
        loaded = self.store.load(session_id)
        if loaded is None:
            raise LookupError(f"No saved conversation {session_id!r}.")
        return ConversationView(row, loaded[0], self.notes.ledgers(session_id))

    # ---- changing ------------------------------------------------------------------------------------------

    def rename(self, session_id: str, title: str) -> About:
        """Give a conversation a title (an empty one goes back to showing the first message)."""
        self.row(session_id)
        return self.notes.set_title(session_id, title)

    def files(self, session_id: str) -> list[Path]:
        """Every file of a conversation: Anton's history file and episode log, and this program's notes."""
        found = [self.store.history_path(session_id), self.store.episodes_path(session_id)]
        return [path for path in found if path.is_file()] + self.notes.files(session_id)

    def delete(self, session_id: str) -> Trashed:
        """Move a conversation to the trash (kept `KEEP_DAYS` days; `restore` brings it back)."""
        files = self.files(session_id)
        if not any(path.name.startswith(session_id) and path.parent == self.episodes_dir for path in files):
            raise LookupError(f"No saved conversation {session_id!r}.")
        return self.trash.put(session_id, files)

    def restore(self, session_id: str) -> list[Path]:
        """Bring a deleted conversation back from the trash. Raises LookupError or FileExistsError."""
        return self.trash.restore(session_id)

    def fork(self, session_id: str, at: int | None = None, *, now: datetime | None = None) -> Fork:
        """A new conversation holding this one up to the end of the turn its `at`-th user message (1-based; the
        last by default) started, linked to it. Anton lists and resumes it like any other. Raises LookupError,
        HistoryBroken or ValueError (no such message)."""
        view = self.show(session_id)
        starts = user_message_starts(view.history)
        if not starts:
            raise ValueError("That conversation has no message of yours to fork at.")
        number = len(starts) if at is None else at
        if not 1 <= number <= len(starts):
            raise ValueError(f"There is no message {number}: the conversation has {len(starts)} of yours (1–"
                             f"{len(starts)}).")  # fmt: skip
        end = starts[number] if number < len(starts) else len(view.history)
        history = [dict(message) for message in view.history[:end]]
        new_id = self.free_id(now)
        self.store.save(new_id, history)
        self.notes.write_ledgers(new_id, view.ledgers)
        title = f"{view.row.title} (fork)" if view.row.title else None
        self.notes.write_about(new_id, About(title, session_id, number))
        return Fork(new_id, session_id, number, len(history))

    def free_id(self, now: datetime | None = None) -> str:
        """A new session id in Anton's form (the UTC time), moved on a second while it is taken."""
        moment = (now or datetime.now(UTC)).replace(microsecond=0)
        while True:
            candidate = moment.strftime(SESSION_FORMAT)
            taken = self.files(candidate) or (self.trash.folder / candidate).exists()
            if not taken:
                return candidate
            moment += timedelta(seconds=1)

    def export(self, session_id: str) -> str:
        """The conversation as Markdown (see `export.export_markdown`)."""
        from anton_tui.agent.export import export_markdown

        view = self.show(session_id)
        row = view.row
        return export_markdown(session_id, view.history, view.ledgers, title=row.title, date=row.date,
                               parent=row.parent, forked_at=row.forked_at)  # fmt: skip
