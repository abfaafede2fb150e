"""Notices when memory, skills, episodes or theme files change on disk, whoever wrote them, and tells the UI.

One watchdog `Observer` serves every folder. Its thread does nothing but post a `FilesChanged(areas)` message to each
target (posting is thread-safe). Messages of that kind still waiting in a target's queue merge into one
(`can_replace`), and `ChangeBatcher` holds what arrives for a tenth of a second, so a burst of writes becomes one
refresh while a single edit still shows within a quarter second.

A folder that does not exist yet is watched through its nearest existing parent and picked up when it appears; a
watched folder that is deleted falls back the same way. Lock files, temporary files and the episode search index are
ignored: they are the app's own bookkeeping, not changes a user would want to see.

The skills folder is watched alone at first: a skill added, removed or renamed shows at once. What changes inside a
skill folder (its SKILL.md, its stats) is followed from when something on screen shows it (`watch_inside`, asked by the
Skills tab or the Skills screen): watchdog spends some 580 bytes on each folder it watches, close to 6 MB at 10,000
skills, which an app whose Skills tab is never opened does without. The screen that asks is refreshed then, so what
changed before is shown too.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.message_pump import MessagePump
from textual.timer import Timer

from anton_tui.paths import AntonPaths

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent

logger = logging.getLogger(__name__)

AREAS = frozenset({"memory", "skills", "episodes", "themes"})
DEBOUNCE_SECONDS = 0.1
_IGNORED_SUFFIXES = (".lock", ".tmp", ".swp", "~")
_IGNORED_PREFIXES = (".recall-index",)  # the episode search index and its journal/WAL files
_IGNORED_PARTS = frozenset({"__pycache__", ".git"})


class FollowInside(Message):
    """Something now on screen shows what is inside the sub-folders of `area` (its skill folders, for "skills"): the
    app asks its watcher to follow them (`MemoryWatcher.watch_inside`)."""

    def __init__(self, area: str) -> None:
        super().__init__()
        self.area = area


class FilesChanged(Message, bubble=False):
    """Files in these areas ("memory", "skills", "episodes", "themes") changed on disk."""

    def __init__(self, areas: Iterable[str]) -> None:
        super().__init__()
        self.areas = frozenset(areas)

    def can_replace(self, message: Message) -> bool:
        # Called on the older message with the one queued after it: the newer one absorbs our areas and stays.
        if isinstance(message, FilesChanged):
            message.areas = message.areas | self.areas
            return True
        return False


@dataclass(frozen=True)
class WatchedFolder:
    path: Path
    area: str
    recursive: bool = False


def watched_folders(paths: AntonPaths) -> list[WatchedFolder]:
    """The folders the app follows, each with the area it belongs to."""
    return [
        WatchedFolder(paths.global_memory, "memory"),
        WatchedFolder(paths.project_memory, "memory"),
        WatchedFolder(paths.skills, "skills"),  # its skill folders too, once shown (`watch_inside`)
        WatchedFolder(paths.episodes, "episodes"),
        WatchedFolder(paths.themes, "themes"),
    ]


def is_noise(path: str) -> bool:
    """True for files that only the app's own bookkeeping touches (locks, temporary files, the search index)."""
    name = os.path.basename(path)
    if name.endswith(_IGNORED_SUFFIXES) or name.startswith(_IGNORED_PREFIXES):
        return True
    return any(part in _IGNORED_PARTS for part in Path(path).parts)


def _within(path: str, folder: str, recursive: bool) -> bool:
    if path == folder:
        return True
    if recursive:
        return path.startswith(folder.rstrip(os.sep) + os.sep)
    return os.path.dirname(path) == folder


def _is_ancestor_or_same(path: str, folder: str) -> bool:
    return folder == path or folder.startswith(path.rstrip(os.sep) + os.sep)


