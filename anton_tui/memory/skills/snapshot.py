"""Remembers the skill listing between runs, so that a new process lists thousands of skills by checking their files'
signatures instead of reading every file.

The snapshot is one text file the app keeps in its own folder of the Anton home (``cache/skill-listing.txt``, a
line per skill: see `save`), never in a skills folder. For each healthy skill folder it holds what a listing shows
of the skill and the signature (inode, size, modification and change time, from `lstat`) of every path that answer
depends on: the folder itself (a file or link added to it, or removed), its SKILL.md or meta.json, its stats.json
and each folder inside it (a link added there). Each signature is taken before what it covers is read, so a change
made while the snapshot was being read shows as a changed signature. A later listing uses an entry only when every
one of its signatures is unchanged, which is also when reading the folder again would give the same answer;
anything else is read as if there were no snapshot.

Left out, and so read afresh by every new process: folders with a link anywhere inside, broken skills, folders with
more than `MAX_FOLDERS` folders inside, and folders changed less than `SETTLE_NS` before the snapshot was written (a
file system that keeps coarse times could show a second change within the same tick as no change).

The file is derived data: one that cannot be read, or was written by another version, is ignored and replaced the
next time the app writes one.
"""

from __future__ import annotations

import json
import json.scanner
import os
import stat as stat_kind
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.skills.format import (
    SkillFormatError,
    SummaryFields,
    check_stats,
    read_front_matter_and_stat,
    read_text_and_stat,
    summary_fields_of_meta,
    summary_fields_of_skill_md,
)

VERSION = 4
KIND = "anton-tui skill listing"
MAX_FOLDERS = 32
"""A skill folder with more folders inside it than this (a checked-out project, say) is read afresh each time."""
SETTLE_NS = 2_000_000_000
_HASHING = f"python {sys.version_info[0]}.{sys.version_info[1]}, {sys.hash_info.width}-bit"
"""Signatures are kept as Python's hash of the four numbers, which this names (a snapshot from another is ignored)."""

_scan_value = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed wants a scanner
"""Parses the JSON value at an offset of a text, giving it and where it ends (one call into C, not three in Python)."""

Signature = int
"""The hash of (inode, size, modification time, change time) of a path, from `lstat`."""
Watched = tuple[tuple[str, Signature], ...]
"""Each path an entry depends on, relative to its skill folder ("" for the folder itself), with its signature."""
SnapshotEntry = tuple[Watched, SummaryFields]


def read_strictly(folder: str) -> tuple[SnapshotEntry, int] | None:
    """The entry of a healthy skill folder, every path it depends on signed before it is read, and the newest change
    time among those paths; None for a folder the snapshot leaves out (see the module's docstring) or one that cannot
    be read."""
    label = os.path.basename(folder)
    watched: list[tuple[str, Signature]] = []
    newest = 0
    top: set[str] = set()
    pending = [""]

    def sign(relative: str, st: os.stat_result) -> None:
        nonlocal newest
        watched.append((relative, hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))))
        newest = max(newest, st.st_ctime_ns)

    try:
        while pending:
            relative = pending.pop()
            path = f"{folder}{os.sep}{relative}" if relative else folder
            st = os.lstat(path)
            if not stat_kind.S_ISDIR(st.st_mode):
                return None
            sign(relative, st)
            with os.scandir(path) as found:
                for item in found:
                    if item.is_symlink():
                        return None
                    if not relative:
                        top.add(item.name)
                    if item.is_dir(follow_symlinks=False):
                        pending.append(f"{relative}{os.sep}{item.name}" if relative else item.name)
                        if len(watched) + len(pending) > MAX_FOLDERS + 1:
                            return None
        fields: SummaryFields
        if "SKILL.md" in top:
            text, st = read_front_matter_and_stat(f"{folder}{os.sep}SKILL.md")
            sign("SKILL.md", st)
            fields = summary_fields_of_skill_md(text, label)
        elif "meta.json" in top and "declarative.md" in top:
            text, st = read_text_and_stat(f"{folder}{os.sep}meta.json")
            sign("meta.json", st)
            fields = summary_fields_of_meta(text, label)
        else:
            return None
        if "stats.json" in top:
            text, st = read_text_and_stat(f"{folder}{os.sep}stats.json")
            sign("stats.json", st)
            check_stats(text)
    except (OSError, SkillFormatError):
        return None
    return (tuple(watched), fields), newest


class Cursor:
    """The entries of one skills folder in a snapshot, read from the file line by line as a listing goes through the
    folder's sub-folders in name order (the file keeps them in the same order: UTF-8 keeps the order of the
    characters), each parsed only when its folder asks for it; so the file is never held whole. The file is opened
    at the first `take` and closed at the end of the folder's lines or by `close`. Were it replaced in between, a line
    read from the new one is still taken only for the folder it names and only when its signatures hold."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self._path = path
        self._at = start
        self._end = end
        self._file: BinaryIO | None = None
        self._ahead: tuple[bytes, bytes] | None = None
        """A line read past the last name asked for: (its name, its entry)."""

    def take(self, name: str) -> Any:
        """The stored entry of the skill folder `name` (see `current`), or None when there is none ahead of the
        cursor (names are asked for in ascending order; one asked for out of order is not found)."""
        wanted = name.encode()
        if self._ahead is not None:
            here, stored = self._ahead
            if here > wanted:
                return None
            self._ahead = None
            if here == wanted:
                return _parsed(stored)
        while self._at < self._end:
            file = self._open()
            line = file.readline() if file is not None else b""
            self._at += len(line)
            here, tab, stored = line.partition(b"\t")
            if not tab or not line.endswith(b"\n") or self._at > self._end:
                break  # (cut short, or not a line of this folder)
            if here > wanted:
                self._ahead = here, stored
                return None
            if here == wanted:
                return _parsed(stored)
        self._at = self._end
        self.close()
        return None

    def _open(self) -> BinaryIO | None:
        if self._file is None:
            try:
                self._file = open(self._path, "rb")  # noqa: SIM115 (kept open across calls; `close` closes it)
                self._file.seek(self._at)
            except OSError:
                return None
        return self._file

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _parsed(stored: bytes) -> Any:
    """The JSON value of an entry's line after its tab (its line break included), or None."""
    try:
        text = stored.decode()
        value, end = _scan_value(text, 0)
    except (UnicodeDecodeError, ValueError, StopIteration):
        return None
    return value if text[end:] == "\n" else None


