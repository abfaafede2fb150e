"""What this program keeps beside a saved conversation: its title, the conversation it was forked from, and the
ledgers of what its summaries folded. Anton's own files are never touched for these.

They live in ``<project>/.anton/episodes/conversations/``: ``{session_id}.json`` holds the title and the fork's
origin (written whole, atomically), ``{session_id}.ledgers.jsonl`` one ledger per line (appended and synced, so a
crash leaves every ledger written before it; a torn last line is skipped). Anton reads neither: its listing looks
for ``*_history.json`` and its episode search for ``*.jsonl`` directly in the episodes folder, not below it.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anton_tui.agent.ledger import Ledger
from anton_tui.memory.files.locking import atomic_write

NOTES_FOLDER = "conversations"
ABOUT_SUFFIX = ".json"
LEDGERS_SUFFIX = ".ledgers.jsonl"


@dataclass(frozen=True)
class About:
    """A conversation's title (None: shown by its first message) and, for a fork, where it came from: the parent's
    id and the number of the parent's user message it was forked at."""

    title: str | None = None
    parent: str | None = None
    forked_at: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None}


class ConversationNotes:
    """The notes of every conversation in one episodes folder (see the module docstring)."""

    def __init__(self, episodes_dir: Path | str) -> None:
        self.folder = Path(episodes_dir) / NOTES_FOLDER

    def about_path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}{ABOUT_SUFFIX}"

    def ledgers_path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}{LEDGERS_SUFFIX}"

    def files(self, session_id: str) -> list[Path]:
        """The note files a conversation has on disk."""
        return [path for path in (self.about_path(session_id), self.ledgers_path(session_id)) if path.is_file()]

    # ---- title and origin ------------------------------------------------------------------------------------

    def about(self, session_id: str) -> About:
        """The conversation's title and origin; an unreadable or missing file reads as none."""
        try:
            data = json.loads(self.about_path(session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return About()
        if not isinstance(data, dict):
            return About()
        title, parent, forked_at = data.get("title"), data.get("parent"), data.get("forked_at")
        return About(
            title=title if isinstance(title, str) and title.strip() else None,
            parent=parent if isinstance(parent, str) and parent else None,
            forked_at=forked_at if isinstance(forked_at, int) and not isinstance(forked_at, bool) else None,
        )

    def write_about(self, session_id: str, about: About) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        data = json.dumps(about.to_json(), ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
        atomic_write(self.about_path(session_id), data, mode=0o600)

    def set_title(self, session_id: str, title: str | None) -> About:
        about = self.about(session_id)
        cleaned = " ".join((title or "").split()) or None
        new = About(cleaned, about.parent, about.forked_at)
        self.write_about(session_id, new)
        return new

    # ---- ledgers ---------------------------------------------------------------------------------------------

    def ledgers(self, session_id: str) -> list[Ledger]:
        """The conversation's ledgers, oldest first (lines that cannot be read are skipped)."""
        try:
            raw = self.ledgers_path(session_id).read_bytes()
        except OSError:
            return []
        found = []
        for line in raw.splitlines():
            try:
                found.append(Ledger.from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by a crash, or edited by hand
        return found

    def add_ledger(self, session_id: str, ledger: Ledger) -> None:
        """Append one ledger, synced to disk before this returns (mode 0600, like the history file)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        line = json.dumps(ledger.to_json(), ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        fd = os.open(self.ledgers_path(session_id), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def write_ledgers(self, session_id: str, ledgers: list[Ledger]) -> None:
        """Replace the conversation's ledgers (a fork starts with its parent's)."""
        if not ledgers:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        lines = b"".join(
            json.dumps(ledger.to_json(), ensure_ascii=False, default=str).encode("utf-8") + b"\n" for ledger in ledgers
        )
        atomic_write(self.ledgers_path(session_id), lines, mode=0o600)
