"""The memory file format: one remembered fact (an Engram) per line, and how whole memory files split into entries.

A memory entry is a Markdown bullet with its metadata in a trailing HTML comment, byte-compatible with Anton:
``- Use httpx instead of requests <!-- confidence:high source:user ts:2026-11-22 -->``. This module only turns text
into data and back; reading and writing files (locks, caching) lives in `hippocampus`.

Brain analogy: an engram is the physical trace one memory leaves behind.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

RULE_KINDS = ("always", "never", "when")
KINDS = (*RULE_KINDS, "lesson", "profile")
CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}

_COMMENT = re.compile(r"\s*<!--([^>]*)-->\s*$")
_PAIR = re.compile(r"(\w+):(\S+)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class Engram:
    """One memory: a rule (always/never/when), a lesson or a profile fact. `id` is the sha256 of the text."""

    text: str
    kind: str
    scope: str = "project"
    confidence: str | None = None
    topic: str | None = None
    source: str | None = None
    updated_at: dt.datetime | None = None

    @property
    def id(self) -> str:
        """Hex sha256 of the text: stable across runs and programs, so it can name an entry in a file."""
        return entry_id(self.text)


class MemoryFileError(Exception):
    """A memory file cannot be changed safely (for example it holds bytes that are not UTF-8); nothing was written."""


@dataclass(frozen=True, slots=True)
class MemoryProblem:
    """Something in a memory file that could not be read as an entry; the file keeps it as it is."""

    path: Path
    line: int | None
    text: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.reason}"


def entry_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sanitize_text(text: str) -> str:
    """Make text safe as one entry: one line, and no comment markers that could forge metadata.

    Every line is stripped and non-empty lines are joined by one space; ``<!--`` becomes ``<!-`` and ``-->`` becomes
    ``->`` until neither is left (one pass is not enough: ``<!---->`` would otherwise become ``<!-->``).
    """
    text = " ".join(part for part in (line.strip() for line in text.splitlines()) if part)
    while "<!--" in text or "-->" in text:
        text = text.replace("<!--", "<!-").replace("-->", "->")
    return text


_BULLETS = re.compile(r"^(?:[-*+•]\s+)+")


def entry_text(text: str) -> str:
    """`sanitize_text`, then what is left worth saving as an entry: ``""`` when it has no letter or digit at all.

    A leading bullet (``- ``, ``* ``) is dropped, since the line adds its own. Text such as ``-`` or ``<!-- -->`` would
    be written as a line that reads back as nothing, so every write refuses it rather than pile up such lines.
    """
    text = _BULLETS.sub("", sanitize_text(text))
    return text if any(char.isalnum() for char in text) else ""


def sanitize_slug(name: str) -> str:
    """Topic slug as Anton writes it: ``"API CoinGecko!"`` → ``"api-coingecko"``; empty → ``"general"``."""
    text = re.sub(r"[^a-z0-9\s_-]", "", name.lower().strip())
    text = re.sub(r"-+", "-", re.sub(r"\s+", "-", text))
    return text.strip("-") or "general"


def _meta_value(value: str | None) -> str | None:
    """Metadata values are single words without angle brackets, or they would break the comment."""
    if value is None:
        return None
    cleaned = re.sub(r"[<>]", "", "-".join(str(value).split()))
    return cleaned or None


def today() -> str:
    return dt.datetime.now().strftime("%Y-%m-%d")


@functools.lru_cache(maxsize=1024)
def _parse_day(ts: str) -> dt.datetime | None:
    """``ts:`` value → datetime (memory files repeat the same few dates, hence the cache); None if unreadable."""
    if not _DATE.match(ts):
        return None
    try:
        return dt.datetime.fromisoformat(ts[:10])
    except ValueError:
        return None


def split_entry(body: str) -> tuple[str, str | None, str | None, str | None, dt.datetime | None, str | None]:
    """Split an entry body (without ``- ``) into text, confidence, topic, source, date, and a problem if any.

    Unknown keys (and ``kind:``, which the file's heading decides) are ignored; nothing here raises.
    """
    if "<!--" not in body:
        return body.strip(), None, None, None, None, None
    match = _COMMENT.search(body)
    if match is None:
        return body.strip(), None, None, None, None, "metadata comment could not be read (kept as part of the text)"
    pairs = dict(_PAIR.findall(match.group(1)))
    ts = pairs.get("ts")
    day = _parse_day(ts) if ts else None
    issue = f"unreadable date ts:{ts}" if ts and day is None else None
    text = body[: match.start()].strip()
    return (
        text, _meta(pairs.get("confidence") or None), _meta(pairs.get("topic") or None),
        _meta(pairs.get("source") or None), day, issue,
    )  # fmt: skip


def parse_entry(line: str, kind: str = "lesson", scope: str = "project") -> Engram | None:
    """Read one memory line (``- text <!-- key:value ... -->``); None when the line is not an entry."""
    stripped = line.strip()
    if not stripped.startswith("- "):
        return None
    text, confidence, topic, source, day, _ = split_entry(stripped[2:])
    return Engram(text, kind, scope, confidence, topic, source, day) if text else None


def _comment(parts: list[str]) -> str:
    return f"<!-- {' '.join(parts)} -->"


def _ts(engram: Engram) -> str:
    return engram.updated_at.strftime("%Y-%m-%d") if engram.updated_at else today()


def format_rule_line(engram: Engram) -> str:
    """``- {text} <!-- confidence:… source:… ts:… -->``; a key without a value is omitted, never "None"."""
    parts = [f"{key}:{value}" for key in ("confidence", "source") if (value := _meta_value(getattr(engram, key)))]
    parts.append(f"ts:{_ts(engram)}")
    return f"- {sanitize_text(engram.text)} {_comment(parts)}\n"


def format_lesson_line(engram: Engram) -> str:
    """``- {text} <!-- [confidence:…] [source:…] [topic:…] ts:… -->``, the key order Anton uses."""
    parts = [
        f"{key}:{value}" for key in ("confidence", "source", "topic") if (value := _meta_value(getattr(engram, key)))
    ]
    parts.append(f"ts:{_ts(engram)}")
    return f"- {sanitize_text(engram.text)} {_comment(parts)}\n"


def format_profile_line(text: str) -> str:
    return f"- {sanitize_text(text)}\n"


def is_scratchpad_related(engram: Engram) -> bool:
    return "scratchpad" in engram.text.lower() or "scratchpad" in (engram.topic or "").lower()


@dataclass(slots=True)
class ParsedFile:
    """A memory file split into its exact lines, with the entries found and what could not be read.

    `lines` keep their line endings, so joining them gives back the file byte for byte (when `writable`). They are
    split from `raw` when first asked for (only changes need them). The parse a cache keeps drops `raw`
    (`without_bytes`): it holds the entries, and a digest that tells whether bytes read later are the same
    (`same_bytes`); only a parse with its bytes (`with_bytes`, what a fresh read returns) has `raw` and `lines`.
    `entry_lines[i]` is the index in `lines` of `entries[i]`; `headings` maps a lowercased ``## `` heading to its
    first line index (rules files only).
    """

    entries: list[Engram] = field(default_factory=list)
    entry_lines: array[int] = field(default_factory=lambda: array("q"))
    problems: list[MemoryProblem] = field(default_factory=list)
    headings: dict[str, int] = field(default_factory=dict)
    writable: bool = True
    bullet_lines: int = 0
    raw: bytes = b""
    line_count: int = 0
    size: int = 0  # of the file's bytes
    digest: bytes = b""  # of the file's bytes (see `same_bytes`)
    bytes_dropped: bool = False
    _texts: frozenset[str] | None = None
    _related: list[bool] | None = None
    _lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self.bytes_dropped:
            raise RuntimeError("this parse was kept without the file's bytes: read the file fresh to change it")
        if self._lines is None:
            self._lines = self.raw.decode("utf-8", errors="replace").splitlines(keepends=True)
        return self._lines

    def same_bytes(self, data: bytes | memoryview) -> bool:
        """Whether `data` are the bytes this was parsed from."""
        return len(data) == self.size and digest_of(data) == self.digest

    def without_bytes(self) -> ParsedFile:
        """This parse without `raw` (for keeping: a 50,000-lesson file's bytes are some 4 MB)."""
        return replace(self, raw=b"", bytes_dropped=True, _lines=None)

    def with_bytes(self, data: bytes) -> ParsedFile:
        """This parse with the bytes it was parsed from (checked by the caller with `same_bytes`)."""
        return replace(self, raw=data, bytes_dropped=False, _lines=None)

    @property
    def texts(self) -> frozenset[str]:
        if self._texts is None:
            self._texts = frozenset(e.text for e in self.entries)
        return self._texts

    @property
    def related(self) -> list[bool]:
        """Per entry: is it about the scratchpad (those go to the scratchpad tool, not the system prompt)."""
        if self._related is None:
            self._related = [is_scratchpad_related(e) for e in self.entries]
        return self._related

    def add(self, index: int, engram: Engram) -> None:
        self.entries.append(engram)
        self.entry_lines.append(index)


def decode(data: bytes, path: Path) -> tuple[str, MemoryProblem | None]:
    """UTF-8 text of a memory file; undecodable bytes are shown as U+FFFD and reported (the file becomes read-only)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        reason = (
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "the file is read-only until it is fixed"
        )
        return data.decode("utf-8", errors="replace"), MemoryProblem(path, line, "", reason)


# Where `str.splitlines` ends a line (the line keeps its ending).
_LINE = re.compile(r"[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])?")


def iter_lines(text: str) -> Iterator[str]:
    """The lines of `text` with their endings, one at a time: the same lines as ``text.splitlines(keepends=True)``
    without a list of them all (a parse looks at each line once and keeps none of them)."""
    position, end, match = 0, len(text), _LINE.match
    while position < end:
        found = match(text, position)
        yield found.group()  # type: ignore[union-attr]  # never None: the pattern matches at least one character here
        position = found.end()  # type: ignore[union-attr]


class _Lines:
    """Counts the lines a parse walks through (the file's `line_count`)."""

    __slots__ = ("_text", "count")

    def __init__(self, text: str) -> None:
        self.count, self._text = 0, text

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for index, line in enumerate(iter_lines(self._text)):
            self.count = index + 1
            yield index, line


def digest_of(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _start(data: bytes, path: Path) -> tuple[ParsedFile, _Lines]:
    text, problem = decode(data, path)
    parsed = ParsedFile(raw=data, size=len(data), digest=digest_of(data), writable=problem is None)
    if problem is not None:
        parsed.problems.append(problem)
    return parsed, _Lines(text)


def _meta(value: str | None) -> str | None:
    """Metadata values repeat (a few topics, sources, levels): one string each, not one per entry."""
    return None if value is None else sys.intern(value)


def _problem(parsed: ParsedFile, path: Path, index: int, line: str, reason: str) -> None:
    parsed.problems.append(MemoryProblem(path, index + 1, line.rstrip("\r\n"), reason))


def parse_rules_file(data: bytes, path: Path, scope: str = "project") -> ParsedFile:
    """rules.md: ``- `` lines under ``## Always`` / ``## Never`` / ``## When``; anything else is kept and reported."""
    parsed, lines = _start(data, path)
    heading: str | None = None
    for index, line in lines:
        stripped = line.strip()
        if stripped.startswith("## "):
            heading = stripped[3:].strip().lower()
            parsed.headings.setdefault(heading, index)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if not stripped.startswith("- "):
            _problem(parsed, path, index, line, "not a rule entry (kept as it is)")
            continue
        parsed.bullet_lines += 1
        if heading is None:
            _problem(parsed, path, index, line, "rule under no ## heading (kept, not used)")
            continue
        text, confidence, topic, source, day, issue = split_entry(stripped[2:])
        if not text:
            _problem(parsed, path, index, line, "empty rule (kept as it is)")
            continue
        if issue:
            _problem(parsed, path, index, line, issue)
        if heading not in RULE_KINDS:
            _problem(parsed, path, index, line, f"rule under unknown heading '## {heading}' (kept, not used)")
        parsed.add(index, Engram(text, heading, scope, confidence, topic, source, day))
    parsed.line_count = lines.count
    return parsed


def parse_lessons_file(data: bytes, path: Path, scope: str = "project") -> ParsedFile:
    """lessons.md: lines starting ``- `` (or two spaces, as Anton reads them) are lessons; ``#`` lines are headers."""
    parsed, lines = _start(data, path)
    for index, line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("- "):
            parsed.bullet_lines += 1
        if not (line.startswith(("- ", "  "))):
            if not stripped.startswith("#"):
                _problem(parsed, path, index, line, "not a lesson entry (kept as it is)")
            continue
        text, confidence, topic, source, day, issue = split_entry(stripped)
        text = text.removeprefix("- ")
        if text in ("", "-"):
            _problem(parsed, path, index, line, "empty lesson (kept as it is)")
            continue
        if issue:
            _problem(parsed, path, index, line, issue)
        parsed.add(index, Engram(text, "lesson", scope, confidence, topic, source, day))
    parsed.line_count = lines.count
    return parsed


def parse_profile_file(data: bytes, path: Path, scope: str = "global") -> ParsedFile:
    """profile.md: every non-blank line that is not a ``#`` heading is a fact (``- `` is optional)."""
    parsed, lines = _start(data, path)
    for index, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        text = stripped[2:].strip() if stripped.startswith("- ") else stripped
        if text:
            parsed.add(index, Engram(text, "profile", scope))
    parsed.line_count = lines.count
    return parsed


def extend_lessons(previous: ParsedFile, data: bytes, path: Path, scope: str = "project") -> ParsedFile | None:
    """Parse only what was appended to a lessons file since `previous` (None when it was not a plain append).

    Lessons are read line by line without context, so the old lines' parse stays valid; this keeps an append to a
    file of thousands of lessons from costing a full re-read.
    """
    size = previous.size
    if not previous.writable or not size or len(data) <= size or data[size - 1 : size] != b"\n":
        return None
    if not previous.same_bytes(memoryview(data)[:size]):
        return None
    tail = parse_lessons_file(data[size:], path, scope)
    offset = previous.line_count
    return ParsedFile(
        entries=previous.entries + tail.entries,
        entry_lines=previous.entry_lines + array("q", [index + offset for index in tail.entry_lines]),
        problems=previous.problems + [replace(p, line=p.line + offset if p.line else p.line) for p in tail.problems],
        writable=tail.writable,
        bullet_lines=previous.bullet_lines + tail.bullet_lines,
        raw=data,
        size=len(data),
        digest=digest_of(data),
        line_count=previous.line_count + tail.line_count,
        _related=None if previous._related is None else previous._related + tail.related,
    )
