"""Commits memory changes to their history on a background thread, so a write never waits for git.

`Hippocampus` calls `MemoryRecorder.note(scope, name, data, origin)` right after each write, still holding the file's
lock, with the bytes it just wrote; the note takes the write's ticket (its place among the writes of that file, in
every process: see `order`), and the commit is made later on one daemon thread, in the order the writes happened.
When the history of a scope cannot be written (a broken repository, a full disk) the memory write has already
happened and stays; the recorder reports it once per scope, in one line, through `on_problem(scope, message)` and
goes on trying later changes (the first that succeeds clears the report).
"""

from __future__ import annotations

import contextvars
import functools
import heapq
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from anton_tui.memory.history.order import Ticket
from anton_tui.memory.history.origin import Origin
from anton_tui.memory.history.repo import Change, ScopeHistory, history_dir
from anton_tui.memory.history.writer import describe

if TYPE_CHECKING:
    from anton_tui.paths import AntonPaths

log = logging.getLogger(__name__)

Job = Callable[[], None]
Noted = tuple[bytes | None, Origin, Ticket | None]
_group: contextvars.ContextVar[dict[tuple[str, str], Noted] | None] = contextvars.ContextVar(
    "memory_history_group", default=None
)


class MemoryRecorder:
    """The history of both scopes of one project and the thread that writes it."""

    def __init__(self, home: Path, project_dir: Path, global_memory: Path, project_memory: Path) -> None:
        self.scopes = {
            "global": ScopeHistory(history_dir(home, "global"), global_memory, "global"),
            "project": ScopeHistory(history_dir(home, "project", project_dir), project_memory, "project"),
        }
        self.on_problem: Callable[[str, str], None] | None = None
        self.problems: dict[str, str] = {}
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._noting = threading.Lock()  # a ticket and its place in the queue are taken together

    @classmethod
    def from_paths(cls, paths: AntonPaths) -> MemoryRecorder:
        return cls(paths.home, paths.project_dir, paths.global_memory, paths.project_memory)

    def history(self, scope: str) -> ScopeHistory:
        try:
            return self.scopes[scope]
        except KeyError:
            raise ValueError(f"unknown memory scope {scope!r}: use 'global' or 'project'") from None

    def log(self, scope: str | None = None, limit: int | None = None) -> list[Change]:
        """The changes of one scope or both, newest first, once everything queued so far is committed."""
        self.flush()
        lists = [self.history(name).log() for name in ([scope] if scope else self.scopes)]
        merged = list(heapq.merge(*lists, key=lambda change: -change.time))
        return merged[:limit] if limit is not None else merged

    # ---- queueing work -----------------------------------------------------------------------------------------

    def note(self, scope: str, name: str, data: bytes | None, origin: Origin) -> None:
        """A write of `name` in `scope` just left these bytes (None: the file is gone); commit it soon. Called while
        the write still holds the file's lock, so the write's ticket keeps its place among other processes'."""
        history = self.history(scope)
        with self._noting:
            ticket = history.order.take(name)
            group = _group.get()
            if group is not None:
                group[(scope, name)] = (data, origin, ticket)
                return
            tickets = {name: ticket} if ticket is not None else {}
            self._submit(scope, lambda: history.commit({name: data}, origin, tickets=tickets))

    @staticmethod
    def _of_scope(group: dict[tuple[str, str], Noted], scope: str) -> tuple[dict[str, bytes | None], dict[str, Ticket]]:
        updates = {name: data for (where, name), (data, _o, _t) in group.items() if where == scope}
        tickets = {name: t for (where, name), (_d, _o, t) in group.items() if where == scope and t is not None}
        return updates, tickets

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Writes inside this block become one change per scope (a reset or an undo that touches several files)."""
        group: dict[tuple[str, str], Noted] = {}
        token = _group.set(group)
        try:
            yield
        finally:
            _group.reset(token)
            for scope in self.scopes:
                updates, tickets = self._of_scope(group, scope)
                origins = [origin for (where, _n), (_d, origin, _t) in group.items() if where == scope]
                if updates:
                    commit = functools.partial(self.history(scope).commit, updates, origins[-1], tickets=tickets)
                    self._submit(scope, commit)

    @contextmanager
    def merging(self, scope: str, theirs: bytes, origin: Origin) -> Iterator[None]:
        """Writes to `scope` inside this block become one merge change whose second parent is `theirs` (a commit
        fetched from a remote), recorded even when the files did not change."""
        group: dict[tuple[str, str], Noted] = {}
        token = _group.set(group)
        try:
            yield
        finally:
            _group.reset(token)
            updates, tickets = self._of_scope(group, scope)
            history = self.history(scope)
            self._submit(scope, lambda: history.commit(updates, origin, allow_empty=True, merge=theirs,
                                                       tickets=tickets))  # fmt: skip

    def record_external(self, scope: str) -> None:
        """Record whatever changed on disk in `scope` since the last change as made outside the app (blocking: it
        reads the files now, so call it off the event loop)."""
        history = self.history(scope)
        try:  # read now, each file under its lock with its ticket: a write after this is committed after it
            files, tickets = history.disk_files_in_order()
        except OSError as exc:
            self._problem(scope, exc)
            return
        self._submit(scope, lambda: history.record_disk(Origin("external"), files, tickets))

    def start(self) -> None:
        """Record the memory as it is now, for scopes whose history is new or behind the disk."""
        for scope in self.scopes:
            self.record_external(scope)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is committed; False on timeout."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._queue.put(done.set)
        return done.wait(timeout)

    def _submit(self, scope: str, job: Callable[[], object]) -> None:
        def run() -> None:
            try:
                job()
            except Exception as exc:
                self._problem(scope, exc)
            else:
                self.problems.pop(scope, None)

        self._ensure_thread()
        self._queue.put(run)

    def _problem(self, scope: str, exc: Exception) -> None:
        reason = describe(exc)
        log.warning("memory history (%s): %s", scope, reason)
        if scope in self.problems:
            return
        message = (
            f"The {scope} memory history cannot be written ({reason}). Memory itself is saved as usual; "
            f"changes are not recorded until {self.scopes[scope].git_dir} is repaired or moved away."
        )
        self.problems[scope] = message
        if self.on_problem is not None:
            try:
                self.on_problem(scope, message)
            except Exception:
                log.exception("reporting a memory history problem")

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memory-history", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            job()
            del job  # it may hold whole memory files (record_external's): let them go now, not at the next job
