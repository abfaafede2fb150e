"""Keeps the history of one memory scope in a git repository: every change a commit that says who made it and why.

The repository lives under ``$ANTON_HOME/history`` (``global.git``, ``projects/<hash of the project path>.git``),
never in the memory folder, so nothing appears in the user's project tree or in what Anton reads. Its work tree is
the memory folder (``core.worktree``), so ``git --git-dir=... log -p`` works too. Commits are built straight from
objects with dulwich (imported lazily), without an index or a checkout: each one holds the three memory files
(``rules.md``, ``lessons.md``, ``profile.md``) as they were right after the write.

A commit message is a one-line summary and trailers (``Producer:``, ``Scope:``, ``Session:``, ``Turn:``, ``Why:``,
``Trust:``). ``anton-log.jsonl`` in the git directory lists the same facts per commit so that listing 10,000 changes
does not parse 10,000 objects (`history_index`); it is derived and rebuilt from the commits whenever it does not end
at the head. Trailers are data: the scope of a change is the history that holds it, and a commit brought in from a
remote by a sync is listed as imported (another machine made it), whatever its trailers claim.

Every write holds the scope's `WriterLock` (one writer across processes; git lock files left by a killed writer are
cleared, see `writer`), and commits of one file keep the order of its writes (see `order`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import hashlib
import logging
import re
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import exclusive, lock_path
from anton_tui.memory.history import log_index as history_index
from anton_tui.memory.history.change import Change
from anton_tui.memory.history.order import Ticket, WriteOrder
from anton_tui.memory.history.origin import Origin
from anton_tui.memory.history.writer import HistoryError, WriterLock, clearing_stale_locks

__all__ = ["FILES", "Change", "HistoryError", "ScopeHistory", "format_time", "history_dir", "summarise"]

log = logging.getLogger(__name__)

FILES = ("rules.md", "lessons.md", "profile.md")
BRANCH = b"refs/heads/main"
AUTHOR = b"anton-tui <anton-tui@localhost>"
INDEX = history_index.NAME
_COMMENT = re.compile(r"\s*<!--.*?-->")
_MAYBE_REMOTE = re.compile(rb"^[ \t]*\[[ \t]*(?:remote|include)", re.IGNORECASE | re.MULTILINE)
TRAILERS = ("Producer", "Scope", "Session", "Turn", "Why", "Trust", "Archive")
REGULAR = (0o100644, 0o100755)  # the tree entries a memory file can be: a plain file (git's two modes for one)
LONG = 2000  # lines in both versions of a file above which a summary counts lines instead of diffing them
LOOSE_COMPRESSION = 1  # zlib's fastest level for each recorded version, as git stores loose objects by default


def history_dir(home: Path, scope: str, project_dir: Path | None = None) -> Path:
    """Where the history of a scope is kept (under `home`, never in the project)."""
    if scope == "global":
        return Path(home) / "history" / "global.git"
    digest = hashlib.sha256(str(Path(project_dir or ".").resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(home) / "history" / "projects" / f"{digest}.git"


def format_time(stamp: float) -> str:
    """A change's time as the lists show it."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))


def summarise(files: dict[str, tuple[bytes | None, bytes | None]]) -> str:
    """A one-line summary of what changed: ``lessons.md +1 -0: <first added line>``."""
    parts, first = [], ""
    for name, (old, new) in sorted(files.items()):
        a, b = _lines(old), _lines(new)
        added = removed = 0
        if len(a) + len(b) > LONG:  # a long file: count lines in and out, which is fast (moves are not told apart)
            if a and b:
                before, after = Counter(a), Counter(b)
                gone, came = before - after, after - before
                removed, added = sum(gone.values()), sum(came.values())
                moved = came or gone
                lines: Iterator[str] = (line for line in (b if came else a) if line in moved)
            else:  # a new file, or one emptied: every line came, or went
                removed, added = len(a), len(b)
                lines = iter(b or a)
            told = next((line for line in lines if line.strip() and not line.startswith("#")), None)
            if told is not None and not first:
                first = ("" if added else "removed ") + told.strip().lstrip("- ").strip()
            parts.append(f"{name} deleted" if new is None else f"{name} +{added} -{removed}")
            continue
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            removed += i2 - i1 if tag != "equal" else 0
            added += j2 - j1 if tag != "equal" else 0
            if tag != "equal" and not first:
                shown = [line for line in (b[j1:j2] or a[i1:i2]) if line.strip() and not line.startswith("#")]
                first = ("" if j2 > j1 else "removed ") + shown[0].strip().lstrip("- ").strip() if shown else ""
        if new is None:
            parts.append(f"{name} deleted")
        else:
            parts.append(f"{name} +{added} -{removed}")
    first = _COMMENT.sub("", first).strip()
    if (
        first
    ):  # listed by `memory log` and the History tab: a key in the line stays out, as a sync keeps it off a remote
        from anton_tui.redact import Redactor

        first = Redactor()(first)
    text = ", ".join(parts) + (f": {first}" if first else "")
    return text if len(text) <= 100 else text[:99] + "…"


