"""Shares a memory scope through a git remote: fetch what others pushed, merge it entry by entry, push the result.

`sync(stores, scope)` is the whole round, blocking (the app runs it off the event loop, the command line directly):

1. whatever is on disk is recorded in the scope's history first;
2. the remote's branch is fetched; if it moved since the last sync, its files are merged into this machine's memory
   with `entry_merge` (base: the remote commit last merged or pushed, kept as ``refs/sync/origin``). The merged files
   are written through `Hippocampus.replace_bytes`, under the usual locks, and recorded as one change of producer
   ``sync`` whose second parent is the remote commit. A merge with undecidable parts writes nothing: the parts wait
   in ``anton-sync-pending.json`` beside the history until the user keeps theirs or takes the other side's
   (`resolve`);
3. every entry of the files to be shared is scanned with the redactor's secret patterns; a hit stops the push and is
   reported (the user edits the entry, or keeps it local with `keep_local`: such entries are never pushed);
4. a new commit holding the files, whose parent is the fetched remote commit, is pushed. Only these snapshots leave
   the machine, never the local history with its every intermediate version. When another machine pushed first, the
   round starts again from the fetch (five times at most); when the remote is unreachable, both sides stay as they
   were and the next sync simply tries again.

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

from anton_tui.memory.history.origin import Origin
from anton_tui.memory.history.repo import FILES, HistoryError, ScopeHistory, summarise
from anton_tui.memory.sync.entry_merge import MergeConflict, merge_file
from anton_tui.memory.sync.remote import Moved, RemoteError, fetch, normalise, push, remotes, set_remote

REMOTE = "origin"
BASE_REF = b"refs/sync/" + REMOTE.encode()
PENDING = "anton-sync-pending.json"
LAST = "anton-sync.json"
LOCAL = "anton-sync-local.json"
ATTEMPTS = 5


@dataclasses.dataclass(frozen=True, slots=True)
class SecretHit:
    """An entry that holds something shaped like a secret; it stops the push."""

    file: str
    line: int
    text: str  # the line with the secret replaced by its marker
    kinds: tuple[str, ...]
    entry_id: str = ""

    def describe(self) -> str:
        return f"{self.file}:{self.line}: {', '.join(self.kinds)} in: {self.text}"


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
    """Sync cannot start: no history for this scope, or no remote."""


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
    set_remote(history.repo(), url, REMOTE)
    return url


def remove_remote(stores: Any, scope: str) -> bool:
    from anton_tui.memory.sync.remote import remove_remote as remove

    history = _history(stores, scope)
    return remove(history.repo(), REMOTE) if (history.git_dir / "HEAD").exists() else False


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
    with exclusive(history.git_dir / "anton-sync"):
        try:
            outcome = _round(stores, history, scope, url, prefer, redactor, before_push)
        except RemoteError as exc:
            outcome = SyncOutcome(scope, "failed", f"{exc}; nothing was lost, the next sync tries again")
        except HistoryError as exc:
            outcome = SyncOutcome(scope, "failed", str(exc))
    return _done(history, outcome)


def _done(history: ScopeHistory, outcome: SyncOutcome) -> SyncOutcome:
    outcome = dataclasses.replace(outcome, time=time.time())
    if (history.git_dir / "HEAD").exists():
        with contextlib.suppress(OSError):
            (history.git_dir / LAST).write_text(json.dumps(outcome.to_json()), encoding="utf-8")
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
    merged_any, notes = False, []
    for _attempt in range(ATTEMPTS):
        theirs = fetch(repo, url, REMOTE)
        base = _ref(repo, BASE_REF)
        if theirs is not None and theirs != base:
            result = _integrate(stores, history, scope, base, theirs, prefer)
            if isinstance(result, SyncOutcome):
                return result
            merged_any, notes = merged_any or result[0], notes + result[1]
            repo.refs[BASE_REF] = theirs
        head = history.head()
        files = _shared_files(history, history.files_at(head))
        if theirs is not None and files == history.files_at(theirs):
            status = "synced" if merged_any else "up to date"
            return SyncOutcome(scope, status, _say(scope, merged_any, False), merged=merged_any, notes=tuple(notes))
        if not files and theirs is None:
            return SyncOutcome(scope, "up to date", f"the {scope} memory is empty; nothing to share yet")
        hits = scan(files, redactor, history.files_at(theirs) if theirs is not None else None)
        if hits:
            message = (f"{len(hits)} {scope} memory entr{'y holds' if len(hits) == 1 else 'ies hold'} a secret; "
                       "nothing was pushed (edit the entry, or keep it local)")  # fmt: skip
            return SyncOutcome(scope, "secret", message, merged=merged_any, secrets=tuple(hits), notes=tuple(notes))
        snapshot = _snapshot(history, files, theirs, scope)
        if before_push is not None:
            before_push()
        try:
            push(repo, url, theirs, snapshot, REMOTE)
        except Moved:
            time.sleep(random.uniform(0.05, 0.4))  # someone pushed first: fetch and merge again
            continue
        repo.refs[BASE_REF] = snapshot
        return SyncOutcome(scope, "synced", _say(scope, merged_any, True), merged=merged_any, pushed=True,
                           notes=tuple(notes))  # fmt: skip
    raise RemoteError(f"{url} kept moving while syncing")


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
    stores: Any, history: ScopeHistory, scope: str, base: bytes | None, theirs: bytes, prefer: str | None
) -> SyncOutcome | tuple[bool, list[str]]:
    """Merge the remote commit `theirs` into the memory on disk; conflicts are kept for later and nothing is written."""
    repo = history.repo()
    base_files = history.files_at(base) if base is not None and base in repo.object_store else {}
    theirs_files = history.files_at(theirs)
    head = history.head()
    ours_time = float(repo[head].commit_time) if head is not None else 0.0
    theirs_time = float(repo[theirs].commit_time)
    disk = history.disk_files()
    conflicts: list[MergeConflict] = []
    plans: dict[str, bytes | None] = {}
    notes: list[str] = []

    def merge(name: str, current: bytes | None) -> Any:
        return merge_file(name, base_files.get(name), current, theirs_files.get(name),
                          ours_time=ours_time, theirs_time=theirs_time, prefer=prefer)  # fmt: skip

    for name in FILES:
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


def _local_ids(history: ScopeHistory) -> set[str]:
    try:
        return set(json.loads((history.git_dir / LOCAL).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return set()


def keep_local(stores: Any, scope: str, entry_ids: list[str]) -> int:
    """Never push these entries (by id, the sha256 of their text); they stay in this machine's memory."""
    history = _history(stores, scope)
    ids = _local_ids(history) | set(entry_ids)
    history.git_dir.mkdir(parents=True, exist_ok=True)
    (history.git_dir / LOCAL).write_text(json.dumps(sorted(ids)), encoding="utf-8")
    return len(ids)


