"""What one can do with the memory history of a project: list the changes, show one, undo one, reset a scope.

These are the engine's operations behind `anton-tui memory log|show|undo` and the History tab; they take the
`MemoryStores` of a project and block (the app runs them off the event loop). Undo and reset write memory through
`Hippocampus.replace_bytes`, under the same locks as every other write, and are themselves recorded changes.
"""

from __future__ import annotations

import dataclasses
import heapq
import time

from anton_tui.memory.history import Change, HistoryError
from anton_tui.memory.history_undo import Conflict, revert
from anton_tui.memory.origin import producing
from anton_tui.memory.stores import MemoryStores

SCOPES = ("global", "project")


@dataclasses.dataclass(frozen=True, slots=True)
class Undone:
    """What `undo` did: the change undone, the new change that reverted it (None when nothing changed), or the
    parts that cannot be undone automatically (then nothing was written)."""

    target: Change
    change: Change | None = None
    conflicts: tuple[Conflict, ...] = ()

    @property
    def done(self) -> bool:
        return not self.conflicts


def _recorder(stores: MemoryStores):  # noqa: ANN202
    if stores.recorder is None:
        raise HistoryError("this project keeps no memory history")
    return stores.recorder


def log(stores: MemoryStores, scope: str | None = None, limit: int | None = None) -> list[Change]:
    """The changes of one scope or both, newest first."""
    recorder = _recorder(stores)
    recorder.flush()
    scopes = [scope] if scope else list(SCOPES)
    lists = [recorder.history(name).log() for name in scopes]
    merged = list(heapq.merge(*lists, key=lambda change: -change.time))
    return merged[:limit] if limit is not None else merged


def find(stores: MemoryStores, prefix: str) -> Change:
    """The change named by `prefix` in either scope; HistoryError when there is none or more than one."""
    recorder = _recorder(stores)
    recorder.flush()
    found = [change for scope in SCOPES if (change := recorder.history(scope).find(prefix)) is not None]
    if not found:
        raise HistoryError(f"no memory change {prefix!r}: `anton-tui memory log` lists them")
    if len(found) > 1:
        raise HistoryError(f"{prefix} names changes in both scopes; give more characters")
    return found[0]


def show(stores: MemoryStores, prefix: str) -> tuple[Change, str]:
    """A change and its diff."""
    change = find(stores, prefix)
    return change, _recorder(stores).history(change.scope).diff(change.id)


def undo(stores: MemoryStores, prefix: str) -> Undone:
    """Undo a change by a new change; when later changes touched the same lines, report them and write nothing."""
    target = find(stores, prefix)
    recorder = _recorder(stores)
    history = recorder.history(target.scope)
    before, after = history.versions(target.id)
    hc = stores.hippocampus(target.scope)
    names = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    current = history.disk_files()
    conflicts = [c for name in names for c in revert(name, before.get(name), after.get(name), current.get(name))[1]]
    if conflicts:
        return Undone(target, None, tuple(conflicts))
    late: list[Conflict] = []

    def compute(name: str):  # noqa: ANN202
        def run(data: bytes | None) -> bytes | None:
            merged, found = revert(name, before.get(name), after.get(name), data)
            late.extend(found)
            return data if found else merged

        return run

    head = history.head()
    with producing("undo", why=f"undo of {target.short}: {target.summary}"), recorder.grouped():
        for name in names:
            hc.replace_bytes(name, compute(name))
    recorder.flush()
    new_head = history.head()
    change = history.log(limit=1)[0] if new_head != head else None
    return Undone(target, change, tuple(late))


def reset(stores: MemoryStores, scope: str) -> Change | None:
    """Clear one scope's memory files as Anton's ``/memory reset`` does, as one recorded (and undoable) change."""
    recorder = _recorder(stores)
    history = recorder.history(scope)
    hc = stores.hippocampus(scope)
    recorder.record_external(scope)  # whatever the disk holds is in the history first, so undo can bring it back
    recorder.flush()
    head = history.head()
    with producing("reset", why=f"/memory reset {scope}"), recorder.grouped():
        for name in ("rules.md", "lessons.md", "profile.md"):
            hc.replace_bytes(name, lambda _data: None)
    recorder.flush()
    return history.log(limit=1)[0] if history.head() != head else None


def format_time(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))
