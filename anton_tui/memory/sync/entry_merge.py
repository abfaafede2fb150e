"""Merges two versions of a memory file that grew apart from a common one, entry by entry, not line by line.

`merge_file(name, base, ours, theirs)` takes the three versions of ``rules.md``, ``lessons.md`` or ``profile.md``
(bytes, None for no file) and returns the merged bytes, the decisions it took, and what it could not decide. An entry
is known by its text (``- text <!-- metadata -->``: the text without the comment); a changed line whose text is close
to the one it replaced, at the same place, is an edit of that entry. The rules:

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
import re
from collections.abc import Callable

from anton_tui.memory.engrams.engram import RULE_KINDS

Key = str  # an entry's text, with ``\0<n>`` added for the n-th repeat of the same text in one file


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


_BLANK, _OTHER, _HEADING, _ENTRY = range(4)


def split_file(name: str, data: bytes | None, cache: dict[str, tuple[int, str, str]] | None = None) -> _Doc:
    """Split a memory file into entries as `engram`'s parsers read it (same rules, line by line), without building
    engrams. `cache` keeps what each line is across the versions of one merge: most lines are in all three."""
    data = data or b""
    try:
        text = data.decode("utf-8")
        readable = True
    except UnicodeDecodeError:
        text, readable = data.decode("utf-8", "replace"), False
    lines = text.splitlines(keepends=True)
    cache = {} if cache is None else cache
    kind = "r" if name == "rules.md" else "l" if name == "lessons.md" else "p"
    rules = kind == "r"
    entries: list[_Entry] = []
    seen: dict[str, int] = {}
    headings: dict[str, int] = {}
    skeleton: list[str] = []
    heading: str | None = None
    for index, line in enumerate(lines):
        found = cache.get(line)
        if found is None:
            found = cache[line] = _classify(line, kind)
        what, value, bare = found
        if what == _BLANK:
            continue
        if what == _HEADING:
            heading = value
            headings.setdefault(value, index)
            continue
        if what == _OTHER or (rules and heading is None):
            skeleton.append(line.strip())
            continue
        count = seen.get(value, 0)
        seen[value] = count + 1
        key = value if not count else f"{value}\0{count}"
        entries.append(_Entry(key, heading if rules else None, index, bare, value))
    return _Doc(lines, entries, {e.key: e for e in entries}, tuple(skeleton), headings, readable)


@dataclasses.dataclass(frozen=True, slots=True)
class EntryUnit:
    """Lines of a file that are one entry wherever the file is judged as a whole (scanned for secrets, held back,
    pushed): lines ``start`` to ``end`` (not included), named by `id` (`engram.entry_id` of the entry's text, or of
    the lines' text when they start with no entry)."""

    start: int
    end: int
    id: str


_ARMOUR = re.compile(r"-----(BEGIN|END) [A-Z0-9 ]+-----")


def entry_units(doc: _Doc) -> list[EntryUnit]:
    """The file's lines grouped into entries that span lines: an entry runs from its line through the lines that
    continue it (neither blank, nor a heading, nor an entry of their own), and everything from an armour line
    (``-----BEGIN … PRIVATE KEY-----``) to its ``-----END …-----`` belongs to the entry it starts in, whatever those
    lines look like (in profile.md every line is a fact of its own, so a key pasted there is still one entry). A
    heading is an entry of its own; blank lines belong to none."""
    from anton_tui.memory.engrams.engram import entry_id

    lines = doc.lines
    texts = {entry.index: entry.text for entry in doc.entries}
    units: list[EntryUnit] = []
    start: int | None = None
    ident = ""
    armoured = False

    def close(end: int) -> None:
        if start is not None:
            units.append(EntryUnit(start, end, ident or entry_id("".join(lines[start:end]).strip())))

    for index, line in enumerate(lines):
        if not armoured:
            stripped = line.strip()
            if index in texts:
                close(index)
                start, ident = index, entry_id(texts[index])
            elif not stripped:
                close(index)
                start = None
            elif stripped.startswith("#"):
                close(index)
                start, ident = index, ""
                close(index + 1)
                start = None
            elif start is None:
                start, ident = index, ""
        if "-----" in line:
            for marker in _ARMOUR.finditer(line):
                armoured = marker.group(1) == "BEGIN"
            if armoured and start is None:
                start, ident = index, ""
    close(len(lines))
    return units


def _classify(line: str, kind: str) -> tuple[int, str, str]:
    """What one line is (see `engram.parse_*_file`): blank, other text, a rules heading, or an entry and its text."""
    what, text = _what(line, kind)
    return what, text, line.rstrip("\r\n")


def _what(line: str, kind: str) -> tuple[int, str]:
    stripped = line.strip()
    if not stripped:
        return (_BLANK, "")
    if kind == "r":
        if stripped.startswith("## "):
            return (_HEADING, stripped[3:].strip().lower())
        if stripped.startswith("#") or not stripped.startswith("- "):
            return (_OTHER, "")
        found = _text(stripped[2:])
    elif kind == "l":
        if not (line.startswith(("- ", "  "))):
            return (_OTHER, "")
        found = _text(stripped).removeprefix("- ")
        found = "" if found == "-" else found
    else:
        if stripped.startswith("#"):
            return (_OTHER, "")
        found = stripped[2:].strip() if stripped.startswith("- ") else stripped
    return (_ENTRY, found) if found else (_OTHER, "")


_COMMENT = re.compile(r"\s*<!--([^>]*)-->\s*$")


def _text(body: str) -> str:
    """An entry's text without its metadata comment, as `engram.split_entry` reads it."""
    if "<!--" not in body:
        return body.strip()
    match = _COMMENT.search(body)
    return body.strip() if match is None else body[: match.start()].strip()


_TS = re.compile(r"<!--[^>]*\bts:(\d{4}-\d{2}-\d{2})")


def _stamp(entry: _Entry) -> str:
    found = _TS.search(entry.line)
    return found.group(1) if found else ""


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
    added = [e for e in side.entries if e.key not in base.by_key]
    if added and len(side.by_key) - len(added) < len(base.by_key):  # some removed, some added: look for edits
        position = {e.key: i for i, e in enumerate(side.entries)}
        new = {e.key for e in added}
        last, skipped = -1, 0  # the side's index of the last base entry it kept, and removed ones since
        for entry in base.entries:
            at = position.get(entry.key)
            if at is not None:
                last, skipped = at, 0
                continue
            candidate = last + 1 + skipped
            skipped += 1
            if candidate < len(side.entries):
                now = side.entries[candidate]
                if now.key in new and _similar(entry.text, now.text):
                    fate[entry.key] = now
                    new.discard(now.key)
        added = [e for e in added if e.key in new]
    return _Side(side, fate, added)


# ---- applying the other side's changes to the kept side -------------------------------------------------------------


class _Plan:
    """Edits to the lines of the kept side (the frame): replaced and deleted lines, lines inserted after a line, and
    rules sections the frame lacks."""

    def __init__(self, frame: _Doc) -> None:
        self.frame = frame
        self.first: dict[str | None, int] = {}  # the first entry line of each section
        for entry in frame.entries:
            self.first.setdefault(entry.section, entry.index)
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
        first = self.first.get(section)
        if first is not None:  # first of its section on the other side: before the section's first entry here
            self.after.setdefault(first - 1, []).append(text)
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
        missing += [kind for kind in self.sections if kind not in RULE_KINDS]  # a heading Anton does not use: last
        later = {kind: [self.frame.headings[k] for k in RULE_KINDS[RULE_KINDS.index(kind) + 1 :]
                        if k in self.frame.headings] if kind in RULE_KINDS else [] for kind in missing}  # fmt: skip
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
    sa, sb = _stamp(a), _stamp(b)
    if sa != sb and sa and sb:
        return 1 if sa > sb else -1
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
    if theirs in (ours, base):
        return MergeResult(ours)
    if base == ours:
        return MergeResult(theirs)
    cache: dict[str, tuple[int, str, str]] = {}
    b, o, t = split_file(name, base, cache), split_file(name, ours, cache), split_file(name, theirs, cache)
    if not (b.readable and o.readable and t.readable):
        return _whole(name, ours, theirs, prefer, "the file is not valid UTF-8 on one side and changed on both")
    if t.skeleton in (b.skeleton, o.skeleton):
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
    if data != theirs and _same_entries(split_file(name, data, cache), t):
        data = theirs  # the same entries and text as the other side: take its bytes, so both machines end equal
    if data == b"" and ours is None and theirs is None:
        data = None
    return dataclasses.replace(result, data=data)


def _same_entries(a: _Doc, b: _Doc) -> bool:
    return a.skeleton == b.skeleton and sorted(e.value for e in a.entries) == sorted(e.value for e in b.entries)


def _preferred(prefer: str | None) -> int:
    """When nothing tells which version is newer: 1 for the frame's side, -1 for the other, 0 to leave it open."""
    return {"ours": 1, "theirs": -1}.get(prefer or "", 0)


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

    def put(entry: _Entry, replacing: _Entry | None, anchor: Callable[[_Entry], int | None]) -> None:
        """Make the frame hold `entry` (from the other side) instead of `replacing` (a frame entry, or None); a line
        inserted goes after the frame line `anchor` gives for it."""
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
        plan.insert(entry.section, anchor(entry), entry.line)

    def standing(entry: _Entry) -> int | None:
        """The frame line that stands for an entry of the other side, when it is in the entry's section."""
        index = where.get(entry.key)
        if index is None and entry.key in frame.by_key:
            index = frame.by_key[entry.key].index
        if index is not None and frame.entries and _section_at(frame, index) == entry.section:
            return index
        return None

    def walk_back(entry: _Entry) -> int | None:
        """The frame line of the nearest entry before `entry` on the other side (same section) that has one."""
        for at in range(position[entry.key] - 1, -1, -1):
            previous = other.entries[at]
            if previous.section == entry.section and (index := standing(previous)) is not None:
                return index
        return None

    for key, now in yours.fate.items():
        was = base.by_key[key]
        kept = mine.fate[key]
        other_changed = now is None or now.line != was.line or now.section != was.section
        frame_changed = kept is None or kept.line != was.line or kept.section != was.section
        if not other_changed:
            continue
        if not frame_changed and kept is not None:  # (unchanged here means it is still here)
            if now is not None:
                put(now, kept, walk_back)
            else:
                plan.delete.add(kept.index)
            continue
        if now is None or kept is None:
            if kept is None and now is not None:  # deleted here, changed there: the changed entry stays
                notes.append(f"{name}: kept an entry {label(True)} deleted, as {label(False)} changed it: {now.line}")
                put(now, None, walk_back)
            continue
        if now.value == kept.value:
            continue
        order = _newer(kept, now, frame_time, other_time) or _preferred(prefer)
        if order == 0:
            conflicts.append(_conflict(name, "changed on both sides, neither is newer", was, kept, now, mine_is_frame))
        elif order > 0:
            notes.append(f"{name}: kept the newer version from {label(True)}; the other was: {now.line}")
        else:
            notes.append(f"{name}: kept the newer version from {label(False)}; the other was: {kept.line}")
            put(now, kept, walk_back)
    # The entries added on the other side, in its order: the entries before one are settled by the time it comes,
    # so the frame line of the nearest one with a line is carried along instead of walked back to (linear time).
    added = {entry.key for entry in yours.added}
    nearest: dict[str | None, int] = {}

    def after_nearest(entry: _Entry) -> int | None:
        return nearest.get(entry.section)

    for entry in other.entries:
        twin = frame.by_key.get(entry.key) if entry.key in added else None
        if entry.key not in added or (twin is not None and twin.value == entry.value):
            pass
        elif twin is None:
            put(entry, None, after_nearest)
        else:
            order = _newer(twin, entry, frame_time, other_time) or _preferred(prefer)
            if order == 0:
                conflicts.append(_conflict(name, "added on both sides differently, neither is newer", None, twin,
                                           entry, mine_is_frame))  # fmt: skip
            elif order < 0:
                notes.append(f"{name}: kept the newer version from {label(False)}; the other was: {twin.line}")
                put(entry, twin, after_nearest)
            else:
                notes.append(f"{name}: kept the newer version from {label(True)}; the other was: {entry.line}")
        index = standing(entry)
        if index is not None:
            nearest[entry.section] = index
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
