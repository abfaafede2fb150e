"""Merges two versions of a memory file that grew apart from a common one, entry by entry, not line by line.

`merge_file(name, base, ours, theirs)` takes the three versions of ``rules.md``, ``lessons.md`` or ``profile.md``
(bytes, None for no file) and returns the merged bytes, the decisions it took, and what it could not decide. An entry is known
by its text (``- text <!-- metadata -->``: the text without the comment); a changed line whose text is close to the
one it replaced, at the same place, is an edit of that entry. The rules:

- entries added on either side are all kept (the union), at the place the other side had them;
- an entry deleted on one side goes, unless the other side changed it: then the changed entry stays;
- an entry changed on both sides keeps the newer version (its ``ts:`` date, then the newer side) and the other
  version is reported in `notes`, which the caller records in the history;
- the file around the entries (headings, comments, lines that are not entries) is taken from the side that changed
  it; when both changed it differently, or both changed an entry with nothing to tell which is newer, the merge is
  undecidable: `conflicts` says what, and `data` is None (nothing is to be written) unless `prefer` names the side
  that wins such cases.

A file nobody changed comes back byte for byte; lines of the kept side stay exactly as they were.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from pathlib import Path

from anton_tui.memory.engram import RULE_KINDS, parse_lessons_file, parse_profile_file, parse_rules_file

Key = tuple[str, int]  # an entry's text and which occurrence of that text in the file (0 for the first)


@dataclasses.dataclass(frozen=True, slots=True)
class MergeConflict:
    """Something the merge cannot decide: one entry changed on both sides, or the text around the entries."""

    file: str
    reason: str
    ours: str | None = None  # the line on this machine (None: not there)
    theirs: str | None = None  # the line on the other side
    base: str | None = None

    @property
    def id(self) -> str:
        key = f"{self.file}\0{self.base}\0{self.ours}\0{self.theirs}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]

    def describe(self) -> str:
        lines = [f"{self.file}: {self.reason}"]
        if self.ours is not None:
            lines.append(f"  mine:   {self.ours}")
        if self.theirs is not None:
            lines.append(f"  theirs: {self.theirs}")
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True, slots=True)
class MergeResult:
    data: bytes | None  # the merged file (None: no file, or nothing to write because of conflicts)
    conflicts: tuple[MergeConflict, ...] = ()
    notes: tuple[str, ...] = ()  # decisions worth recording: "kept the newer …; the other version was …"

    @property
    def clean(self) -> bool:
        return not self.conflicts


@dataclasses.dataclass(slots=True)
class _Entry:
    key: Key
    section: str | None
    index: int  # line index in its file
    line: str  # the line without its line ending
    text: str
    stamp: str  # the ts: date ("" when none)

    @property
    def value(self) -> tuple[str | None, str]:
        return (self.section, self.line)


@dataclasses.dataclass(slots=True)
class _Doc:
    lines: list[str]
    entries: list[_Entry]
    by_key: dict[Key, _Entry]
    skeleton: tuple[str, ...]  # the lines that are not entries (blank lines and rules headings left out)
    headings: dict[str, int]  # rules: ``## kind`` → line index
    readable: bool


def _parse(name: str, data: bytes | None) -> _Doc:
    data = data or b""
    path = Path(name)
    if name == "rules.md":
        parsed = parse_rules_file(data, path)
    elif name == "lessons.md":
        parsed = parse_lessons_file(data, path)
    else:
        parsed = parse_profile_file(data, path)
    entries: list[_Entry] = []
    seen: dict[str, int] = {}
    rules = name == "rules.md"
    for engram, index in zip(parsed.entries, parsed.entry_lines):
        count = seen.get(engram.text, 0)
        seen[engram.text] = count + 1
        line = parsed.lines[index].rstrip("\r\n")
        stamp = engram.updated_at.strftime("%Y-%m-%d") if engram.updated_at else ""
        entries.append(_Entry((engram.text, count), engram.kind if rules else None, index, line, engram.text, stamp))
    taken = {entry.index for entry in entries}
    skeleton = tuple(
        line.strip()
        for i, line in enumerate(parsed.lines)
        if i not in taken and line.strip() and not (rules and line.strip().startswith("## "))
    )
    return _Doc(parsed.lines, entries, {e.key: e for e in entries}, skeleton, dict(parsed.headings), parsed.writable)


# ---- what one side did to the base ---------------------------------------------------------------------------------


@dataclasses.dataclass(slots=True)
class _Side:
    """What one side did to the base: per base entry, None (deleted), or its entry now (maybe edited); and the
    entries it added."""

    doc: _Doc
    fate: dict[Key, _Entry | None]
    added: list[_Entry]


def _similar(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.6


def _changes(base: _Doc, side: _Doc) -> _Side:
    fate: dict[Key, _Entry | None] = {key: side.by_key.get(key) for key in base.by_key}
    removed = [e.key for e in base.entries if e.key not in side.by_key]
    added = [e for e in side.entries if e.key not in base.by_key]
    if removed and added:
        gone, new = set(removed), {e.key for e in added}
        a = [e.key for e in base.entries]
        b = [e.key for e in side.entries]
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "replace":
                continue
            for old, now in zip(a[i1:i2], b[j1:j2]):
                if old in gone and now in new and _similar(old[0], now[0]):
                    fate[old] = side.by_key[now]
                    new.discard(now)
        added = [e for e in added if e.key in new]
    return _Side(side, fate, added)


# ---- applying the other side's changes to the kept side -------------------------------------------------------------


class _Plan:
    """Edits to the lines of the kept side (the frame): replaced and deleted lines, lines inserted after a line, and
    rules sections the frame lacks."""

    def __init__(self, frame: _Doc) -> None:
        self.frame = frame
        self.replace: dict[int, str] = {}
        self.delete: set[int] = set()
        self.after: dict[int, list[str]] = {}
        self.sections: dict[str, list[str]] = {}

    def insert(self, section: str | None, anchor: int | None, line: str) -> None:
        text = line + "\n"
        if anchor is not None:
            self.after.setdefault(anchor, []).append(text)
            return
        frame = self.frame
        if section is not None and section not in frame.headings:
            self.sections.setdefault(section, []).append(text)
            return
        inside = [e.index for e in frame.entries if e.section == section]
        if inside:
            self.after.setdefault(inside[-1], []).append(text)  # after the section's last entry
        elif section is not None:
            self.after.setdefault(frame.headings[section], []).append(text)
        else:
            self.after.setdefault(len(frame.lines) - 1, []).append(text)

    def render(self) -> str:
        lines = self.frame.lines
        out: list[str] = []

        def emit(extra: list[str]) -> None:
            if extra and out and not out[-1].endswith(("\n", "\r")):
                out[-1] += "\n"
            out.extend(extra)

        emit(self.after.get(-1, []))
        missing = [kind for kind in RULE_KINDS if kind in self.sections]
        later = {kind: [self.frame.headings[k] for k in RULE_KINDS[RULE_KINDS.index(kind) + 1 :]
                        if k in self.frame.headings] for kind in missing}  # fmt: skip
        blocks_before: dict[int, list[str]] = {}
        trailing: list[str] = []
        for kind in missing:
            block = [f"## {kind.capitalize()}\n", *self.sections[kind]]
            if later[kind]:
                blocks_before.setdefault(min(later[kind]), []).extend([*block, "\n"])
            else:
                trailing.append(kind)
        for index, line in enumerate(lines):
            if index in blocks_before:
                emit(blocks_before[index])
            if index not in self.delete:
                out.append(self.replace.get(index, line))
            emit(self.after.get(index, []))
        for kind in trailing:
            if not out:
                out.append("# Rules\n")
            if out[-1].strip():
                emit(["\n"])
            emit([f"## {kind.capitalize()}\n", *self.sections[kind]])
        return "".join(out)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :] or "\n"


def _newer(a: _Entry, b: _Entry, a_time: float, b_time: float) -> int:
    """1 when `a` is newer, -1 when `b` is, 0 when nothing tells."""
    if a.stamp != b.stamp and a.stamp and b.stamp:
        return 1 if a.stamp > b.stamp else -1
    if a_time != b_time:
        return 1 if a_time > b_time else -1
    return 0


def merge_file(
    name: str,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    *,
    ours_time: float = 0.0,
    theirs_time: float = 0.0,
    prefer: str | None = None,
) -> MergeResult:
    """Merge `theirs` into `ours` (both grown from `base`); see the module docstring. `prefer` ("ours" or "theirs")
    decides what otherwise would be a conflict."""
    if ours == theirs or base == theirs:
        return MergeResult(ours)
    if base == ours:
        return MergeResult(theirs)
    b, o, t = _parse(name, base), _parse(name, ours), _parse(name, theirs)
    if not (b.readable and o.readable and t.readable):
        return _whole(name, ours, theirs, prefer, "the file is not valid UTF-8 on one side and changed on both")
    if t.skeleton == b.skeleton or o.skeleton == t.skeleton:
        flipped = False
    elif o.skeleton == b.skeleton:
        flipped = True  # only the other side changed the text around the entries: its lines are the frame
    elif prefer is not None:
        flipped = prefer == "theirs"
    else:
        mine = " | ".join(line for line in o.skeleton if line not in b.skeleton) or "(removed lines)"
        other = " | ".join(line for line in t.skeleton if line not in b.skeleton) or "(removed lines)"
        return MergeResult(None, (MergeConflict(name, "lines that are not entries were changed on both sides",
                                                mine, other),))  # fmt: skip
    if flipped:
        result = _merge(name, b, t, o, theirs_time, ours_time, _flip(prefer), mine_is_frame=False)
    else:
        result = _merge(name, b, o, t, ours_time, theirs_time, prefer, mine_is_frame=True)
    if result.conflicts:
        return result
    data = result.data
    if data == b"" and ours is None and theirs is None:
        data = None
    return dataclasses.replace(result, data=data)


def _flip(prefer: str | None) -> str | None:
    return {"ours": "theirs", "theirs": "ours"}.get(prefer or "")


def _whole(name: str, ours: bytes | None, theirs: bytes | None, prefer: str | None, reason: str) -> MergeResult:
    if prefer == "ours":
        return MergeResult(ours, notes=(f"{name}: kept this machine's version ({reason})",))
    if prefer == "theirs":
        return MergeResult(theirs, notes=(f"{name}: took the other side's version ({reason})",))
    show = lambda data: None if data is None else f"{len(data.splitlines())} lines"  # noqa: E731
    return MergeResult(None, (MergeConflict(name, reason, show(ours), show(theirs)),))


def _merge(
    name: str, base: _Doc, frame: _Doc, other: _Doc, frame_time: float, other_time: float,
    prefer: str | None, *, mine_is_frame: bool,
) -> MergeResult:  # fmt: skip
    """Apply `other`'s changes (against `base`) to the lines of `frame`. `prefer` is in frame/other terms: "ours"
    means the frame's side."""
    mine, yours = _changes(base, frame), _changes(base, other)
    plan = _Plan(frame)
    conflicts: list[MergeConflict] = []
    notes: list[str] = []
    position = {entry.key: i for i, entry in enumerate(other.entries)}
    where: dict[Key, int] = {}  # key of an entry of the other side → the frame line that stands for it
    for key, now in yours.fate.items():
        kept = mine.fate[key]
        if now is not None and kept is not None:
            where[now.key] = kept.index

    def label(frame_side: bool) -> str:
        return "this machine" if frame_side == mine_is_frame else "the other side"

    def put(entry: _Entry, replacing: _Entry | None) -> None:
        """Make the frame hold `entry` (from the other side) instead of `replacing` (a frame entry, or None)."""
        if entry.key != (replacing.key if replacing else None) and entry.key in frame.by_key:
            if replacing is not None:
                plan.delete.add(replacing.index)
            return  # the frame already has this text: one entry, not two
        if replacing is not None and replacing.section == entry.section:
            plan.replace[replacing.index] = entry.line + _ending(frame.lines[replacing.index])
            where[entry.key] = replacing.index
            return
        if replacing is not None:
            plan.delete.add(replacing.index)
        plan.insert(entry.section, _anchor(entry), entry.line)

    def _anchor(entry: _Entry) -> int | None:
        for previous in reversed(other.entries[: position[entry.key]]):
            if previous.section != entry.section:
                continue
            index = where.get(previous.key)
            if index is None and previous.key in frame.by_key:
                index = frame.by_key[previous.key].index
            if index is not None and frame.entries and _section_at(frame, index) == entry.section:
                return index
        return None

    for key, now in yours.fate.items():
        was = base.by_key[key]
        kept = mine.fate[key]
        other_changed = now is None or now.value != was.value
        frame_changed = kept is None or kept.value != was.value
        if not other_changed:
            continue
        if not frame_changed:
            put(now, kept) if now is not None else plan.delete.add(kept.index)  # type: ignore[union-attr]
            continue
        if now is None or kept is None:
            if kept is None and now is not None:  # deleted here, changed there: the changed entry stays
                notes.append(f"{name}: kept an entry {label(True)} deleted, as {label(False)} changed it: {now.line}")
                put(now, None)
            continue
        if now.value == kept.value:
            continue
        order = _newer(kept, now, frame_time, other_time)
        if order == 0 and prefer is not None:
            order = 1 if prefer == "ours" else -1
        if order == 0:
            conflicts.append(_conflict(name, "changed on both sides, neither is newer", was, kept, now, mine_is_frame))
        elif order > 0:
            notes.append(f"{name}: kept the newer version from {label(True)}; the other was: {now.line}")
        else:
            notes.append(f"{name}: kept the newer version from {label(False)}; the other was: {kept.line}")
            put(now, kept)
    for entry in yours.added:
        twin = frame.by_key.get(entry.key)
        if twin is None:
            put(entry, None)
            continue
        if twin.value == entry.value:
            continue
        order = _newer(twin, entry, frame_time, other_time)
        if order == 0 and prefer is not None:
            order = 1 if prefer == "ours" else -1
        if order == 0:
            conflicts.append(_conflict(name, "added on both sides differently, neither is newer", None, twin, entry,
                                       mine_is_frame))  # fmt: skip
        elif order < 0:
            notes.append(f"{name}: kept the newer version from {label(False)}; the other was: {twin.line}")
            put(entry, twin)
        else:
            notes.append(f"{name}: kept the newer version from {label(True)}; the other was: {entry.line}")
    if conflicts:
        return MergeResult(None, tuple(conflicts), tuple(notes))
    return MergeResult(plan.render().encode("utf-8"), (), tuple(notes))


def _section_at(doc: _Doc, index: int) -> str | None:
    section = None
    for kind, start in doc.headings.items():
        if start < index and (section is None or start > doc.headings[section]):
            section = kind
    return section


def _conflict(name: str, reason: str, base: _Entry | None, frame: _Entry, other: _Entry, mine: bool) -> MergeConflict:
    ours, theirs = (frame, other) if mine else (other, frame)
    return MergeConflict(name, reason, ours.line, theirs.line, base.line if base else None)
