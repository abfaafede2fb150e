"""What of a scope's memory files leaves the machine when it is synced, and what is said about what stays.

- Every entry this push would send for the first time is scanned with the redactor's secret patterns; an entry is
  judged whole, all its lines together (see `entry_merge.entry_units`: a PEM key pasted under a lesson is one entry
  from the lesson's line to the key's END line). A hit stops the push (`SecretHit`).
- Entries the user keeps local (`keep_local`, by id) are left out of what is pushed, whole: every line of the entry.
- A file that does not read as UTF-8 (the app shows it read-only until it is fixed) is not pushed: the remote keeps
  its own version of that file.
- A file the user keeps on this machine (`keep_files_local`: the profile, when a scope is shared without it) is
  neither pushed nor merged into, in the same way.

`Told` remembers what was already said about a file that stays local or a remote's entries that are ignored, so each
is said once, not at every sync.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.history.log_index import blob_id
from anton_tui.memory.history.repo import FILES
from anton_tui.memory.sync.entry_merge import entry_units, split_file

LOCAL = "anton-sync-local.json"
LOCAL_FILES = "anton-sync-local-files.json"
TOLD = "anton-sync-told.json"
SHOWN_CHARS = 200


@dataclasses.dataclass(frozen=True, slots=True)
class SecretHit:
    """An entry that holds something shaped like a secret; it stops the push. `line` is the entry's first line, and
    `entry_id` names the whole entry for `keep_local`."""

    file: str
    line: int
    text: str  # the entry with the secret replaced by its marker, on one line
    kinds: tuple[str, ...]
    entry_id: str = ""

    def describe(self) -> str:
        return f"{self.file}:{self.line}: {', '.join(self.kinds)} in: {self.text}"


def readable(data: bytes | None) -> bool:
    """Whether a memory file's bytes read as UTF-8 (the app writes and shares only such files)."""
    if data is None:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# ---- entries kept local ---------------------------------------------------------------------------------------------


def local_ids(git_dir: Path) -> set[str]:
    try:
        return set(json.loads((git_dir / LOCAL).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return set()


def keep_local(git_dir: Path, entry_ids: list[str]) -> int:
    """Never push these entries (by id); they stay in this machine's memory. Returns how many are kept local."""
    ids = local_ids(git_dir) | set(entry_ids)
    git_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(git_dir / LOCAL, json.dumps(sorted(ids)).encode("utf-8"))
    return len(ids)


def local_files(git_dir: Path) -> set[str]:
    """The memory files of this scope that stay on this machine (never pushed, never merged into)."""
    try:
        return set(json.loads((git_dir / LOCAL_FILES).read_text(encoding="utf-8"))) & set(FILES)
    except (OSError, ValueError, TypeError):
        return set()


def keep_files_local(git_dir: Path, names: set[str]) -> None:
    """Keep exactly these memory files on this machine from now on (an empty set shares every file)."""
    git_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(git_dir / LOCAL_FILES, json.dumps(sorted(names & set(FILES))).encode("utf-8"))


def shared_files(
    git_dir: Path, files: dict[str, bytes], remote: dict[str, bytes]
) -> tuple[dict[str, bytes], list[str]]:
    """The files as they are pushed, and the names of those that stay local because they do not read as UTF-8 (the
    remote's version of such a file is pushed back unchanged). Entries kept local are taken out whole; every other
    byte stays as it is. A file kept local (`keep_files_local`) is pushed as the remote has it, or not at all."""
    ids = local_ids(git_dir)
    kept = local_files(git_dir)
    out: dict[str, bytes] = {}
    unreadable: list[str] = []
    for name, data in files.items():
        if name in kept:
            if name in remote:
                out[name] = remote[name]
            continue
        if not readable(data):
            unreadable.append(name)
            if name in remote:
                out[name] = remote[name]
            continue
        if not ids:
            out[name] = data
            continue
        doc = split_file(name, data)
        drop = {i for unit in entry_units(doc) if unit.id in ids for i in range(unit.start, unit.end)}
        out[name] = data if not drop else "".join(line for i, line in enumerate(doc.lines) if i not in drop).encode()
    return out, unreadable


# ---- secrets --------------------------------------------------------------------------------------------------------


def scan(files: dict[str, bytes], redactor: Any = None, shared: dict[str, bytes] | None = None) -> list[SecretHit]:
    """Every entry that holds something shaped like a secret (or a configured key), file by file, each judged whole.

    Entries whose lines the remote already holds all (`shared`: its files) are not looked at again: they left with an
    earlier push, scanned then. Every entry with a line this push would send for the first time is."""
    from anton_tui.redact import Redactor

    redactor = redactor or Redactor()
    hits: list[SecretHit] = []
    for name in FILES:
        data = files.get(name)
        if not data:
            continue
        known = set((shared or {}).get(name, b"").decode("utf-8", "replace").splitlines(keepends=True))
        if not known:  # all of it is new (a first push): the whole file tells at once whether any entry needs a look
            if not redactor.scrub(data.decode("utf-8", "replace")).changed:
                continue
            doc = split_file(name, data)
            lines = doc.lines
            fresh = entry_units(doc)
        else:
            doc = split_file(name, data)
            lines = doc.lines
            if all(line in known for line in lines):
                continue
            fresh = [u for u in entry_units(doc) if any(lines[i] not in known for i in range(u.start, u.end))]
            if not fresh or not redactor.scrub("".join("".join(lines[u.start : u.end]) for u in fresh)).changed:
                continue
        for unit in fresh:
            scrubbed = redactor.scrub("".join(lines[unit.start : unit.end]))
            if scrubbed.changed:
                shown = " ".join(scrubbed.text.split())
                shown = shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 1] + "…"
                hits.append(SecretHit(name, unit.start + 1, shown, scrubbed.found, unit.id))
    return hits


# ---- said once ------------------------------------------------------------------------------------------------------


class Told:
    """What was said already about one scope's sync, so it is said once (kept in ``anton-sync-told.json``)."""

    def __init__(self, git_dir: Path) -> None:
        self.path = Path(git_dir) / TOLD
        try:
            self._said = set(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            self._said = set()
        self._new: set[str] = set()

    def first_time(self, key: str) -> bool:
        """True the first time `key` comes (it is then remembered once `save` is called)."""
        if key in self._said or key in self._new:
            return False
        self._new.add(key)
        return True

    def save(self) -> None:
        if not self._new:
            return
        try:
            atomic_write(self.path, json.dumps(sorted(self._said | self._new)).encode("utf-8"))
        except OSError:
            return  # said again next time rather than not at all
        self._said |= self._new
        self._new.clear()


def unreadable_key(name: str, data: bytes) -> str:
    return f"unreadable {name} {blob_id(data)}"
