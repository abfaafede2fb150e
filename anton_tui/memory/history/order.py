"""Keeps a scope's recorded changes in the order its files changed, when several processes write the same scope
(two app windows share the global memory).

A write hands its bytes to its own process's history thread, which commits them later; two processes' threads
could commit in either order, and a commit of older bytes over newer ones would show a change nobody made. So
each write takes a `Ticket` while it still holds its file's lock: a number larger than any taken before for that
file, and who took the one before it. A commit then waits (a few seconds at most) until the write before it, when
another live process made it, is recorded; and it leaves out a file whose newer version is recorded already (its
bytes were superseded, committing them would move the file back). Writes of one file are thus recorded in the
order they happened, whatever process commits them.

The numbers live in ``anton-order.json`` in the git directory, read and written under an `fcntl.flock` of that file.
Taking a ticket never raises: without one (a read-only home, a broken history) a change is committed as it comes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import pid_alive

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]  # a module or None: there is no fcntl on Windows

NAME = "anton-order.json"
WAIT_SECONDS = 5.0  # how long a commit waits for another process to record the write before it


@dataclasses.dataclass(frozen=True, slots=True)
class Ticket:
    """A write's place among the writes of its file: `seq`, and the write before it (`after`, taken by process
    `after_pid`; 0 when none is known)."""

    seq: int
    after: int = 0
    after_pid: int = 0


class WriteOrder:
    """The tickets of one scope's files: the last one taken per file (and by whom), and the last one recorded."""

    def __init__(self, git_dir: Path, wait: float = WAIT_SECONDS) -> None:
        self.path = Path(git_dir) / NAME
        self.wait = wait

    @contextlib.contextmanager
    def _state(self, create: bool) -> Iterator[dict[str, dict[str, int]]]:
        """The state, read under the file's lock; what the block leaves in it is written back."""
        fd = os.open(self.path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            raw = b""
            while chunk := os.read(fd, 65536):
                raw += chunk
            state = _parse(raw)
            before = json.dumps(state, sort_keys=True)
            yield state
            after = json.dumps(state, sort_keys=True)
            if after != before:
                data = after.encode("ascii")
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                os.write(fd, data)
        finally:
            os.close(fd)

    def take(self, name: str) -> Ticket | None:
        """A ticket for a write of `name` that just happened (call it under the file's lock); None when the order
        cannot be kept (the history's folder cannot be written)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._state(create=True) as state:
                row = state.setdefault(name, {})
                ticket = Ticket(max(time.time_ns(), row.get("taken", 0) + 1), row.get("taken", 0), row.get("pid", 0))
                row["taken"], row["pid"] = ticket.seq, os.getpid()
                return ticket
        except (OSError, ValueError):
            return None

    def drop(self, name: str, ticket: Ticket) -> None:
        """A ticket taken for a write that will not be committed: the writes after it need not wait for it."""
        with contextlib.suppress(OSError, ValueError), self._state(create=False) as state:
            row = state.setdefault(name, {})
            row["void"] = ticket.seq

    def waiting(self, tickets: dict[str, Ticket]) -> bool:
        """Whether a write before one of these, made by another process still running, is not recorded yet."""
        if not tickets:
            return False
        try:
            with self._state(create=False) as state:
                late = []
                for name, ticket in tickets.items():
                    row = state.get(name, {})
                    if row.get("done", 0) < ticket.after and ticket.after != row.get("void"):
                        late.append(ticket)
        except (OSError, ValueError):
            return False
        return any(t.after_pid != os.getpid() and pid_alive(t.after_pid) for t in late)

    def superseded(self, tickets: dict[str, Ticket]) -> set[str]:
        """The files whose recorded version is newer than their ticket's (hold the writer lock)."""
        if not tickets:
            return set()
        try:
            with self._state(create=False) as state:
                return {name for name, t in tickets.items() if state.get(name, {}).get("done", 0) >= t.seq}
        except (OSError, ValueError):
            return set()

    def recorded(self, tickets: dict[str, Ticket]) -> None:
        """These writes are in the history now (hold the writer lock, and call it right after the commit)."""
        if not tickets:
            return
        with contextlib.suppress(OSError, ValueError), self._state(create=True) as state:
            for name, ticket in tickets.items():
                row = state.setdefault(name, {})
                row["done"] = max(row.get("done", 0), ticket.seq)


def _parse(raw: bytes) -> dict[str, dict[str, int]]:
    """The state in the file's bytes; empty when it is missing or torn (then nothing waits and nothing is left out,
    and the next tickets, being times, still come after the old ones)."""
    try:
        data: Any = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    state: dict[str, dict[str, int]] = {}
    for name, row in data.items():
        if isinstance(row, dict):
            state[str(name)] = {
                k: v for k, v in row.items() if isinstance(v, int) and k in ("taken", "pid", "done", "void")
            }
    return state
