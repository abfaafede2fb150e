"""File locks and atomic writes for the memory files, safe across threads and processes.

A whole read-modify-write holds an exclusive `fcntl.flock` on a sidecar file (``rules.md.lock``), so two writers can
never interleave. Rewrites go to a temporary file that replaces the original in one step, so readers (which never
lock) see either the old file or the new one. Appends lock the target file itself, which is how Anton's own appends
lock, so an Anton process appending at the same moment waits its turn. On systems without `fcntl` the locks are
no-ops, as in Anton.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _flock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold the sidecar lock of `path` (``<name>.lock`` next to it) for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        _flock(fd)
        yield
    finally:
        os.close(fd)


@contextmanager
def target_locked(path: Path) -> Iterator[None]:
    """Hold a lock on `path` itself (as Anton's appenders do) while rewriting it; nothing to lock if it is missing."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield
        return
    try:
        _flock(fd)
        yield
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step (temporary file in the same folder, fsync, `os.replace`).

    The file keeps its permission bits; a new file gets the usual ones for the user's umask.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def append_locked(path: Path, data: bytes) -> None:
    """Append `data` to `path` while holding an exclusive lock on the file itself."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        _flock(fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
