"""What one can do with the memory history of a project: list the changes, show one, undo one, reset a scope.

These are the engine's operations behind `anton-tui memory log|show|undo` and the History tab; they take the
`MemoryStores` of a project and block (the app runs them off the event loop). Undo and reset write memory through
`Hippocampus.replace_bytes`, under the same locks as every other write, and are themselves recorded changes.

Undo acts only on what this machine's history recorded itself: a change another machine made, brought in by a sync,
is undone by undoing that sync's change, and an episodic reset's archive is moved back only from the project's own
archive folder, whatever a commit's trailers say.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.history.origin import Origin, producing
from anton_tui.memory.history.repo import Change, HistoryError, ScopeHistory
from anton_tui.memory.history.undo import Conflict, revert
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


def _recorder(stores: MemoryStores):
    if stores.recorder is None:
        raise HistoryError("this project keeps no memory history")
    return stores.recorder


def log(stores: MemoryStores, scope: str | None = None, limit: int | None = None) -> list[Change]:
    """The changes of one scope or both, newest first."""
    return _recorder(stores).log(scope, limit)


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
    if target.imported:
        raise HistoryError(_imported(history, target))
    if target.archive:
        return _restore_episodes(stores, target)
    before, after = history.versions(target.id)
    hc = stores.hippocampus(target.scope)
    names = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    current = history.disk_files()
    conflicts = [c for name in names for c in revert(name, before.get(name), after.get(name), current.get(name))[1]]
    if conflicts:
        return Undone(target, None, tuple(conflicts))
    late: list[Conflict] = []

    def compute(name: str):
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
    """Clear one scope's memory files as Anton's ``/memory reset`` does, as one recorded (and undoable) change.

    ``episodic`` moves the project's episode logs (``*.jsonl``; the ``*_history.json`` files stay, as in Anton) to
    an archive folder beside the project's history, and records that in the project history; undo moves them back.
    """
    if scope == "episodic":
        return _reset_episodes(stores)
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


def _imported(history: ScopeHistory, target: Change) -> str:
    """Why a change another machine made is not undone here, and which change of this machine undoes it."""
    changes = history.log()  # newest first
    newer = changes[: [c.id for c in changes].index(target.id)]
    sync = next((c for c in reversed(newer) if not c.imported), None)
    where = f" (undo {sync.short}, the sync that brought it in)" if sync is not None else ""
    return (f"change {target.short} was made on another machine and came in with a sync; undo acts on this machine's "
            f"own changes{where}")  # fmt: skip


def _archive_root(history: ScopeHistory) -> Path:
    """The project's own folder of episodic archives, beside its history."""
    return history.git_dir.with_name(history.git_dir.stem + "-episodes")


def _reset_episodes(stores: MemoryStores) -> Change | None:
    history = _recorder(stores).history("project")
    files = stores.episodic.session_files()
    if not files:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    archive = _archive_root(history) / stamp
    archive.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.move(str(path), str(archive / path.name))
    why = f"/memory reset episodic: {len(files)} episode logs archived"
    return history.commit({}, Origin("reset", why=why, archive=str(archive)), allow_empty=True)


def _restore_episodes(stores: MemoryStores, target: Change) -> Undone:
    """Move an episodic reset's archived logs back; a log started since gets the archived lines first. Only an archive
    in the project's own archive folder is touched (the change must be this project's, recorded here)."""
    history = _recorder(stores).history("project")
    root = _archive_root(history).resolve()
    archive = Path(target.archive).resolve()
    if target.scope != "project" or archive.parent != root:
        raise HistoryError(f"change {target.short} names an archive outside this project's ({target.archive}); "
                           "nothing was moved")  # fmt: skip
    folder = stores.episodic.episodes_dir
    folder.mkdir(parents=True, exist_ok=True)
    moved = 0
    for path in sorted(archive.glob("*.jsonl")) if archive.is_dir() else []:
        if path.is_symlink() or not path.is_file():
            continue
        destination = folder / path.name
        if destination.exists():
            atomic_write(destination, path.read_bytes() + destination.read_bytes())
            path.unlink()
        else:
            shutil.move(str(path), str(destination))
        moved += 1
    if not moved:
        raise HistoryError(f"the archived episode logs of change {target.short} are no longer in {archive}")
    why = f"undo of {target.short}: {moved} episode logs brought back"
    return Undone(target, history.commit({}, Origin("undo", why=why), allow_empty=True))