def _lines(data: bytes | None) -> list[str]:
    return data.decode("utf-8", "replace").splitlines(keepends=True) if data else []


def _message(summary: str, scope: str, origin: Origin) -> bytes:
    values = {
        "Producer": origin.producer, "Scope": scope, "Session": origin.session,
        "Turn": "" if origin.turn is None else str(origin.turn), "Why": origin.why, "Trust": origin.trust,
        "Archive": origin.archive,
    }  # fmt: skip
    trailers = [f"{key}: {' '.join(str(value).split())}" for key, value in values.items() if value]
    return (summary + "\n\n" + "\n".join(trailers) + "\n").encode("utf-8")


def _parse(commit: Any, files: tuple[str, ...], scope: str, *, imported: bool = False) -> Change:
    """The change a commit records; `scope` is the history's own (a ``Scope:`` trailer is not believed)."""
    text = commit.message.decode("utf-8", "replace")
    summary, _, rest = text.partition("\n")
    found: dict[str, str] = {}
    for line in rest.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in TRAILERS:
            found[key] = value
    turn = found.get("Turn", "")
    return Change(
        id=commit.id.decode(), time=float(commit.commit_time), scope=scope,
        producer=found.get("Producer", "app"), summary=summary, session=found.get("Session", ""),
        turn=int(turn) if turn.isdigit() else None, why=found.get("Why", ""), trust=found.get("Trust", ""),
        files=files, archive="" if imported else found.get("Archive", ""), imported=imported,
    )  # fmt: skip


def _changed_names(repo: Any, old: bytes | None, new: bytes) -> tuple[str, ...]:
    """The files whose blobs differ between two commits (compared by id, without reading them)."""

    def blobs(cid: bytes | None) -> dict[bytes, bytes]:
        return {} if cid is None else {e.path: e.sha for e in repo[repo[cid].tree].items()}

    a, b = blobs(old), blobs(new)
    return tuple(sorted(name.decode() for name in set(a) | set(b) if a.get(name) != b.get(name)))


