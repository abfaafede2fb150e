"""What the episode folder holds right now (each session file's size, mtime and inode), cheaply kept up to date.

The recall index compares these with what it has indexed before every search. Looking at thousands of files each
time would cost more than the search, so a full look happens when the folder itself changed (a file was added,
removed or replaced), or when the last one is more than `FULL_EVERY` seconds old; in between only the newest
`RECENT` files are looked at again, since lines are appended to the sessions in progress.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from anton_tui.memory.episodes.record import SUFFIX

FULL_EVERY = 2.0
RECENT = 8


def disk_files(folder: Path) -> dict[str, os.stat_result]:
    """Every session file in `folder` (name without the suffix) with its stat."""
    found = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(SUFFIX) and not entry.name.startswith(".") and entry.is_file():
                    found[entry.name[: -len(SUFFIX)]] = entry.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    return found


class FolderView:
    """The session files of one folder with their stats; `version` moves whenever any of them changed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._prefix = f"{folder}{os.sep}"
        self.version = 0
        self._files: dict[str, os.stat_result] | None = None
        self._folder_mtime: int | None = None
        self._swept = 0.0
        self._recent: list[str] = []
        self.fresh = False  # whether the last `files()` looked at every file

    def files(self) -> dict[str, os.stat_result]:
        try:
            folder_mtime = os.stat(self.folder).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            folder_mtime = None
        now = time.monotonic()
        if self._files is None or folder_mtime != self._folder_mtime or now - self._swept > FULL_EVERY:
            return self._sweep(folder_mtime, now)
        self.fresh = False
        for name in self._recent:
            try:
                st = os.stat(f"{self._prefix}{name}{SUFFIX}")
            except OSError:
                return self._sweep(folder_mtime, now)
            old = self._files[name]
            if (st.st_size, st.st_mtime_ns, st.st_ino) != (old.st_size, old.st_mtime_ns, old.st_ino):
                self._files[name] = st
                self.version += 1
        return self._files

    def _sweep(self, folder_mtime: int | None, now: float) -> dict[str, os.stat_result]:
        files = disk_files(self.folder)
        if self._files is None or _stamps(files) != _stamps(self._files):
            self.version += 1
        self._files, self._folder_mtime, self._swept = files, folder_mtime, now
        self._recent = sorted(files, reverse=True)[:RECENT]
        self.fresh = True
        return files

    def forget(self) -> None:
        """Look at every file again next time (after this process changed some)."""
        self._files = None


def _stamps(files: dict[str, os.stat_result]) -> dict[str, tuple[int, int, int]]:
    return {name: (st.st_size, st.st_mtime_ns, st.st_ino) for name, st in files.items()}