class MemoryWatcher:
    """Watches the app's folders with one shared observer and posts `FilesChanged` to every target.

    `start()` imports watchdog and begins watching; `stop()` ends the observer thread and waits for it.
    """

    def __init__(self, folders: Iterable[WatchedFolder], targets: MessagePump | Iterable[MessagePump] = ()) -> None:
        self.folders = [WatchedFolder(Path(f.path).absolute(), f.area, f.recursive) for f in folders]
        self._targets: tuple[MessagePump, ...] = (targets,) if isinstance(targets, MessagePump) else tuple(targets)
        self._observer: Any = None
        self._event_types: list[type] = []
        self._watches: dict[tuple[str, bool], Any] = {}
        self._watching: dict[WatchedFolder, str] = {}
        self.errors: list[str] = []

    @classmethod
    def for_paths(cls, paths: AntonPaths, targets: MessagePump | Iterable[MessagePump] = ()) -> MemoryWatcher:
        return cls(watched_folders(paths), targets)

    # ---- targets -----------------------------------------------------------------------------------------------

    def add_target(self, target: MessagePump) -> None:
        if target not in self._targets:
            self._targets = (*self._targets, target)

    def remove_target(self, target: MessagePump) -> None:
        self._targets = tuple(t for t in self._targets if t is not target)

    def watched_path(self, folder: Path | str) -> Path | None:
        """Where changes to `folder` are being picked up: the folder itself, its nearest existing parent, or None."""
        wanted = Path(folder).absolute()
        for watched, path in list(self._watching.items()):
            if watched.path == wanted:
                return Path(path)
        return None

    # ---- life cycle --------------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def start(self) -> None:
        """Schedule every folder (or its nearest existing parent) and start the observer thread."""
        if self._observer is not None:
            return
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileClosedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
        )
        from watchdog.observers import Observer

        # Opening and reading a file (which every refresh does) must not count as a change.
        self._event_types = [
            FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent, FileMovedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
        ]  # fmt: skip
        self._observer = Observer()
        self._observer.daemon = True
        for folder in self.folders:
            self._ensure(folder)
        self._observer.start()

    def watch_inside(self, area: str) -> None:
        """Follow changes inside the sub-folders of `area`'s folders too, from now on (on a worker thread: with
        thousands of skills this takes a moment), then tell the targets that `area` may have changed, since what
        changed before was not followed. Before `start`, the folders are simply watched whole from the start."""
        shallow = [(index, f) for index, f in enumerate(self.folders) if f.area == area and not f.recursive]
        for index, folder in shallow:
            deep = self.folders[index] = replace(folder, recursive=True)
            if self._observer is not None:
                self._watching.pop(folder, None)
                self._ensure(deep)
        if shallow and self._observer is not None:
            self._drop_unused()
            self._notify({area})

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the observer thread."""
        observer, self._observer = self._observer, None
        if observer is None:
            return
        observer.stop()
        if observer.is_alive():
            observer.join(timeout)
        self._watches.clear()
        self._watching.clear()

    # ---- scheduling (before start, then on the observer thread, and once by `watch_inside` on a worker) ------------
    # No lock of ours: watchdog dispatches each event holding its observer's lock, which `schedule` takes too, so a
    # lock taken in both places would deadlock. Watchdog serialises the schedules; the maps here are read through
    # copies, and an event seen while a folder turns from shallow to whole belongs to the same area either way.

    def _schedule(self, path: str, recursive: bool) -> bool:
        key = (path, recursive)
        if key in self._watches:
            return True
        try:
            self._watches[key] = self._observer.schedule(
                self, path, recursive=recursive, event_filter=self._event_types
            )
        except OSError as exc:  # e.g. the inotify watch limit, or the folder vanished a moment ago
            message = f"cannot watch {path}: {exc.strerror or exc}"
            self.errors.append(message)
            logger.warning("%s", message)
            return False
        return True

    def _unschedule(self, path: str) -> None:
        for key in [key for key in list(self._watches) if key[0] == path]:
            self._drop(key)

    def _drop_unused(self) -> None:
        """Unschedule the watches no folder relies on any more (a folder's shallow watch once it is watched whole)."""
        used = {(path, folder.recursive and path == str(folder.path)) for folder, path in list(self._watching.items())}
        for key in [key for key in list(self._watches) if key not in used]:
            self._drop(key)

    def _drop(self, key: tuple[str, bool]) -> None:
        watch = self._watches.pop(key, None)
        if watch is not None:
            with contextlib.suppress(KeyError, RuntimeError):
                self._observer.unschedule(watch)

    def _ensure(self, folder: WatchedFolder) -> bool:
        """Watch `folder`, or its nearest existing parent until it exists. True once the folder itself is watched."""
        for _ in range(len(folder.path.parts)):
            probe = folder.path
            while not probe.is_dir() and probe.parent != probe:
                probe = probe.parent
            own = probe == folder.path
            if self._watching.get(folder) == str(probe):
                return own
            if not self._schedule(str(probe), folder.recursive and own):
                return False
            self._watching[folder] = str(probe)
            if own:
                return True
            # Look again: the folder (or a nearer parent) may have appeared while the watch was being set up.
        return False

    # ---- events (observer thread) ------------------------------------------------------------------------------

    def dispatch(self, event: FileSystemEvent) -> None:
        """Called by the observer for every file-system event in a watched folder."""
        if self._observer is None:
            return
        try:
            areas = self._areas_for(event)
        except Exception:  # never let a bad event kill the observer thread
            logger.exception("file watcher: could not handle %r", event)
            return
        if areas:
            self._notify(areas)

    def _areas_for(self, event: FileSystemEvent) -> set[str]:
        paths = [os.fsdecode(event.src_path)]
        if event.dest_path:
            paths.append(os.fsdecode(event.dest_path))
        areas: set[str] = set()
        if event.is_directory:
            if event.event_type in ("deleted", "moved"):
                self._unschedule(paths[0])
            for folder in self.folders:
                target = str(folder.path)
                if any(_is_ancestor_or_same(path, target) for path in paths):
                    # A folder on the way to a watched one appeared or went away: watch the nearest existing level.
                    self._watching.pop(folder, None)
                    self._ensure(folder)
                    areas.add(folder.area)
                elif any(_within(path, target, folder.recursive) for path in paths):
                    areas.add(folder.area)
            return areas
        for path in paths:
            if is_noise(path):
                continue
            for folder in self.folders:
                if _within(path, str(folder.path), folder.recursive):
                    areas.add(folder.area)
        return areas

    def _notify(self, areas: set[str]) -> None:
        for target in self._targets:
            try:
                target.post_message(FilesChanged(areas))
            except Exception:  # the target was removed from the app; nothing to tell it
                logger.debug("file watcher: target %r did not take the message", target)


class ChangeBatcher:
    """Gathers the areas of `FilesChanged` messages on the UI side and hands them on once per short window.

    The first change opens a window of `delay` seconds; everything that arrives meanwhile joins it, and `flush`
    receives the union when the window closes.
    """

    def __init__(
        self, owner: MessagePump, flush: Callable[[frozenset[str]], object], delay: float = DEBOUNCE_SECONDS
    ) -> None:
        self._owner = owner
        self._flush = flush
        self._delay = delay
        self._pending: set[str] = set()
        self._timer: Timer | None = None

    @property
    def pending(self) -> frozenset[str]:
        return frozenset(self._pending)

    def add(self, areas: Iterable[str]) -> None:
        self._pending.update(areas)
        if self._timer is None and self._pending:
            self._timer = self._owner.set_timer(self._delay, self._fire, name="files-changed")

    def _fire(self) -> None:
        areas, self._pending, self._timer = frozenset(self._pending), set(), None
        if areas:
            self._flush(areas)
