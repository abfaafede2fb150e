"""File locks and atomic writes for the memory files, safe across threads and processes.

A whole read-modify-write holds an exclusive `fcntl.flock` on a sidecar file (``rules.md.lock``), so two writers can
never interleave. Rewrites go to a temporary file that replaces the original in one step, so readers (which never
lock) see either the old file or the new one; the temporary file's name carries the writer's pid, so one left by a
killed writer is recognised and removed later (`remove_stale_temps`). Appends lock the target file itself, which is
how Anton's own appends lock, so an Anton process appending at the same moment waits its turn; a reader that finds
the last line without its newline reads again under that lock (`read_whole_lines`), so it never takes half an
appended line for a whole one. On systems without `fcntl` the locks are no-ops, as in Anton.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from anton_tui import gc_policy

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]  # a module or None: there is no fcntl on Windows


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


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one of another user counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_temp(path: Path, data: bytes, *, mode: int | None = None) -> Path:
    """Write `data` to a new temporary file next to `path` (named ``.<name>.<pid>.<random>.tmp``) and fsync it.

    It gets `mode` when given, else the permission bits `path` has now (the usual ones for the user's umask when
    `path` is missing).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def fsync_folder(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (where the system allows opening a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the rename itself is still atomic
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` in one step: a temporary file in the same folder (fsync), `os.replace`, then an
    fsync of the folder, so after a crash the file is the old one or the new one, whole. `mode` as in `write_temp`."""
    tmp = write_temp(path, data, mode=mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder itself, so writers of files in it take turns and no lock file is left
    in the folder (a lock on the folder survives its files being replaced). A no-op without `fcntl`."""
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def remove_stale_temps(path: Path) -> int:
    """Delete the temporary files of `path` that writers killed mid-write left behind; returns how many.

    Only files named as `write_temp` names them whose pid is not a running process are removed; this process's own
    and those of live writers are left alone.
    """
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[0-9a-f]+\.tmp")
    removed = 0
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return 0
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or int(match.group(1)) == os.getpid() or pid_alive(int(match.group(1))):
            continue
        try:
            os.unlink(path.parent / name)
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def read_whole_lines(path: Path) -> tuple[os.stat_result, bytes]:
    """The bytes of `path` and its stat, never ending in half a line that an appender is still writing.

    Reads without a lock. Only when the last line has no newline yet, it reads again under a shared lock of the
    file itself: appenders (ours and Anton's) hold that lock exclusively while they write, so the second read sees
    the line whole. A last line that still has no newline then is really so (a file edited by hand) and is kept.
    """
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())  # before reading: a stamp older than the bytes only costs a re-read
        gc_policy.before_big_read(stat.st_size)
        data = handle.read()
        if data and not data.endswith((b"\n", b"\r")) and fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            try:
                stat = os.fstat(handle.fileno())
                handle.seek(0)
                data = handle.read()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return stat, data


def append_locked(path: Path, data: bytes) -> None:
    """Append `data` to `path` while holding an exclusive lock on the file itself.

    All of it or nothing: when the write or its fsync fails (a full disk, a file size limit), the file is cut back
    to the length it had, so no cut-off line is left to be read as an entry, and the error is raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        _flock(fd)
        size = os.fstat(fd).st_size  # under the lock: no other appender moves the end meanwhile
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            try:
                os.ftruncate(fd, size)  # shrinking needs no free space
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
