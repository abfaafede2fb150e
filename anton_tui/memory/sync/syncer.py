"""Shares a memory scope through a git remote: fetch what others pushed, merge it entry by entry, push the result.

`sync(stores, scope)` is the whole round, blocking (the app runs it off the event loop, the command line directly):

1. whatever is on disk is recorded in the scope's history first;
2. the remote's branch is fetched; if it moved since the last sync, its files are merged into this machine's memory
   with `entry_merge` (base: the remote commit last merged or pushed, kept as ``refs/sync/origin``). The merged files
   are written through `Hippocampus.replace_bytes`, under the usual locks, and recorded as one change of producer
   ``sync`` whose second parent is the remote commit. A merge with undecidable parts writes nothing: the parts wait
   in ``anton-sync-pending.json`` beside the history until the user keeps theirs or takes the other side's
   (`resolve`);
3. every entry of the files to be shared is scanned, whole, with the redactor's secret patterns; a hit stops the
   push and is reported (the user edits the entry, or keeps it local with `keep_local`: such entries are never
   pushed, not one of their lines); see `sharing`;
4. a new commit holding the files, whose parent is the fetched remote commit, is pushed. Only these snapshots leave
   the machine, never the local history with its every intermediate version. When another machine pushed first, the
   round starts again from the fetch (five times at most); when the remote is unreachable, both sides stay as they
   were and the next sync simply tries again.

What comes from a remote is data. Of its tree only plain files named ``rules.md``, ``lessons.md`` and ``profile.md``
are memory; anything else (a folder, a symbolic link, another file) is ignored, said once, and kept as it is in what
is pushed back. A file that does not read as UTF-8 is never written from a remote, and one on this machine is never
pushed nor merged into: it stays as it is, and that is said once too.

The outcome of the last sync of each scope is kept in ``anton-sync.json`` beside its history, for the header.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.history.origin import Origin
from anton_tui.memory.history.repo import FILES, HistoryError, ScopeHistory, summarise
from anton_tui.memory.history.writer import clearing_stale_locks, describe
from anton_tui.memory.sync import sharing
from anton_tui.memory.sync.entry_merge import MergeConflict, merge_file
from anton_tui.memory.sync.remote import Moved, RemoteError, fetch, normalise, push, remotes, set_remote
from anton_tui.memory.sync.sharing import SecretHit, Told, readable, scan, unreadable_key

__all__ = [
    "MergeConflict", "SecretHit", "SyncError", "SyncOutcome", "add_remote", "keep_local", "last_outcome",
    "managed_pull", "pending", "remote_of", "remove_remote", "resolve", "scan", "shared_scopes", "sync",
]  # fmt: skip

REMOTE = "origin"
BASE_REF = b"refs/sync/" + REMOTE.encode()
TRACKING = b"refs/remotes/" + REMOTE.encode() + b"/main"
PENDING = "anton-sync-pending.json"
LAST = "anton-sync.json"
ATTEMPTS = 5


@dataclasses.dataclass(frozen=True, slots=True)
class SyncOutcome:
    """What one sync of one scope did. `status`: synced, up to date, conflicts, secret, failed, no remote."""

    scope: str
    status: str
    message: str
    time: float = 0.0
    merged: bool = False  # something from the remote was brought in
    pushed: bool = False
    conflicts: tuple[MergeConflict, ...] = ()
    secrets: tuple[SecretHit, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status in ("synced", "up to date")

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "status": self.status, "message": self.message, "time": self.time}


class SyncError(Exception):
    """Sync cannot start or its remote cannot be changed: no history for this scope, or a home that cannot be
    written (the message says so in one line)."""


def _history(stores: Any, scope: str) -> ScopeHistory:
    if stores.recorder is None:
        raise SyncError("sharing memory needs its history, which is turned off here")
    stores.recorder.flush()  # the recorder's thread may be creating the repository right now
    return stores.recorder.history(scope)


# ---- remotes --------------------------------------------------------------------------------------------------------


def add_remote(stores: Any, scope: str, url: str) -> str:
    """Share `scope` through `url` (replacing an earlier remote); returns the address as stored."""
    history = _history(stores, scope)
    url = normalise(url)
    try:
        with history.writing():
            repo = history.repo()
            clearing_stale_locks(lambda: set_remote(repo, url, REMOTE), history.git_dir)
    except HistoryError as exc:
        raise SyncError(str(exc)) from exc
    except OSError as exc:
        raise SyncError(f"the {scope} memory's remote cannot be set: {describe(exc)}") from exc
    return url


def remove_remote(stores: Any, scope: str) -> bool:
    from anton_tui.memory.sync.remote import remove_remote as remove

    history = _history(stores, scope)
    if not (history.git_dir / "HEAD").exists():
        return False
    try:
        with history.writing():
            repo = history.repo()
            return clearing_stale_locks(lambda: remove(repo, REMOTE), history.git_dir)
    except HistoryError as exc:
        raise SyncError(str(exc)) from exc
    except OSError as exc:
        raise SyncError(f"the {scope} memory's remote cannot be removed: {describe(exc)}") from exc


def remote_of(stores: Any, scope: str) -> str | None:
    if stores.recorder is None:
        return None
    history = stores.recorder.history(scope)
    if not (history.git_dir / "HEAD").exists() or not history.may_have_remote():
        return None  # no remote, known without opening the repository (dulwich stays unloaded)
    return remotes(history.repo()).get(REMOTE)


def shared_scopes(stores: Any) -> dict[str, str]:
    """The scopes that have a remote: scope → URL."""
    return {scope: url for scope in ("global", "project") if (url := remote_of(stores, scope))}


# ---- the round ------------------------------------------------------------------------------------------------------


def sync(
    stores: Any,
    scope: str,
    *,
    prefer: str | None = None,
    redactor: Any = None,
    before_push: Callable[[], None] | None = None,
) -> SyncOutcome:
    """One round of fetch, merge and push for `scope` (see the module docstring). Never raises for remote trouble:
    the outcome says what happened."""
    from anton_tui.memory.files.locking import exclusive

    history = _history(stores, scope)
    url = remote_of(stores, scope)
    if url is None:
        return _done(history, SyncOutcome(scope, "no remote", f"the {scope} memory has no remote"))
    try:
        with exclusive(history.git_dir / "anton-sync"):
            outcome = _round(stores, history, scope, url, prefer, redactor, before_push)
    except RemoteError as exc:
        outcome = SyncOutcome(scope, "failed", f"{exc}; nothing was lost, the next sync tries again")
    except HistoryError as exc:
        outcome = SyncOutcome(scope, "failed", str(exc))
    except OSError as exc:  # a home that cannot be written, a full disk
        outcome = SyncOutcome(scope, "failed", f"the {scope} memory cannot be synced here: {describe(exc)}")
    return _done(history, outcome)


def _done(history: ScopeHistory, outcome: SyncOutcome) -> SyncOutcome:
    outcome = dataclasses.replace(outcome, time=time.time())
    if (history.git_dir / "HEAD").exists():
        with contextlib.suppress(OSError):
            atomic_write(history.git_dir / LAST, json.dumps(outcome.to_json()).encode("utf-8"))
    return outcome


def last_outcome(stores: Any, scope: str) -> dict[str, Any] | None:
    if stores.recorder is None:
        return None
    try:
        return json.loads((stores.recorder.history(scope).git_dir / LAST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _round(
    stores: Any, history: ScopeHistory, scope: str, url: str, prefer: str | None, redactor: Any,
    before_push: Callable[[], None] | None,
) -> SyncOutcome:  # fmt: skip
    recorder = stores.recorder
    recorder.record_external(scope)
    recorder.flush()
    repo = history.repo()
    told = Told(history.git_dir)
    merged_any = False
    notes: list[str] = []
    try:
        for _attempt in range(ATTEMPTS):
            with history.writing():
                theirs = clearing_stale_locks(lambda: fetch(repo, url, REMOTE), history.git_dir)
                if theirs is not None:
                    history.set_ref(TRACKING, theirs)
            base = _ref(repo, BASE_REF)
            if theirs is not None and theirs != base:
                result = _integrate(stores, history, scope, base, theirs, prefer, told)
                if isinstance(result, SyncOutcome):
                    return result
                merged_any, notes = merged_any or result[0], notes + result[1]
                with history.writing():
                    history.set_ref(BASE_REF, theirs)
            local = history.files_at(history.head())
            remote = history.files_at(theirs) if theirs is not None else {}
            files, unreadable = sharing.shared_files(history.git_dir, local, remote)
            notes += [_stays_local(name) for name in unreadable if told.first_time(unreadable_key(name, local[name]))]
            if theirs is not None and files == remote:
                status = "synced" if merged_any else "up to date"
                return SyncOutcome(scope, status, _say(scope, merged_any, False), merged=merged_any,
                                   notes=tuple(notes))  # fmt: skip
            if not files and theirs is None:
                return SyncOutcome(scope, "up to date", f"the {scope} memory is empty; nothing to share yet",
                                   notes=tuple(notes))  # fmt: skip
            hits = scan(files, redactor, remote if theirs is not None else None)
            if hits:
                message = (f"{len(hits)} {scope} memory entr{'y holds' if len(hits) == 1 else 'ies hold'} a secret; "
                           "nothing was pushed (edit the entry, or keep it local)")  # fmt: skip
                return SyncOutcome(scope, "secret", message, merged=merged_any, secrets=tuple(hits),
                                   notes=tuple(notes))  # fmt: skip
            snapshot = _snapshot(history, files, theirs, scope)
            if before_push is not None:
                before_push()
            try:
                push(repo, url, theirs, snapshot, REMOTE)
            except Moved:
                time.sleep(random.uniform(0.05, 0.4))  # someone pushed first: fetch and merge again
                continue
            with history.writing():
                history.set_ref(TRACKING, snapshot)
                history.set_ref(BASE_REF, snapshot)
            return SyncOutcome(scope, "synced", _say(scope, merged_any, True), merged=merged_any, pushed=True,
                               notes=tuple(notes))  # fmt: skip
    finally:
        told.save()
    raise RemoteError(f"{url} kept moving while syncing")


def _stays_local(name: str) -> str:
    return f"{name} is not valid UTF-8 here, so it stays on this machine (not pushed, not merged) until it is fixed"


def _ref(repo: Any, name: bytes) -> bytes | None:
    try:
        return repo.refs[name]
    except KeyError:
        return None


def _say(scope: str, merged: bool, pushed: bool) -> str:
    if merged and pushed:
        return f"the {scope} memory took in the remote's changes and shared its own"
    if merged:
        return f"the {scope} memory took in the remote's changes"
    if pushed:
        return f"the {scope} memory shared its changes"
    return f"the {scope} memory is the same as the remote's"


def _integrate(
    stores: Any, history: ScopeHistory, scope: str, base: bytes | None, theirs: bytes, prefer: str | None,
    told: Told,
) -> SyncOutcome | tuple[bool, list[str]]:  # fmt: skip
    """Merge the remote commit `theirs` into the memory on disk; conflicts are kept for later and nothing is written.

    The remote's tree is data: only its plain memory files are read (the rest is ignored, said once), and a file of
    it that is not valid UTF-8 is not taken; a file on disk that is not valid UTF-8 is left exactly as it is."""
    repo = history.repo()
    base_files, base_ignored = (history.tree_files(base) if base is not None and base in repo.object_store
                                else ({}, []))  # fmt: skip
    theirs_files, ignored = history.tree_files(theirs)
    head = history.head()
    ours_time = float(repo[head].commit_time) if head is not None else 0.0
    theirs_time = float(repo[theirs].commit_time)
    disk = history.disk_files()
    conflicts: list[MergeConflict] = []
    plans: dict[str, bytes | None] = {}
    notes: list[str] = []
    fresh = [entry for entry in ignored if entry not in base_ignored and told.first_time(f"ignored {entry}")]
    if fresh:
        notes.append(f"the remote also holds {', '.join(fresh)}, which memory does not use; ignored")
    for name in FILES:
        if not readable(theirs_files.get(name)):
            data = theirs_files[name]
            if told.first_time(f"remote {unreadable_key(name, data)}"):
                notes.append(f"the remote's {name} is not valid UTF-8; it was not taken (this machine's stays)")
            instead = base_files.get(name, disk.get(name))  # as if the remote had not changed it
            if instead is None:
                del theirs_files[name]
            else:
                theirs_files[name] = instead

    def merge(name: str, current: bytes | None) -> Any:
        return merge_file(name, base_files.get(name), current, theirs_files.get(name),
                          ours_time=ours_time, theirs_time=theirs_time, prefer=prefer)  # fmt: skip

    for name in FILES:
        if not readable(disk.get(name)):
            plans[name] = disk.get(name)  # stays as it is; said when the push leaves it out
            continue
        result = merge(name, disk.get(name))
        conflicts += result.conflicts
        notes += result.notes
        plans[name] = result.data
    if conflicts:
        _write_pending(history, {"theirs": theirs.decode(), "base": base.decode() if base else None,
                                 "conflicts": [dataclasses.asdict(c) | {"id": c.id} for c in conflicts]})  # fmt: skip
        message = (f"{len(conflicts)} change{'s' if len(conflicts) != 1 else ''} to the {scope} memory cannot be "
                   "merged automatically; nothing was written (resolve them in the History tab)")  # fmt: skip
        return SyncOutcome(scope, "conflicts", message, conflicts=tuple(conflicts), notes=tuple(notes))
    _clear_pending(history)
    hc = stores.hippocampus(scope)
    late: list[MergeConflict] = []

    def compute(name: str) -> Callable[[bytes | None], bytes | None]:
        def run(current: bytes | None) -> bytes | None:
            if current == disk.get(name):
                return plans[name]
            if not readable(current):
                return current  # made unreadable meanwhile: left as it is
            result = merge(name, current)  # written meanwhile (a turn saved a lesson): merge with that
            late.extend(result.conflicts)
            return current if result.conflicts else result.data

        return run

    why = "; ".join(notes)[:1000] or "entries merged from the remote"
    origin = Origin("sync", why=why)
    recorder = stores.recorder
    with recorder.merging(scope, theirs, origin):
        for name in FILES:
            if plans[name] != disk.get(name):
                hc.replace_bytes(name, compute(name))
    recorder.flush()
    changed = any(plans[name] != disk.get(name) for name in FILES)
    return changed or bool(theirs_files != base_files), notes


# ---- what is shared -------------------------------------------------------------------------------------------------


def keep_local(stores: Any, scope: str, entry_ids: list[str]) -> int:
    """Never push these entries (by id: `SecretHit.entry_id`), not one of their lines; they stay in this machine's
    memory."""
    history = _history(stores, scope)
    try:
        return sharing.keep_local(history.git_dir, entry_ids)
    except OSError as exc:
        raise SyncError(f"the entries to keep local cannot be noted: {describe(exc)}") from exc


def _snapshot(history: ScopeHistory, files: dict[str, bytes], parent: bytes | None, scope: str) -> bytes:
    """A commit of `files` on top of the remote's `parent`: what this machine shares. Whatever else the remote's tree
    holds (a folder of notes, say) is kept as it is."""
    from dulwich.objects import Blob, Commit, Tree

    from anton_tui.memory.history.repo import AUTHOR, _message

    repo = history.repo()
    tree = Tree()
    objects: list[Any] = []
    if parent is not None:
        for entry in repo[repo[parent].tree].items():
            if entry.path.decode("utf-8", "replace") not in files:
                tree.add(entry.path, entry.mode, entry.sha)
    for name, data in sorted(files.items()):
        blob = Blob.from_string(data)
        objects.append(blob)
        tree.add(name.encode(), 0o100644, blob.id)
    objects.append(tree)
    before = history.files_at(parent) if parent is not None else {}
    changed = {n: (before.get(n), files.get(n)) for n in set(before) | set(files) if before.get(n) != files.get(n)}
    commit = Commit()
    commit.tree = tree.id
    parents: list[Any] = [parent] if parent is not None else []
    commit.parents = parents
    commit.author = commit.committer = AUTHOR
    commit.commit_time = commit.author_time = int(history.clock())
    commit.commit_timezone = commit.author_timezone = 0
    host = socket.gethostname() or "another machine"
    summary = f"shared from {host}: " + (summarise(changed) if changed else "no changes")  # (fast for long files)
    commit.message = _message(summary[:100], scope, Origin("sync", why=f"shared from {host}"))
    objects.append(commit)
    with history.writing():
        history.add_objects(objects)
    return commit.id


# ---- undecided merges -----------------------------------------------------------------------------------------------


def _read_pending(history: ScopeHistory) -> dict[str, Any] | None:
    try:
        return json.loads((history.git_dir / PENDING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_pending(history: ScopeHistory, data: dict[str, Any]) -> None:
    atomic_write(history.git_dir / PENDING, json.dumps(data, ensure_ascii=False).encode("utf-8"))


def _clear_pending(history: ScopeHistory) -> None:
    with contextlib.suppress(FileNotFoundError):
        (history.git_dir / PENDING).unlink()


def pending(stores: Any, scope: str) -> list[MergeConflict]:
    """The parts of the last sync of `scope` that wait for the user to decide (empty when none)."""
    if stores.recorder is None:
        return []
    data = _read_pending(stores.recorder.history(scope))
    if not data:
        return []
    fields = {f.name for f in dataclasses.fields(MergeConflict)}
    return [MergeConflict(**{k: v for k, v in item.items() if k in fields}) for item in data.get("conflicts", [])]


def resolve(stores: Any, scope: str, prefer: str, *, redactor: Any = None) -> SyncOutcome:
    """Decide the waiting parts of `scope`'s merge for this machine ("ours") or the other side ("theirs"), then
    finish the sync."""
    if prefer not in ("ours", "theirs"):
        raise ValueError("resolve with 'ours' (keep mine) or 'theirs' (take theirs)")
    return sync(stores, scope, prefer=prefer, redactor=redactor)


def managed_pull(folder: Path) -> SyncOutcome:
    """Bring a managed memory folder that is a clone up to date (pull only)."""
    from anton_tui.memory.sync.remote import pull_clone

    try:
        said = pull_clone(folder)
    except RemoteError as exc:
        return SyncOutcome("managed", "failed", str(exc), time=time.time())
    return SyncOutcome("managed", "synced" if said == "updated" else "up to date", f"the managed memory is {said}",
                       time=time.time(), merged=said == "updated")  # fmt: skip
