"""The list of changes kept beside a history repository (``anton-log.jsonl``), so listing needs no walk of commits.

One JSON line per commit, oldest first: the change's facts (`Change`), its parent, and the git blob ids of the
memory files right after it. The list is derived from the repository and trusted only while it agrees with it:
every line's parent must be the line before, and the last line must be the head, read straight from the ref file
(``refs/heads/main``, or ``packed-refs`` after a ``git gc``). Otherwise the caller rebuilds it from the commits.
The blob ids let a caller see that the files on disk are still the head's without opening the repository, so a
fresh ``anton-tui memory log`` neither imports dulwich nor reads a git object when nothing changed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.history.change import Change

NAME = "anton-log.jsonl"
REF = "refs/heads/main"
_TAIL = 16_384  # bytes read from the end of the list to find its last line


@functools.cache
def _row_type() -> type:
    """One line of the list, for msgspec (imported only when the list is read): `Change`'s fields, then the parent
    and the blob ids (None for lines written before blob ids were kept)."""
    import typing

    import msgspec

    hints = typing.get_type_hints(Change)
    fields: list[Any] = [
        (field.name, hints[field.name]) if field.default is dataclasses.MISSING else (field.name, hints[field.name],
                                                                                       field.default)
        for field in dataclasses.fields(Change)
    ]  # fmt: skip
    return msgspec.defstruct("Row", [*fields, ("parent", str | None, None), ("blobs", dict[str, str] | None, None)])


def blob_id(data: bytes) -> str:
    """The id git gives a file holding `data`."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def blob_ids(files: dict[str, bytes]) -> dict[str, str]:
    return {name: blob_id(data) for name, data in sorted(files.items())}


def read_head(git_dir: Path) -> str | None:
    """The commit ``refs/heads/main`` names, read from the ref file or ``packed-refs``; None when there is none yet.
    Raises ValueError when the ref is there but not a plain commit id (then ask the repository)."""
    try:
        text = (git_dir / REF).read_text("ascii").strip()
    except FileNotFoundError:
        text = ""
        try:
            packed = (git_dir / "packed-refs").read_text("ascii")
        except FileNotFoundError:
            return None
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == REF:
                text = sha
                break
        if not text:
            return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    if len(text) != 40 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"{REF} does not hold a commit id")
    return text


def line(change: Change, parent: str | None, blobs: dict[str, str] | None) -> str:
    return json.dumps(change.to_json() | {"parent": parent, "blobs": blobs}) + "\n"


def append(git_dir: Path, change: Change, parent: str | None, blobs: dict[str, str] | None) -> None:
    with open(git_dir / NAME, "a", encoding="utf-8") as handle:
        handle.write(line(change, parent, blobs))


def write(git_dir: Path, rows: Sequence[tuple[Change, str | None, dict[str, str] | None]]) -> None:
    """Replace the list at once (after a rebuild)."""
    atomic_write(git_dir / NAME, "".join(line(change, parent, blobs) for change, parent, blobs in rows).encode())


def forget(git_dir: Path) -> None:
    """Drop the list (one that could not be brought up to date), so the next reader rebuilds it from the commits."""
    try:
        (git_dir / NAME).unlink()
    except OSError:
        pass


def read(git_dir: Path, head: str) -> list[Change] | None:
    """The changes oldest first, or None when the list is missing, torn, or does not end at `head`."""
    import msgspec

    try:
        raw = (git_dir / NAME).read_bytes()
        rows: list[Any] = msgspec.json.decode(b"[" + b",".join(raw.splitlines()) + b"]", type=list[_row_type()])  # type: ignore[misc]  # a struct type made at run time
    except (FileNotFoundError, msgspec.ValidationError, msgspec.DecodeError):
        return None
    names = [field.name for field in dataclasses.fields(Change)]
    changes, seen_parent = [], None
    for row in rows:
        if row.parent != seen_parent:
            return None  # a commit made without the list (another program), or a torn list: rebuild
        seen_parent = row.id
        changes.append(Change(**{name: getattr(row, name) for name in names}))
    return changes if seen_parent == head else None


def last_blobs(git_dir: Path, head: str | None) -> dict[str, str] | None:
    """The blob ids of the files at `head` as the list's last line gives them; None when that line is not the head
    or carries no ids (the caller then asks the repository)."""
    import msgspec

    if head is None:
        return None
    try:
        with open(git_dir / NAME, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL))
            tail = handle.read()
        last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        row: Any = msgspec.json.decode(last, type=_row_type())
    except (OSError, msgspec.ValidationError, msgspec.DecodeError):
        return None
    return row.blobs if row.id == head else None
