"""The first rows of each memory listing, read cheaply from the start of the files, for the inspector to show while the
runtime is still being built.

A listing (`MemoryReads.entries`) parses every file of a kind whole: with tens of thousands of lessons that takes a
good part of a second, on top of building the runtime. The first screenful needs only the start of the files. Lessons
and profile facts are listed in file order, tier after tier (managed, global, project), so the first rows are the
entries of the files' first lines: each file is parsed from its start in growing pieces, cut at a line's end, until
enough entries are found. Rules are listed by kind (always, never, when, then unknown headings), each kind in file
order; the rules parsed from the start of a file come first in the listing up to the kind of the section it ends in,
or of any ``##`` heading further on if that sorts before it; the headings further on are found by a byte search, not
a parse. The rows are the same the full listing starts with, in the same order (tested); nothing else (counts, the
lines that could not be read) is known until the full listing comes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from anton_tui.memory.engrams.engram import (
    RULE_KINDS,
    Engram,
    ParsedFile,
    parse_lessons_file,
    parse_profile_file,
    parse_rules_file,
)
from anton_tui.runtime.memory_reads import EntryListing, ScopeEntries

FIRST_ROWS = 60  # more than a tall terminal shows of a tab's list
FIRST_READ = 32 << 10  # bytes read at first from each file; doubled while more are needed
FILES = {"rules": "rules.md", "lessons": "lessons.md", "profile": "profile.md"}
_HEADING = re.compile(rb"##")

Parser = Callable[[bytes, Path, str], ParsedFile]


@dataclass(frozen=True)
class FirstRows:
    """The first rows of one kind's listing; `complete` when they are all of its entries; `size` is its files' bytes."""

    listing: EntryListing
    complete: bool
    size: int = 0


@dataclass(frozen=True)
class FirstLook:
    """The first rows of the rules, lessons and profile listings."""

    rules: FirstRows
    lessons: FirstRows
    profile: FirstRows

    def of(self, kind_file: str) -> FirstRows:
        return {"rules": self.rules, "lessons": self.lessons, "profile": self.profile}[kind_file]


def rule_order(kind: str) -> tuple[int, str]:
    """Where rules of a kind come in the listing (as `Hippocampus.get_rules` sorts them)."""
    return (RULE_KINDS.index(kind) if kind in RULE_KINDS else len(RULE_KINDS)), kind


def read_first_look(tiers: Sequence[tuple[str, Path]], managed: Path | None, rows: int = FIRST_ROWS) -> FirstLook:
    """The first `rows` rows of each listing; `tiers` are the scopes' memory folders in listing order (global, then
    the project's), `managed` the administrator's folder (it has rules and lessons, listed first)."""
    with_managed = [("managed", managed), *tiers] if managed is not None else list(tiers)
    return FirstLook(
        rules=_first_rows("rules", with_managed, rows),
        lessons=_first_rows("lessons", with_managed, rows),
        profile=_first_rows("profile", list(tiers), rows),
    )


def _first_rows(kind_file: str, tiers: Sequence[tuple[str, Path]], rows: int) -> FirstRows:
    found: list[ScopeEntries] = []
    left, complete, size = rows, True, 0
    for scope, folder in tiers:
        path = folder / FILES[kind_file]
        if left <= 0:
            bytes_in = _size(path)
            complete, size = complete and not bytes_in, size + bytes_in
            found.append(ScopeEntries(scope, path, []))
            continue
        entries, whole, bytes_in = _file_rows(kind_file, path, scope, left)
        found.append(ScopeEntries(scope, path, entries))
        left -= len(entries)
        complete, size = complete and whole, size + bytes_in
    return FirstRows(EntryListing(kind_file, tuple(found)), complete, size)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _file_rows(kind_file: str, path: Path, scope: str, wanted: int) -> tuple[list[Engram], bool, int]:
    """The first `wanted` entries of one file as its listing orders them, whether they are all of them, and the
    file's size."""
    parser: Parser = {"rules": parse_rules_file, "lessons": parse_lessons_file, "profile": parse_profile_file}[
        kind_file
    ]
    try:
        with open(path, "rb") as handle:
            size, amount = os.fstat(handle.fileno()).st_size, FIRST_READ
            while True:
                data = handle.read() if amount >= size else handle.read(amount)
                handle.seek(0)
                whole = amount >= size
                head = data if whole else data[: data.rfind(b"\n") + 1]
                entries = parser(head, path, scope).entries
                if kind_file == "rules":
                    entries = _rules_in_order(entries, None if whole else _kinds_after(head, handle.read()))
                    handle.seek(0)
                if whole or len(entries) >= wanted:
                    return entries[:wanted], whole and len(entries) <= wanted, size
                amount *= 2
    except FileNotFoundError:
        return [], True, 0
    except OSError:
        return [], False, 0  # the full listing says why


def _headings(data: bytes) -> list[str]:
    """The ``##`` headings of rules-file bytes in order, each as the parser reads a heading line (a byte search
    finds the lines that may hold one; only those are parsed)."""
    found = []
    for match in _HEADING.finditer(data):
        begin = data.rfind(b"\n", 0, match.start()) + 1
        if begin < match.start() and data.rfind(b"##", begin, match.start()) >= 0:
            continue  # (a line already looked at)
        end = data.find(b"\n", match.end())
        line = data[begin : len(data) if end < 0 else end]
        headings = parse_rules_file(line, Path(FILES["rules"])).headings
        found.extend(sorted(headings, key=headings.__getitem__))
    return found


def _kinds_after(head: bytes, data: bytes) -> list[str]:
    """The kinds rules after `head` (the start of `data`) can have: the section `head` ends in, and every heading
    further on."""
    before = _headings(head)
    return before[-1:] + _headings(data[len(head) :])


def _rules_in_order(entries: list[Engram], later: list[str] | None) -> list[Engram]:
    """Rules parsed from the start of a file, in listing order, up to where rules further on could come before them
    (`later`: the kinds they can have; None when the whole file was parsed)."""
    ordered = sorted(entries, key=lambda rule: rule_order(rule.kind))
    if later is None:
        return ordered
    if not later:  # no heading yet: whatever follows is the first rule of the listing
        return []
    bound = min(rule_order(kind) for kind in later)
    return [rule for rule in ordered if rule_order(rule.kind) <= bound]