def load(path: Path, roots: Iterable[str]) -> dict[str, Cursor]:
    """A cursor over the entries of each of `roots` the snapshot at `path` holds (its first two lines read: the
    header and where each skills folder's lines are); nothing when there is no snapshot, or it cannot be read, or it
    was written by another version or another Python."""
    try:
        with open(path, "rb") as file:
            header = file.readline()
            index_line = file.readline()
    except OSError:
        return {}
    if header != _header().encode() + b"\n":
        return {}
    body = len(header) + len(index_line)
    try:
        index = json.loads(index_line)
        return {
            root: Cursor(path, body + start, body + end)
            for root in roots
            if (place := index.get(root)) is not None
            for start, end in (place,)
            if type(start) is int and type(end) is int and 0 <= start <= end
        }
    except (ValueError, TypeError, AttributeError):
        return {}


def load_all(path: Path) -> dict[str, dict[str, str]]:
    """Every entry of the snapshot at `path`, as stored text, by skills folder and skill folder's name (empty as for
    `load`)."""
    try:
        with open(path, "rb") as file:
            header = file.readline()
            index = json.loads(file.readline())
            data = file.read()
    except (OSError, ValueError):
        return {}
    if header != _header().encode() + b"\n" or type(index) is not dict:
        return {}
    found: dict[str, dict[str, str]] = {}
    for root, place in index.items():
        try:
            start, end = place
            section = data[start:end].decode()
        except (TypeError, ValueError):
            continue
        names = found[root] = {}
        for line in section.split("\n"):  # (not `splitlines`, which also breaks at characters a JSON text may hold)
            name, tab, stored = line.partition("\t")
            if tab:
                names[name] = stored
    return found


def current(folder: str, stored: Any) -> tuple[dict[str, Signature], SummaryFields] | None:
    """The signatures (by path, relative to `folder`) and the listing fields of an entry as stored, when it is
    well-formed and every one of its signatures holds; else None."""
    try:
        watched, name, description, when_to_use, kind, invocable, by_user = stored
    except (TypeError, ValueError):
        return None
    if not (type(watched) is list and watched and type(name) is str and type(description) is str):
        return None
    if not (type(when_to_use) is str and type(invocable) is bool and type(by_user) is bool):
        return None
    if kind not in ("skill_md", "anton"):
        return None
    signatures: dict[str, Signature] = {}
    for pair in watched:
        if type(pair) is not list or len(pair) != 2:
            return None
        relative, signature = pair
        if type(relative) is not str or type(signature) is not int:
            return None
        try:
            st = os.lstat(f"{folder}{os.sep}{relative}" if relative else folder)
        except OSError:
            return None
        if hash((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)) != signature:
            return None
        signatures[relative] = signature
    if "" not in signatures or ("SKILL.md" if kind == "skill_md" else "meta.json") not in signatures:
        return None  # (the folder and the file read for it are always signed)
    return signatures, (
        name,
        description,
        when_to_use,
        "skill_md" if kind == "skill_md" else "anton",
        invocable,
        by_user,
    )


def stored_holds(folder: str, stored: str) -> bool:
    """Whether an entry as stored (`load_all`) is well-formed and every signature in it holds."""
    try:
        return current(folder, json.loads(stored)) is not None
    except ValueError:
        return False


def stored_form(entry: SnapshotEntry) -> str:
    """An entry as the file keeps it (what `current` reads, parsed)."""
    watched, fields = entry
    return json.dumps([[list(pair) for pair in watched], *fields], ensure_ascii=False, separators=(",", ":"))


def storable(name: str) -> bool:
    """Whether a skill folder's name can be kept (one printable line without a tab: every valid label is)."""
    return name.isprintable() and "\t" not in name


def _header() -> str:
    return f"{KIND} {VERSION}; signatures: {_HASHING}"


def save(path: Path, roots: dict[str, dict[str, str]]) -> None:
    """Write the snapshot at `path`: a header line; a line saying where each skills folder's lines are (a JSON object
    of its path to the offsets, counted from the end of this line, of its first line and past its last); then, for
    each skills folder, a line of its path (a tab, then the path as JSON, for a reader of the file) and its entries
    in name order, each a line of the folder's name, a tab and the stored entry. Atomic: a reader sees the old file or
    the new one whole. Raises OSError."""
    index: dict[str, list[int]] = {}
    body: list[bytes] = []
    at = 0
    for root, names in roots.items():
        if names:
            title = ("\t" + json.dumps(root, ensure_ascii=False) + "\n").encode()
            lines = "".join(f"{name}\t{names[name]}\n" for name in sorted(names)).encode()
            index[root] = [at + len(title), at + len(title) + len(lines)]
            body += (title, lines)
            at += len(title) + len(lines)
    header = _header().encode() + b"\n"
    index_line = json.dumps(index, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, header + index_line + b"".join(body))