class ScopeHistory:
    """The history repository of one scope. All methods are blocking; the app calls them off the event loop."""

    def __init__(self, git_dir: Path, work_tree: Path, scope: str) -> None:
        self.git_dir = Path(git_dir)
        self.work_tree = Path(work_tree)
        self.scope = scope
        self._repo: Any = None
        self.lock = WriterLock(self.git_dir, scope)
        self.order = WriteOrder(self.git_dir)
        self.clock = time.time  # when a change happened (tests and screenshots fix it)
        self._last: tuple[bytes, dict[str, bytes]] | None = None  # the head this process committed, and its files
        self._swept = False  # the lock files a killed writer left were removed by this process's first commit

    # ---- the repository ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the scope's writer lock: every write to the repository happens inside (see `writer`)."""
        with self.lock.held():
            yield

    def repo(self, create: bool = True) -> Any:
        """The dulwich repository, created on first use (None when it does not exist and `create` is false)."""
        if self._repo is not None:
            return self._repo
        from dulwich.errors import NotGitRepository
        from dulwich.repo import Repo

        try:
            if self._created() or not create:
                self._repo = Repo(str(self.git_dir))
            else:
                with self.writing():  # another process may be creating it this instant
                    if self._created():
                        self._repo = Repo(str(self.git_dir))
                    else:
                        self._clear_interrupted()
                        self._repo = self._create()
        except NotGitRepository as exc:
            if not create:
                return None
            raise HistoryError(f"{self.git_dir} is not a git repository: {exc}") from exc
        except (OSError, ValueError, KeyError) as exc:
            raise HistoryError(f"{self.git_dir} cannot be opened: {exc}") from exc
        self._repo.object_store.loose_compression_level = LOOSE_COMPRESSION
        return self._repo

    def close(self) -> None:
        """Let go of the repository and the pack files it holds open (it is opened again when next needed). A
        process that ends without this leaves dulwich to close them while Python shuts down, which it cannot."""
        repo, self._repo = self._repo, None
        if repo is not None:
            repo.close()

    def _created(self) -> bool:
        """Whether the repository was created whole: its config, written last, names the work tree."""
        try:
            return b"worktree" in (self.git_dir / "config").read_bytes()
        except OSError:
            return False

    def _clear_interrupted(self) -> None:
        """Remove what a creation stopped midway (a kill) left: git's first files, with no object and no ref in
        them yet, so nothing recorded is lost. Anything else in their place is not ours to remove."""
        if not self.git_dir.is_dir():
            return
        for folder in ("objects", "refs"):
            if any(path.is_file() for path in (self.git_dir / folder).rglob("*")):
                raise HistoryError(f"{self.git_dir} is not a memory history (its config names no work tree)")
        for name in ("HEAD", "config", "description", "branches", "hooks", "info", "objects", "refs"):
            path = self.git_dir / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_symlink() or path.exists():
                path.unlink()

    def _create(self) -> Any:
        from dulwich.repo import Repo

        repo: Any = Repo.init_bare(str(self.git_dir))
        repo.refs.set_symbolic_ref(b"HEAD", BRANCH)
        config = repo.get_config()
        config.set((b"core",), b"bare", False)
        config.set((b"core",), b"worktree", str(self.work_tree).encode())
        config.write_to_path()
        return repo

    def may_have_remote(self) -> bool:
        """False when the repository's config names no remote (and includes no other file), read without dulwich;
        True when it may, for `sync_remote.remotes` to say which."""
        try:
            config = (self.git_dir / "config").read_bytes()
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return _MAYBE_REMOTE.search(config) is not None

    def head(self) -> bytes | None:
        repo = self.repo()
        try:
            return repo.refs[BRANCH]
        except KeyError:
            return None

    def files_at(self, commit_id: bytes | str | None) -> dict[str, bytes]:
        """The memory files as a commit holds them (an empty dict for no commit); see `tree_files`."""
        return self.tree_files(commit_id)[0]

    def tree_files(self, commit_id: bytes | str | None) -> tuple[dict[str, bytes], list[str]]:
        """The memory files a commit holds, and what else its tree holds, described (``docs/ (a folder)``).

        Only plain files named as memory files are memory; anything else a tree may hold (a folder, a symbolic
        link, a submodule, another file), as a remote's may, is left out, never read through."""
        if commit_id is None:
            return {}, []
        cid = commit_id.encode() if isinstance(commit_id, str) else commit_id
        last = self._last
        if last is not None and last[0] == cid and all(name in FILES for name in last[1]):
            return dict(last[1]), []  # the commit this process made: its files as they were handed to it
        repo = self.repo()
        files: dict[str, bytes] = {}
        ignored: list[str] = []
        try:
            for entry in repo[repo[cid].tree].items():
                name = entry.path.decode("utf-8", "replace")
                if entry.mode in REGULAR and name in FILES:
                    files[name] = repo[entry.sha].data
                else:
                    ignored.append(_describe_entry(name, entry.mode))
        except (KeyError, ValueError, AttributeError) as exc:
            raise HistoryError(f"change {cid.decode()[:8]} of the {self.scope} memory cannot be read: {exc}") from exc
        return files, ignored

    def disk_files(self) -> dict[str, bytes]:
        """The memory files as they are on disk now."""
        found = {}
        for name in FILES:
            try:
                found[name] = (self.work_tree / name).read_bytes()
            except FileNotFoundError:
                continue
        return found

    def untouched(self) -> bool:
        """No history yet and no memory file ever written here: nothing to record, so nothing to create for it."""
        return not self.git_dir.exists() and not any(_written_ever(self.work_tree / name) for name in FILES)

    def disk_files_in_order(self) -> tuple[dict[str, bytes], dict[str, Ticket]]:
        """The memory files on disk now, each read under its lock with a ticket (see `order`), so a commit of what
        was read keeps its place among the writes of other processes. A file that is not there and was never
        written by our writers (no lock file) gets its ticket without a lock file being made. Without the locks (a
        folder that cannot be written), the files as they are and no tickets."""
        found: dict[str, bytes] = {}
        tickets: dict[str, Ticket] = {}
        for name in FILES:
            path = self.work_tree / name
            if not _written_ever(path):
                ticket = self.order.take(name)
                if not _written_ever(path):
                    if ticket is not None:
                        tickets[name] = ticket
                    continue
                if ticket is not None:  # a writer came meanwhile: its ticket may be older, so read under the lock
                    self.order.drop(name, ticket)
            try:
                with exclusive(path):
                    data = _read_or_none(path)
                    ticket = self.order.take(name)
            except OSError:  # a folder that cannot be written: no lock file, no ticket
                data, ticket = _read_or_none(path), None
            if data is not None:
                found[name] = data
            if ticket is not None:
                tickets[name] = ticket
        return found, tickets

    # ---- recording ---------------------------------------------------------------------------------------------

    def commit(
        self,
        updates: dict[str, bytes | None],
        origin: Origin,
        when: float | None = None,
        *,
        allow_empty: bool = False,
        merge: bytes | None = None,
        tickets: dict[str, Ticket] | None = None,
    ) -> Change | None:
        """Record `updates` (file name → bytes, None for a deleted file) over the head; None when nothing changed.

        `merge`: a commit fetched from a remote whose entries `updates` bring in; it becomes the second parent, and
        the changes it holds that this history lacks are listed in the log before the merge itself. `tickets`: the
        writes' places in their files' order (see `order`): a commit waits for an earlier write of another process
        to be recorded first, and leaves out a file whose newer version already is.
        """
        tickets = dict(tickets or {})
        deadline = time.monotonic() + self.order.wait
        while True:
            with self.writing():
                if not self.order.waiting(tickets) or time.monotonic() > deadline:
                    stale = self.order.superseded(tickets)
                    kept = {name: data for name, data in updates.items() if name not in stale}
                    if updates and not kept and not allow_empty and merge is None:
                        return None  # newer versions of every file are recorded already
                    if not self._swept:  # what a writer killed before this process started left behind
                        self._remove_stale_locks()
                        self._swept = True
                    try:
                        change = self._commit(kept, origin, when, allow_empty=allow_empty, merge=merge)
                    except BaseException:
                        self._remove_stale_locks()  # a write that failed midway (a full disk) leaves some behind
                        raise
                    self.order.recorded(tickets)
                    return change
            time.sleep(0.01)  # another process is recording the write before this one

    def _commit(
        self, updates: dict[str, bytes | None], origin: Origin, when: float | None, *, allow_empty: bool,
        merge: bytes | None,
    ) -> Change | None:  # fmt: skip
        from dulwich.objects import Blob, Commit, Tree

        repo = self.repo()
        for _attempt in range(5):
            parent = self.head()
            cached = self._last
            before = dict(cached[1]) if cached is not None and cached[0] == parent else self.files_at(parent)
            after = dict(before)
            for name, data in updates.items():
                if data is None:
                    after.pop(name, None)
                else:
                    after[name] = data
            if after == before and parent is not None and not allow_empty and merge is None:
                return None
            changed = {n: (before.get(n), after.get(n)) for n in set(before) | set(after)
                       if before.get(n) != after.get(n)}  # fmt: skip
            tree = Tree()
            objects: list[Any] = []
            for name, data in sorted(after.items()):
                blob = Blob.from_string(data)
                objects.append(blob)
                tree.add(name.encode(), 0o100644, blob.id)
            objects.append(tree)
            commit = Commit()
            commit.tree = tree.id
            parents: list[Any] = [parent] if parent is not None else []
            commit.parents = parents + ([merge] if merge is not None else [])
            commit.author = commit.committer = AUTHOR
            now = when if when is not None else self.clock()
            commit.commit_time = commit.author_time = int(now)
            commit.commit_timezone = commit.author_timezone = 0
            summary = summarise(changed) if changed else (origin.why or "nothing changed")
            commit.message = _message(summary, self.scope, origin)
            objects.append(commit)
            self.add_objects(objects)
            if clearing_stale_locks(
                functools.partial(repo.refs.set_if_equals, BRANCH, parent, commit.id), self.git_dir
            ):
                self._last = (commit.id, after)  # the next commit starts from these files without reading them
                change = dataclasses.replace(_parse(commit, tuple(sorted(changed)), self.scope), time=now)
                try:
                    previous = self._append_imported(parent, merge) if merge is not None else parent
                    blobs = {name.decode(): sha.decode() for name, _mode, sha in tree.items()}
                    history_index.append(self.git_dir, change, previous.decode() if previous else None, blobs)
                except OSError as exc:  # the list is derived: it is rebuilt from the commits when it is behind
                    log.warning("the list of %s memory changes could not be updated: %s", self.scope, exc)
                    history_index.forget(self.git_dir)
                return change
        raise HistoryError(f"the {self.scope} memory history kept moving while recording a change")

    def _remove_stale_locks(self) -> None:
        """Remove the git lock files in the repository (hold `writing`: then every one of them is stale)."""
        if not (self.git_dir / "HEAD").exists():
            return
        for folder in ("objects", "refs"):
            for path in (self.git_dir / folder).rglob("*.lock"):
                with contextlib.suppress(OSError):
                    path.unlink()

    def add_objects(self, objects: list[Any]) -> None:
        """Store git objects (hold `writing`)."""
        store = self.repo().object_store
        for obj in objects:
            clearing_stale_locks(functools.partial(store.add_object, obj), self.git_dir)

    def set_ref(self, name: bytes, value: bytes) -> None:
        """Point a ref of the repository at a commit (hold `writing`)."""
        clearing_stale_locks(functools.partial(self.repo().refs.__setitem__, name, value), self.git_dir)

    def record_disk(
        self, origin: Origin, current: dict[str, bytes] | None = None, tickets: dict[str, Ticket] | None = None
    ) -> Change | None:
        """Record the files as they are on disk (read now unless given): an external change, or a first look."""
        current = self.disk_files() if current is None else current
        if self._disk_is_head(current) or (self.head() is None and not current):
            if tickets:  # nothing to record: the writes after these need not wait for them
                with self.writing():
                    self.order.recorded(tickets)
            return None  # known from the list of changes (the first test), without opening the repository
        updates: dict[str, bytes | None] = {name: current.get(name) for name in FILES}
        return self.commit(updates, origin, tickets=tickets)

    # ---- the list of changes -----------------------------------------------------------------------------------

    def head_id(self) -> str | None:
        """The head's commit id, read from the ref file when it can be (no dulwich needed), else from the repository."""
        try:
            return history_index.read_head(self.git_dir)
        except ValueError:
            head = self.head()
            return head.decode() if head is not None else None

    def _disk_is_head(self, current: dict[str, bytes]) -> bool:
        """Whether the files on disk are the head's, answered from the ref file and the list's last line alone."""
        try:
            head = history_index.read_head(self.git_dir)
        except ValueError:
            return False
        if head is None:  # no change yet: nothing to record when there are no files either
            return not current and (self.git_dir / "HEAD").exists()
        known = history_index.last_blobs(self.git_dir, head)
        return known is not None and known == history_index.blob_ids(current)

    def _append_imported(self, parent: bytes | None, merge: bytes) -> bytes | None:
        """List the commits reachable from `merge` and not from `parent` in the list of changes, oldest first, as
        imported; returns the last. In the list a row's ``parent`` is the row before it (for a straight history
        that is the git parent)."""
        from dulwich.walk import ORDER_TOPO

        repo = self.repo()
        entries = list(repo.get_walker(include=[merge], exclude=[parent] if parent else None, order=ORDER_TOPO))
        previous = parent
        for entry in reversed(entries):
            commit = entry.commit
            first = commit.parents[0] if commit.parents else None
            files = _changed_names(repo, first, commit.id)
            history_index.append(self.git_dir, _parse(commit, files, self.scope, imported=True),
                                 previous.decode() if previous else None, self._blob_ids_at(commit))  # fmt: skip
            previous = commit.id
        return previous

    def log(self, limit: int | None = None) -> list[Change]:
        """The changes, newest first (at most `limit`)."""
        if not (self.git_dir / "HEAD").exists():
            return []
        head = self.head_id()
        if head is None:
            return []
        changes = history_index.read(self.git_dir, head)
        if changes is None:
            changes = self._rebuild_index(head.encode())
        changes.reverse()
        return changes[:limit] if limit is not None else changes

    def _rebuild_index(self, head: bytes) -> list[Change]:
        """Walk the commits from `head` and write the list of changes anew (comparing blob ids, not contents)."""
        repo = self.repo()
        chain: list[tuple[Change, str | None, dict[str, str]]] = []
        cid: bytes | None = head
        after: dict[str, str] | None = None
        try:
            while cid is not None:
                commit = repo[cid]
                parent = commit.parents[0] if commit.parents else None
                after = self._blob_ids_at(commit) if after is None else after
                before = self._blob_ids_at(repo[parent]) if parent else {}
                files = tuple(sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n)))
                chain.append((_parse(commit, files, self.scope), parent.decode() if parent else None, after))
                cid, after = parent, before
        except (KeyError, ValueError, AttributeError) as exc:
            raise HistoryError(f"the {self.scope} memory history cannot be read: {exc}") from exc
        chain.reverse()
        with contextlib.suppress(OSError):  # derived: a list that cannot be written is rebuilt next time
            history_index.write(self.git_dir, chain)
        return [change for change, _parent, _blobs in chain]

    def _blob_ids_at(self, commit: Any) -> dict[str, str]:
        tree = self.repo()[commit.tree]
        return {entry.path.decode(): entry.sha.decode() for entry in tree.items()}

    def find(self, prefix: str) -> Change | None:
        """The change whose id starts with `prefix` (None when none does; HistoryError when several do)."""
        prefix = prefix.strip().lower()
        if len(prefix) < 4:
            raise HistoryError("name a change by at least 4 characters of its id")
        found = [change for change in self.log() if change.id.startswith(prefix)]
        if len(found) > 1:
            raise HistoryError(f"{prefix} names {len(found)} changes; give more characters")
        return dataclasses.replace(found[0], scope=self.scope) if found else None

    def versions(self, change_id: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
        """The memory files before and after a change."""
        repo = self.repo()
        commit = repo[change_id.encode()]
        parent = commit.parents[0] if commit.parents else None
        return self.files_at(parent), self.files_at(commit.id)

    def diff(self, change_id: str) -> str:
        """The change as a unified diff of its files."""
        before, after = self.versions(change_id)
        out: list[str] = []
        for name in sorted(set(before) | set(after)):
            if before.get(name) == after.get(name):
                continue
            a, b = _lines(before.get(name)), _lines(after.get(name))
            for line in difflib.unified_diff(a, b, f"a/{name}" if name in before else "/dev/null",
                                             f"b/{name}" if name in after else "/dev/null"):  # fmt: skip
                out.append(line if line.endswith("\n") else line + "\n")
        return "".join(out)


def _written_ever(path: Path) -> bool:
    """Whether a memory file is there, or was ever written by our writers (they leave its lock file)."""
    return path.exists() or lock_path(path).exists()


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _describe_entry(name: str, mode: int) -> str:
    if mode == 0o040000:
        return f"{name}/ (a folder)"
    if mode == 0o120000:
        return f"{name} (a symbolic link)"
    if mode == 0o160000:
        return f"{name} (a submodule)"
    return f"{name} (not a memory file)"
