"""Deleted conversations, kept 30 days so a delete can be undone.

Deleting a conversation moves its files (Anton's history file and episode log, and this program's notes) into
``<project>/.anton/episodes/trash/{session_id}/`` with a ``trashed.json`` saying when; `restore` moves them back.
Entries older than `KEEP_DAYS` are removed whenever the trash is used. Every move is a rename inside the episodes
folder, so a file is either in its place or in the trash, never half-copied. Anton looks only at the episodes folder
itself, so a trashed conversation is gone for it too.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from anton_tui.memory.files.locking import atomic_write, fsync_folder

TRASH_FOLDER = "trash"
RECORD = "trashed.json"
KEEP_DAYS = 30


@dataclass(frozen=True)
class Trashed:
    """One deleted conversation: when it was deleted and the files kept (paths relative to the episodes folder)."""

    session_id: str
    deleted: datetime
    files: tuple[str, ...]

    @property
    def expires(self) -> datetime:
        return self.deleted + timedelta(days=KEEP_DAYS)


class ConversationTrash:
    """The trash of one episodes folder (see the module docstring)."""

    def __init__(self, episodes_dir: Path | str) -> None:
        self.episodes_dir = Path(episodes_dir)
        self.folder = self.episodes_dir / TRASH_FOLDER

    def put(self, session_id: str, files: list[Path], *, now: datetime | None = None) -> Trashed:
        """Move `files` (inside the episodes folder) to the trash under `session_id`. A conversation of the same id
        deleted earlier is replaced."""
        self.purge(now=now)
        place = self.folder / session_id
        if place.exists():
            shutil.rmtree(place)
        place.mkdir(parents=True)
        moved = [path.relative_to(self.episodes_dir).as_posix() for path in files]
        when = now or datetime.now(UTC)
        record = {"session_id": session_id, "deleted": when.isoformat(timespec="seconds"), "files": moved}
        # the record first: a crash among the moves leaves an entry that restores what did move
        atomic_write(place / RECORD, json.dumps(record, indent=1).encode("utf-8") + b"\n", mode=0o600)
        for path, relative in zip(files, moved, strict=True):
            target = place / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        fsync_folder(self.episodes_dir)
        return Trashed(session_id, when, tuple(moved))

    def items(self, *, now: datetime | None = None) -> list[Trashed]:
        """What the trash holds, most recently deleted first (expired entries are removed first)."""
        self.purge(now=now)
        return sorted(self._read_all(), key=lambda item: item.deleted, reverse=True)

    def get(self, session_id: str) -> Trashed | None:
        return next((item for item in self.items() if item.session_id == session_id), None)

    def restore(self, session_id: str) -> list[Path]:
        """Move a deleted conversation's files back. Raises LookupError (not in the trash) or FileExistsError (a
        conversation of that id exists again; nothing is moved)."""
        item = self.get(session_id)
        if item is None:
            raise LookupError(f"No deleted conversation {session_id!r} in the trash (it keeps them {KEEP_DAYS} days).")
        place = self.folder / session_id
        kept = [name for name in item.files if (place / name).exists()]
        clashes = [name for name in kept if (self.episodes_dir / name).exists()]
        if clashes:
            raise FileExistsError(f"{clashes[0]} exists again; the deleted conversation was left in the trash.")
        restored = []
        for name in kept:
            target = self.episodes_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(place / name, target)
            restored.append(target)
        shutil.rmtree(place, ignore_errors=True)
        fsync_folder(self.episodes_dir)
        return restored

    def purge(self, *, now: datetime | None = None) -> list[str]:
        """Remove what was deleted more than `KEEP_DAYS` ago; returns the ids removed."""
        moment = now or datetime.now(UTC)
        gone = []
        for item in self._read_all():
            if item.expires <= moment:
                shutil.rmtree(self.folder / item.session_id, ignore_errors=True)
                gone.append(item.session_id)
        return gone

    def _read_all(self) -> list[Trashed]:
        try:
            places = [entry for entry in os.scandir(self.folder) if entry.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for place in places:
            try:
                data = json.loads(Path(place.path, RECORD).read_text(encoding="utf-8"))
                deleted = datetime.fromisoformat(str(data["deleted"]))
                files = tuple(str(name) for name in data["files"])
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not one of ours, or half-written: left alone
            if deleted.tzinfo is None:
                deleted = deleted.replace(tzinfo=UTC)
            found.append(Trashed(place.name, deleted, files))
        return found
