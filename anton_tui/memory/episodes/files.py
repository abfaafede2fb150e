"""What the episode folder holds right now (each session file's size, mtime and inode), cheaply kept up to date.

The recall index compares these with what it has indexed before every search. Looking at thousands of files each
time would cost more than the search, so a full look happens when the folder itself changed (a file was added,
removed or replaced), or when the last one is more than `FULL_EVERY` seconds old; in between only the newest
`RECENT` files are looked at again, since lines are appended to the sessions in progress. A new process may start
from what the index last saw (`seed`) when the folder's own mtime says no file was added, removed or replaced since:
from the newest `RECENT` files only (`partial`), until its first full look. The newest files are kept open and looked
at through their descriptors (half the cost of a look by name): a file replaced or removed changes the folder's own
mtime, which is looked at by name each time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

from anton_tui.memory.episodes.record import SUFFIX

FULL_EVERY = 2.0
RECENT = 8


class FileStamp(NamedTuple):
    """What tells a file's versions apart: its size, mtime and inode (named as in `os.stat_result`)."""

    st_size: int
    st_mtime_ns: int
    st_ino: int


def stamp(st: os.stat_result) -> FileStamp:
    return FileStamp(st.st_size, st.st_mtime_ns, st.st_ino)


def folder_mtime(folder: Path) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        return None


def disk_files(folder: Path) -> dict[str, FileStamp]:
    """Every session file in `folder` (name without the suffix) with its stamp."""
    found = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(SUFFIX) and not entry.name.startswith(".") and entry.is_file():
                    found[entry.name[: -len(SUFFIX)]] = stamp(entry.stat())
    except (FileNotFoundError, NotADirectoryError):
        pass
    return found


class FolderView:
    """The session files of one folder with their stats; `version` moves whenever any of them changed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._prefix = f"{folder}{os.sep}"
        self.version = 0
        self._files: dict[str, FileStamp] | None = None
        self._folder_mtime: int | None = None
        self._swept = 0.0
        self._recent: list[str] = []
        self._recent_fds: dict[str, int] = {}
        self.fresh = False  # whether the last `files()` looked at every file
        self.partial = False  # whether the files held are only the newest few, as seeded (until the first full look)

    @property
    def seen(self) -> bool:
        """Whether the folder was looked at (or seeded) yet."""
        return self._files is not None

    @property
    def last_mtime(self) -> int | None:
        """The folder's own mtime as of the last full look."""
        return self._folder_mtime

    def seed(self, files: dict[str, FileStamp], mtime: int, *, partial: bool = False) -> None:
        """Take `files` for what the folder held when its mtime was `mtime` (the caller checked it still is), or with
        `partial` for its newest files: the next look checks only the folder's mtime and the newest files, and a
        full look follows `FULL_EVERY` later."""
        self._files, self._folder_mtime, self._swept = files, mtime, time.monotonic()
        self.partial = partial
        self._look_again(sorted(files, reverse=True)[:RECENT])
        self.version += 1

    def files(self) -> dict[str, FileStamp]:
        mtime = folder_mtime(self.folder)
        now = time.monotonic()
        if self._files is None or mtime != self._folder_mtime or now - self._swept > FULL_EVERY:
            return self._sweep(mtime, now)
        self.fresh = False
        files, fds = self._files, self._recent_fds
        for name in self._recent:
            try:
                fd = fds.get(name)
                if fd is None:
                    fd = fds[name] = os.open(f"{self._prefix}{name}{SUFFIX}", os.O_RDONLY | os.O_CLOEXEC)
                    st = os.fstat(fd)
                    changed = stamp(st) != files[name]  # (the file at that name now may be another one)
                else:  # (an open file's inode stays)
                    st = os.fstat(fd)
                    held = files[name]
                    changed = st.st_mtime_ns != held.st_mtime_ns or st.st_size != held.st_size
            except OSError:
                return self._sweep(mtime, now)
            if changed:
                files[name] = stamp(st)
                self.version += 1
        return files

    def _look_again(self, recent: list[str]) -> None:
        """The newest files are these now, as the folder holds them: every descriptor is closed (a name may now be
        another file), and each opened again when next looked at."""
        self._recent = recent
        fds, self._recent_fds = self._recent_fds, {}
        for fd in fds.values():
            os.close(fd)

    def close(self) -> None:
        """Close the newest files' descriptors (they are opened again when next looked at)."""
        self._look_again([])

    def _sweep(self, mtime: int | None, now: float) -> dict[str, FileStamp]:
        files = disk_files(self.folder)
        if self._files is None or files != self._files:
            self.version += 1
        self._files, self._folder_mtime, self._swept = files, mtime, now
        self._look_again(sorted(files, reverse=True)[:RECENT])
        self.fresh = True
        self.partial = False
        return files

    def forget(self) -> None:
        """Look at every file again next time (after this process changed some)."""
        self._files = None
        self.partial = False