def _shared_files(history: ScopeHistory, files: dict[str, bytes]) -> dict[str, bytes]:
    """The files as they are shared: entries kept local taken out (every other byte as it is)."""
    ids = _local_ids(history)
    if not ids:
        return files
    from anton_tui.memory.sync.entry_merge import split_file

    out = {}
    for name, data in files.items():
        doc = split_file(name, data)
        drop = {entry.index for entry in doc.entries if _id(entry.text) in ids}
        out[name] = data if not drop else "".join(line for i, line in enumerate(doc.lines) if i not in drop).encode()
    return out


def _id(text: str) -> str:
    from anton_tui.memory.engrams.engram import entry_id

    return entry_id(text)


def scan(files: dict[str, bytes], redactor: Any = None, shared: dict[str, bytes] | None = None) -> list[SecretHit]:
    """Every entry that holds something shaped like a secret (or a configured key), file by file.

    Lines the remote already holds (`shared`: its files) are not looked at again: they left with an earlier push,
    scanned then. Every line this push would send for the first time is."""
    from anton_tui.memory.sync.entry_merge import split_file
    from anton_tui.redact import Redactor

    redactor = redactor or Redactor()
    hits: list[SecretHit] = []
    for name in FILES:
        data = files.get(name)
        if not data:
            continue
        known = set((shared or {}).get(name, b"").decode("utf-8", "replace").splitlines(keepends=True))
        doc = split_file(name, data)
        fresh = [(index, line) for index, line in enumerate(doc.lines) if line not in known]
        if not fresh or not redactor.scrub("".join(line for _i, line in fresh)).changed:
            continue
        ids = {entry.index: _id(entry.text) for entry in doc.entries}
        for index, line in fresh:
            scrubbed = redactor.scrub(line)
            if scrubbed.changed:
                hits.append(SecretHit(name, index + 1, scrubbed.text.rstrip("\r\n"), scrubbed.found,
                                      ids.get(index, "")))  # fmt: skip
    return hits


def _snapshot(history: ScopeHistory, files: dict[str, bytes], parent: bytes | None, scope: str) -> bytes:
    """A commit of `files` on top of the remote's `parent`: what this machine shares."""
    from dulwich.objects import Blob, Commit, Tree

    from anton_tui.memory.history.repo import AUTHOR, _message

    repo = history.repo()
    tree = Tree()
    for name, data in sorted(files.items()):
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        tree.add(name.encode(), 0o100644, blob.id)
    repo.object_store.add_object(tree)
    before = history.files_at(parent) if parent is not None else {}
    changed = {n: (before.get(n), files.get(n)) for n in set(before) | set(files) if before.get(n) != files.get(n)}
    commit = Commit()
    commit.tree = tree.id
    commit.parents = [parent] if parent is not None else []
    commit.author = commit.committer = AUTHOR
    commit.commit_time = commit.author_time = int(history.clock())
    commit.commit_timezone = commit.author_timezone = 0
    host = socket.gethostname() or "another machine"
    summary = f"shared from {host}: " + (summarise(changed) if changed else "no changes")  # (fast for long files)
    commit.message = _message(summary[:100], scope, Origin("sync", why=f"shared from {host}"))
    repo.object_store.add_object(commit)
    return commit.id


# ---- undecided merges -----------------------------------------------------------------------------------------------


def _read_pending(history: ScopeHistory) -> dict[str, Any] | None:
    try:
        return json.loads((history.git_dir / PENDING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_pending(history: ScopeHistory, data: dict[str, Any]) -> None:
    (history.git_dir / PENDING).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


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
