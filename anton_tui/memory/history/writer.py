"""One writer at a time on a scope's history repository, across threads and processes, and the git lock files a
killed writer leaves behind.

Every write to a history repository (creating it, a commit, a ref, the remote in its config, a fetch) holds
`WriterLock`: an `fcntl.flock` on ``anton-writer.lock`` in the git directory. The system lets go of it when its
holder dies, even by ``kill -9``. Git's own lock files (``refs/heads/main.lock``, an object's ``.lock``) are plain
files that outlive a killed writer, so one found while holding the writer lock was left by a writer that stopped
mid-write: nobody else of ours is writing. `clearing_stale_locks` removes such a file and tries again, so a kill at
any moment never stops the history for good. (A plain ``git`` run on the same repository at that very moment is
not covered: the history is the app's own, kept outside the project.)

When the history truly cannot be written, `describe` gives the reason in one line (never a raw tuple of paths).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]  # a module or None: there is no fcntl on Windows

log = logging.getLogger(__name__)

NAME = "anton-writer.lock"
WAIT_SECONDS = 30.0  # how long a write waits for another process's write to the same history
_POLL = 0.01
T = TypeVar("T")


class HistoryError(Exception):
    """The history cannot be read or written (a broken repository, a change that does not exist)."""


class WriterLock:
    """The lock every write to one history repository holds: re-entrant within a thread, exclusive across threads
    and processes, let go by the system when its holder dies."""

    def __init__(self, git_dir: Path, scope: str, wait: float = WAIT_SECONDS) -> None:
        self.path = Path(git_dir) / NAME
        self.scope = scope
        self.wait = wait
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if not self._threads.acquire(timeout=self.wait):
            raise HistoryError(f"the {self.scope} memory history was busy for {self.wait:g} s")
        try:
            if self._depth == 0:
                self._fd = self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
        finally:
            self._threads.release()

    def _acquire(self) -> int | None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise HistoryError(f"the {self.scope} memory history cannot be written: {describe(exc)}") from exc
        if fcntl is None:
            return fd
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK) or time.monotonic() > deadline:
                    os.close(fd)
                    raise HistoryError(
                        f"another process kept the {self.scope} memory history busy for {self.wait:g} s"
                    ) from exc
            time.sleep(_POLL)


def clearing_stale_locks(action: Callable[[], T], git_dir: Path) -> T:
    """Run `action`, a dulwich write to `git_dir` made while holding its `WriterLock`; a git lock file of `git_dir` in
    its way was left by a writer that stopped mid-write, so it is removed and the write tried again (once per lock
    file). A lock file anywhere else (a remote's) is not ours: its error is raised as it is."""
    from dulwich.file import FileLocked

    cleared: set[str] = set()
    root = os.path.join(os.path.realpath(git_dir), "")
    while True:
        try:
            return action()
        except FileLocked as exc:
            lock = os.fsdecode(exc.lockfilename)
            if not os.path.realpath(lock).startswith(root):
                raise
            if lock in cleared:
                raise HistoryError(f"{lock} keeps coming back while nothing else writes the history") from None
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
            except OSError as err:
                raise HistoryError(f"a lock file left by a stopped write cannot be removed: {describe(err)}") from None
            cleared.add(lock)
            log.info("removed %s, left by a history write that stopped midway", lock)


def describe(exc: BaseException) -> str:
    """Why a history write failed, in one line: ``No space left on device (/path)``, not a tuple or a traceback."""
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename if exc.filename is not None else ""
        return f"{exc.strerror} ({os.fsdecode(where)})" if where else exc.strerror
    if "dulwich.file" in sys.modules:  # only a write through dulwich can have raised its FileLocked
        from dulwich.file import FileLocked

        if isinstance(exc, FileLocked):
            return f"{os.fsdecode(exc.lockfilename)} is held by another write"
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
