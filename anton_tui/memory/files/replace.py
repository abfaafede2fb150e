"""Rewrites a memory file that Anton may be appending to at that very moment, losing neither the new content nor
the append.

Anton appends a lesson by opening lessons.md, taking `flock` on that handle and writing. Replacing the file by a
rename alone loses such an append whenever Anton opened the file just before the rename: it then waits for the lock
of the old file and writes into it after it has left the folder. A rewrite here therefore goes:

1. lock the file itself (`rewriting`), so an appender that opened it waits, and read it;
2. write the new content to a temporary file (fsync), and give the old file a second name, its carry link
   ``.<name>.<pid>.<random>.<size>.carry``, which records how long it was;
3. rename the temporary file over the old one: readers see the old file or the new one, never a mix, and a kill at
   any moment leaves one of the two;
4. unlock: an appender that was waiting now writes into the old file;
5. wait until no process holds the old file open for writing (proved by taking a read lease on it, which Linux only
   grants then; where leases are not available, until its size has stayed put for `SETTLE_SECONDS`), and append to
   the new file the lines written to the old one past the recorded size;
6. delete the carry link.

A writer killed between 2 and 6 leaves its carry link behind; the next writer of that file finishes step 5 for it
(`recover_carries`), skipping lines the file already has, so nothing is lost and nothing doubled.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from anton_tui.memory.files.locking import fcntl, pid_alive, write_temp

F_SETLEASE = getattr(fcntl, "F_SETLEASE", None)
WAIT_SECONDS = 3.0  # how long a rewrite waits for appenders still writing into the old file
SETTLE_SECONDS = 0.1  # without leases: how long the old file's size must stay put


class Rewrite:
    """One rewrite of `path` in progress; see `rewriting`."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd
        self._size: int | None = None
        self._link: Path | None = None

    def replace(self, data: bytes) -> None:
        """Make `data` the file's content in one step (steps 2 and 3 above)."""
        tmp = write_temp(self.path, data)
        try:
            if self._fd is not None:
                self._size = os.fstat(self._fd).st_size
                self._link = self._link_old(self._size)
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            if self._link is not None:
                self._link.unlink(missing_ok=True)
            self._size = self._link = None
            raise

    def _link_old(self, size: int) -> Path | None:
        held = os.fstat(self._fd)  # type: ignore[arg-type]
        link = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.{size}.carry")
        try:
            os.link(self.path, link)
            linked = os.stat(link)
        except OSError:  # no hard links here: the carry-over still happens, it just cannot survive a kill
            return None
        if (linked.st_dev, linked.st_ino) != (held.st_dev, held.st_ino):
            link.unlink(missing_ok=True)  # someone who does not lock swapped the file meanwhile
            return None
        return link

    def finish(self) -> None:
        """Steps 5 and 6, once the lock is released."""
        if self._size is None or self._fd is None:
            return
        upto, complete = carry_over(self._fd, self._size, self.path)
        if self._link is not None:
            _close_link(self._link, upto, complete)


@contextmanager
def rewriting(path: Path) -> Iterator[Rewrite]:
    """Hold the lock of `path` itself (as Anton's appenders take it) for a read-modify-write of it.

    Call `replace(data)` on what it yields to swap the content in. Appends that were waiting for the lock are carried
    into the new file after the lock is released, before this returns.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_locked(path)
    rewrite = Rewrite(path, fd)
    try:
        yield rewrite
    finally:
        try:
            if fd is not None and fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
            rewrite.finish()
        finally:
            if fd is not None:
                os.close(fd)


def _open_locked(path: Path) -> int | None:
    """An fd of the file now at `path`, locked; None when there is no file. Retries if the file was swapped."""
    while True:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        if fcntl is None:
            return fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        held = os.fstat(fd)
        if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)


def carry_over(fd: int, size: int, target: Path) -> tuple[int, bool]:
    """Append to `target` what was written to the old file `fd` past `size`, once its writers are gone.

    Returns the size carried up to and whether the old file is known to be final (if not, only whole lines were
    carried and the rest is left for later).
    """
    final = _writers_gone(fd)
    end = os.fstat(fd).st_size
    if end <= size:
        return size, final
    data = os.pread(fd, end - size, size)
    if not final:
        data = data[: data.rfind(b"\n") + 1]
    if data:
        append_new_lines(target, data)
    return size + len(data), final


def append_new_lines(target: Path, data: bytes) -> None:
    """Append the lines of `data` that `target` does not have yet, under the lock of `target` itself."""
    fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        current = os.pread(fd, os.fstat(fd).st_size, 0)
        known = set(current.splitlines())
        fresh = b"".join(line for line in data.splitlines(keepends=True) if line.rstrip(b"\r\n") not in known)
        if not fresh:
            return
        if current and not current.endswith((b"\n", b"\r")):
            fresh = b"\n" + fresh
        view = memoryview(fresh)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _writers_gone(fd: int) -> bool:
    """Wait until no process has the file of `fd` open for writing; False if that did not happen in time."""
    deadline = time.monotonic() + WAIT_SECONDS
    if fcntl is None:
        return True
    if F_SETLEASE is None:
        return _settled(fd, deadline)
    pause = 0.0005
    while True:
        try:
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
        except BlockingIOError:  # someone still has it open for writing
            if time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
            continue
        except OSError:  # no leases on this file system, leases switched off, or a file of another user
            return _settled(fd, deadline)
        fcntl.fcntl(fd, F_SETLEASE, fcntl.F_UNLCK)
        return True


def _settled(fd: int, deadline: float) -> bool:
    """Without leases: wait until the file's size has not changed for `SETTLE_SECONDS` (appenders write under its
    lock, so taking the lock also waits for one in the middle of a line)."""
    last, since = -1, time.monotonic()
    while True:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        fcntl.flock(fd, fcntl.LOCK_UN)
        now = time.monotonic()
        if size != last:
            last, since = size, now
        elif now - since >= SETTLE_SECONDS:
            return True
        if now > deadline:
            return False
        time.sleep(0.01)


_CARRY = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.(?P<token>[0-9a-f]+)\.(?P<size>\d+)\.carry")


def _close_link(link: Path, upto: int, complete: bool) -> None:
    if complete:
        link.unlink(missing_ok=True)
        return
    match = _CARRY.fullmatch(link.name)
    if match is not None and int(match["size"]) != upto:
        name = f".{match['name']}.{match['pid']}.{match['token']}.{upto}.carry"
        os.replace(link, link.with_name(name))


def recover_carries(path: Path) -> int:
    """Finish the carry-overs of `path` left unfinished by writers that were killed or gave up waiting.

    Call it holding the sidecar lock of `path` (so no carry of this process is running for it). Returns how many
    carry links were dealt with.
    """
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return 0
    done = 0
    for name in names:
        match = _CARRY.fullmatch(name)
        if match is None or match["name"] != path.name:
            continue
        pid = int(match["pid"])
        if pid != os.getpid() and pid_alive(pid):
            continue
        link = path.parent / name
        try:
            fd = os.open(link, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            held = os.fstat(fd)
            try:
                current = os.stat(path)
                replaced = (current.st_dev, current.st_ino) != (held.st_dev, held.st_ino)
            except FileNotFoundError:
                replaced = True
            if not replaced:  # killed before the rename: the old file is still the file
                link.unlink(missing_ok=True)
            else:
                upto, complete = carry_over(fd, int(match["size"]), path)
                _close_link(link, upto, complete)
            done += 1
        finally:
            os.close(fd)
    return done
