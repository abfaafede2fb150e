"""Stores rules, lessons and the profile for one scope (the global ~/.anton/memory or a project's .anton/memory).

It reads and writes `rules.md`, `lessons.md` and `profile.md` in the format Anton uses, so both programs can share the
files. Every change holds a lock for its whole read-modify-write and lands atomically, without losing a lesson that
Anton appends meanwhile (see `replace`); secrets are taken out of any text before it is written; lines it cannot read
are kept exactly where they are and reported by `problems()`; a file with undecodable bytes is never written. Parsed
files are cached on (inode, mtime, size), so reading unchanged memory costs almost nothing.

Brain analogy: the hippocampus encodes and retrieves individual traces; it does not decide what is worth keeping.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from anton_tui import gc_policy
from anton_tui.memory.engrams.counters import RetrievalCounters, StatsFile
from anton_tui.memory.engrams.engram import (
    CONFIDENCE_RANK,
    RULE_KINDS,
    Engram,
    MemoryFileError,
    MemoryProblem,
    ParsedFile,
    entry_text,
    extend_lessons,
    format_lesson_line,
    format_profile_line,
    format_rule_line,
    parse_lessons_file,
    parse_profile_file,
    parse_rules_file,
    sanitize_slug,
)
from anton_tui.memory.engrams.lesson_budget import walks_of, within
from anton_tui.memory.engrams.outcomes import RuleOutcomes
from anton_tui.memory.files.locking import append_locked, exclusive, read_whole_lines, remove_stale_temps
from anton_tui.memory.files.replace import recover_carries, rewriting
from anton_tui.memory.history import origin as _origin
from anton_tui.redact import MARKER, Redactor

Parser = Callable[[bytes, Path, str], ParsedFile]

SCRATCHPAD_WISDOM_CHARS = 8000
_KIND_ORDER = {kind: i for i, kind in enumerate(RULE_KINDS)}
_FILES = {
    "rules": "rules", "rules.md": "rules", "always": "rules", "never": "rules", "when": "rules",
    "lessons": "lessons", "lessons.md": "lessons", "lesson": "lessons",
    "profile": "profile", "profile.md": "profile", "identity": "profile",
}  # fmt: skip

_cache: dict[tuple[str, str, str], tuple[tuple[int, int, int], ParsedFile]] = {}


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _read(path: Path, parser: Parser, scope: str, *, fresh: bool = False, locked: bool = False) -> ParsedFile:
    """Parse `path`, reusing the cached parse while the file is unchanged; `fresh` re-reads the bytes to be sure.

    `locked`: the caller holds the file's own lock, so no append can be half-written. The cache keeps parses without
    the file's bytes (`ParsedFile.without_bytes`), and that is what a read that is not `fresh` returns: its entries,
    not its `raw` or `lines`. A `fresh` read returns the parse with the bytes it just read, for changing the file.
    """
    key = (str(path), parser.__name__, scope)
    cached = _cache.get(key)
    try:
        if cached is not None and not fresh and _stamp(os.stat(path)) == cached[0]:
            return cached[1]
        if locked:
            with open(path, "rb") as handle:
                stat = os.fstat(handle.fileno())
                gc_policy.before_big_read(stat.st_size)
                data = handle.read()
        else:
            stat, data = read_whole_lines(path)
        stamp = _stamp(stat)
    except FileNotFoundError:
        return ParsedFile()
    except OSError as exc:
        problem = MemoryProblem(path, None, "", f"could not be read: {exc.strerror or exc}")
        return ParsedFile(problems=[problem], writable=False)
    parsed = None
    if cached is not None:
        if cached[1].same_bytes(data):
            _cache[key] = (stamp, cached[1])
            return cached[1].with_bytes(data) if fresh else cached[1]
        if parser is parse_lessons_file:
            parsed = extend_lessons(cached[1], data, path, scope)
    if parsed is None:
        parsed = parser(data, path, scope)
    kept = parsed.without_bytes()
    _cache[key] = (stamp, kept)
    return parsed if fresh else kept


def _forget(path: Path) -> None:
    """Drop cached parses of a file just rewritten (a new file can reuse the old inode number within one tick)."""
    for key in [key for key in _cache if key[0] == str(path)]:
        _cache.pop(key, None)


@functools.lru_cache(maxsize=4096)
def _slug_of(topic: str) -> str:
    return sanitize_slug(topic)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _terminated(lines: list[str], upto: int) -> None:
    """Make sure the line before position `upto` ends with a newline, so an inserted line starts on its own."""
    if upto > 0 and not lines[upto - 1].endswith(("\n", "\r")):
        lines[upto - 1] += "\n"


def _fresh_rules_file(kind: str, line: str) -> list[str]:
    lines = ["# Rules\n"]
    for section in RULE_KINDS:
        lines += ["\n", f"## {section.capitalize()}\n"]
        if section == kind:
            lines.append(line)
    return lines


def _insert_rule(parsed: ParsedFile, kind: str, line: str) -> list[str]:
    """Put `line` at the end of its ``## Kind`` section; every other line stays exactly as it was."""
    lines = list(parsed.lines)
    if not any(existing.strip() for existing in lines):
        return _fresh_rules_file(kind, line)
    heading = parsed.headings.get(kind)
    if heading is not None:
        position = heading + 1
        for index in range(heading + 1, len(lines)):
            stripped = lines[index].strip()
            if stripped.startswith("## "):
                break
            if stripped:
                position = index + 1
        _terminated(lines, position)
        lines.insert(position, line)
        return lines
    block = [f"## {kind.capitalize()}\n", line]
    later = [parsed.headings[k] for k in RULE_KINDS[RULE_KINDS.index(kind) + 1 :] if k in parsed.headings]
    if later:
        lines[min(later) : min(later)] = [*block, "\n"]
        return lines
    _terminated(lines, len(lines))
    if lines[-1].strip():
        lines.append("\n")
    return lines + block


def lesson_for_prompt(engram: Engram) -> str:
    parts = [f"{key}:{value}" for key in ("confidence", "source", "topic") if (value := getattr(engram, key))]
    if engram.updated_at is not None:
        parts.append(f"ts:{engram.updated_at:%Y-%m-%d}")
    return f"- {engram.text} <!-- {' '.join(parts)} -->" if parts else f"- {engram.text}"


def render_lessons(engrams: list[Engram], header: str = "Lessons") -> str:
    """Lessons as the prompt shows them: ``# Lessons`` and one line each, metadata comment included."""
    if not engrams:
        return ""
    return f"# {header}\n" + "\n".join(lesson_for_prompt(e) for e in engrams)


class Hippocampus:
    """Reads and writes one scope's memory files in `base_dir`."""

    def __init__(self, base_dir: Path | str, *, scope: str = "project", redactor: Redactor | None = None) -> None:
        self.base_dir = Path(base_dir)
        self.scope = scope
        self.redactor = redactor or Redactor()  # every text written goes through it first
        self.rules_path = self.base_dir / "rules.md"
        self.lessons_path = self.base_dir / "lessons.md"
        self.profile_path = self.base_dir / "profile.md"
        self.recorder: Any = None  # a MemoryRecorder: every write is noted there with its origin (see `history`)
        self._stats = StatsFile(self.base_dir)  # beside the files, never in them (see `counters`)
        self.counters = RetrievalCounters(self._stats)
        self.outcomes = RuleOutcomes(self._stats)

    def close(self) -> None:
        """Let go of the counters' database connection (opened again if the scope is used after)."""
        self._stats.close()

    def __repr__(self) -> str:
        return f"Hippocampus({str(self.base_dir)!r}, scope={self.scope!r})"

    # ---- reading the files -------------------------------------------------------------------------------------

    def _rules(self, fresh: bool = False) -> ParsedFile:
        return _read(self.rules_path, parse_rules_file, self.scope, fresh=fresh)

    def _lessons(self, fresh: bool = False) -> ParsedFile:
        return _read(self.lessons_path, parse_lessons_file, self.scope, fresh=fresh)

    def _profile(self, fresh: bool = False) -> ParsedFile:
        return _read(self.profile_path, parse_profile_file, self.scope, fresh=fresh)

    def _target(self, kind_file: str) -> tuple[str, Path, Parser]:
        name = _FILES.get(kind_file.lower())
        if name is None:
            raise ValueError(f"unknown memory file {kind_file!r}: use 'rules', 'lessons' or 'profile'")
        return {
            "rules": (name, self.rules_path, parse_rules_file),
            "lessons": (name, self.lessons_path, parse_lessons_file),
            "profile": (name, self.profile_path, parse_profile_file),
        }[name]

    def clean_text(self, text: str) -> str:
        """Text as it may be written: secrets replaced by markers, one line; ``""`` if nothing worth saving is left."""
        text = entry_text(self.redactor(text))
        return text if entry_text(MARKER.sub("", text)) else ""

    @staticmethod
    @contextmanager
    def _writing(path: Path) -> Iterator[None]:
        """Hold the sidecar lock of `path`; first tidy up after writers of it that were killed mid-write."""
        with exclusive(path):
            remove_stale_temps(path)
            recover_carries(path)
            yield

    def _modify(self, path: Path, parser: Parser, change: Callable[[ParsedFile], list[str] | None]) -> bool:
        """Run `change` on the current file under the file's locks and write its result in one step (None: no write)."""
        with self._writing(path), rewriting(path) as rewrite:
            parsed = _read(path, parser, self.scope, fresh=True, locked=True)
            self._ensure_writable(path, parsed)
            lines = change(parsed)
            if lines is None:
                return False
            rewrite.replace("".join(lines).encode("utf-8"))
            _forget(path)
            self._note(path)
            return True

    def _note(self, path: Path) -> None:
        """Hand the bytes a write just left in `path` to the history (called under the file's sidecar lock)."""
        if self.recorder is None:
            return
        try:
            data: bytes | None = path.read_bytes()
        except FileNotFoundError:
            data = None
        except OSError:
            return
        self.recorder.note(self.scope, path.name, data, _origin.current())

    def replace_bytes(self, kind_file: str, compute: Callable[[bytes | None], bytes | None]) -> bool:
        """Replace one file's bytes under its locks: `compute` gets the current bytes (None: no file) and returns the
        new ones (None: remove the file). False when nothing changed. Used by undo and reset, which restore exact
        earlier bytes rather than parsed entries."""
        _name, path, _parser = self._target(kind_file)
        with self._writing(path), rewriting(path) as rewrite:
            try:
                current: bytes | None = path.read_bytes()
            except FileNotFoundError:
                current = None
            new = compute(current)
            if new == current:
                return False
            if new is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                rewrite.replace(new)
            _forget(path)
            self._note(path)
            return True

    @staticmethod
    def _ensure_writable(path: Path, parsed: ParsedFile) -> None:
        if not parsed.writable:
            reason = parsed.problems[0].reason if parsed.problems else "it could not be read"
            raise MemoryFileError(f"{path} was not changed: {reason}. Fix or move the file; nothing was written.")

    def unwritable_reason(self, kind_file: str) -> str | None:
        """Why `rules`, `lessons` or `profile` of this scope will not be written (a write refuses it), or None."""
        _name, path, parser = self._target(kind_file)
        parsed = _read(path, parser, self.scope)
        if parsed.writable:
            return None
        return parsed.problems[0].reason if parsed.problems else "it could not be read"

    def problems(self) -> list[MemoryProblem]:
        """Lines and files this scope could not read; they are kept untouched."""
        return [*self._rules().problems, *self._lessons().problems, *self._profile().problems]

    def file_problems(self, kind_file: str) -> list[MemoryProblem]:
        """The lines of one file ('rules', 'lessons' or 'profile') that could not be read (the other files are not
        read for it)."""
        _name, path, parser = self._target(kind_file)
        return list(_read(path, parser, self.scope).problems)

    def entry_count(self) -> int:
        """Bullet lines in rules.md and lessons.md (what compaction thresholds count)."""
        return self._rules().bullet_lines + self._lessons().bullet_lines

    # ---- identity ----------------------------------------------------------------------------------------------

    def get_profile(self) -> list[Engram]:
        return list(self._profile().entries)

    def identity_facts(self) -> list[str]:
        return [e.text for e in self._profile().entries]

    def recall_identity(self, char_budget: int | None = None) -> str:
        """profile.md as the prompt shows it (``# Profile`` and its facts); trimmed to `char_budget` when given."""
        parsed = self._profile(fresh=True)  # a small file, read whole each time: the cache keeps no lines
        text = "".join(parsed.lines).strip()
        if char_budget is None or len(text) <= char_budget:
            return text
        facts = within([f"- {e.text}" for e in parsed.entries], char_budget - len("# Profile\n"))
        return "\n".join(["# Profile", *facts]) if facts else ""

    def rewrite_identity(self, facts: list[str]) -> bool:
        """Merge facts into profile.md: exact repeats are skipped, ``Key: value`` replaces facts with the same key."""
        cleaned = [text for fact in facts if (text := self.clean_text(fact))]

        def change(parsed: ParsedFile) -> list[str] | None:
            rows: list[str | None] = list(parsed.lines)
            current = {index: e.text for e, index in zip(parsed.entries, parsed.entry_lines, strict=False)}
            added: list[str] = []
            for fact in cleaned:
                if fact in added or fact in current.values():
                    continue
                key = fact.split(":")[0].strip().lower() if ":" in fact else ""
                if key:
                    for index in [i for i, text in current.items() if text.lower().startswith(key + ":")]:
                        del current[index]
                        rows[index] = None
                    added = [text for text in added if not text.lower().startswith(key + ":")]
                added.append(fact)
            if not added:
                return None
            lines = [row for row in rows if row is not None] or ["# Profile\n"]
            _terminated(lines, len(lines))
            return lines + [format_profile_line(text) for text in added]

        return self._modify(self.profile_path, parse_profile_file, change)

    def remove_profile_lines(self, entry_ids: set[str]) -> bool:
        """Drop the profile facts with these ids; the file is deleted when no fact and no other text is left."""
        path = self.profile_path
        with self._writing(path), rewriting(path) as rewrite:
            parsed = _read(path, parse_profile_file, self.scope, fresh=True, locked=True)
            self._ensure_writable(path, parsed)
            drop = {index for e, index in zip(parsed.entries, parsed.entry_lines, strict=False) if e.id in entry_ids}
            if not drop:
                return False
            kept = [line for index, line in enumerate(parsed.lines) if index not in drop]
            if all(not line.strip() or line.strip().startswith("#") for line in kept):
                path.unlink()
            else:
                rewrite.replace("".join(kept).encode("utf-8"))
            _forget(path)
            self._note(path)
            return True

    # ---- rules -------------------------------------------------------------------------------------------------

    def get_rules(self) -> list[Engram]:
        """All rules, Always then Never then When (entries under unknown headings last), file order within a kind."""
        return sorted(self._rules().entries, key=lambda e: (_KIND_ORDER.get(e.kind, len(RULE_KINDS)), e.kind))

    def recall_rules(self, char_budget: int | None = None, *, exclude_scratchpad: bool = False) -> str:
        """Rules as the prompt shows them: ``## Always`` / ``## Never`` / ``## When`` and ``- text`` lines.

        Rules under unknown headings never reach the prompt. `exclude_scratchpad` leaves out When rules about the
        scratchpad (they go to the scratchpad tool instead). Lines that do not fit `char_budget` are skipped.
        """
        walks = walks_of(self._rules())
        sections, used = [], 0
        for kind in RULE_KINDS:
            lines, shortest_after = walks.rule_lines(kind, exclude_scratchpad)
            lines = within(lines, None if char_budget is None else char_budget - used, shortest_after)
            if lines:
                sections.append(f"## {kind.capitalize()}\n" + "\n".join(lines))
                used += sum(len(line) + 1 for line in lines)
        return "\n\n".join(sections)

    def encode_rule(self, text: str, kind: str, confidence: str | None = "medium", source: str | None = "llm") -> bool:
        """Add a rule under its section; False when the text is empty or already a rule of any kind."""
        if kind not in RULE_KINDS:
            raise ValueError(f"rule kind must be one of {', '.join(RULE_KINDS)}, not {kind!r}")
        text = self.clean_text(text)
        if not text:
            return False
        engram = Engram(text, kind, self.scope, confidence, None, source, dt.datetime.now())
        line = format_rule_line(engram)

        def change(parsed: ParsedFile) -> list[str] | None:
            return None if text in parsed.texts else _insert_rule(parsed, kind, line)

        return self._modify(self.rules_path, parse_rules_file, change)

    # ---- lessons -----------------------------------------------------------------------------------------------

    def get_lessons(self, token_budget: int | None = None, *, exclude_scratchpad: bool = False) -> list[Engram]:
        """Lessons in file order, or with `token_budget` newest first within budget*4 characters of text.

        A lesson too long for what is left of the budget is skipped and older ones still get in; the walk stops
        once no older lesson could fit, so its cost does not grow with the number of lessons.
        """
        parsed = self._lessons()
        entries, related = parsed.entries, parsed.related
        if token_budget is None:
            if not exclude_scratchpad:
                return list(entries)
            return [e for e, is_related in zip(entries, related, strict=False) if not is_related]
        shortest_upto = walks_of(parsed).shortest_lesson_upto(exclude_scratchpad)
        budget, used, kept = token_budget * 4, 0, []
        for index in range(len(entries) - 1, -1, -1):
            if budget - used < shortest_upto[index]:
                break
            if exclude_scratchpad and related[index]:
                continue
            cost = len(entries[index].text) + 1
            if used + cost <= budget:
                kept.append(entries[index])
                used += cost
        return kept

    def recall_lessons(self, token_budget: int | None = None, *, exclude_scratchpad: bool = False) -> str:
        return render_lessons(self.get_lessons(token_budget, exclude_scratchpad=exclude_scratchpad))

    def topics(self) -> list[str]:
        return sorted({e.topic for e in self._lessons().entries if e.topic})

    def recall_topic(self, slug: str) -> str:
        """Lessons on one topic (matched by slug, so a raw ``topic:API`` written by Anton 5 is found as ``api``)."""
        slug = sanitize_slug(slug)
        found = [e for e in self._lessons().entries if e.topic and (e.topic == slug or _slug_of(e.topic) == slug)]
        return render_lessons(found, header=slug)

    def encode_lesson(
        self, text: str, topic: str = "", source: str | None = "llm", confidence: str | None = None
    ) -> bool:
        """Append a lesson; False when the text is empty or already a lesson.

        The topic is slugged; source and confidence are kept. Source ``llm`` is the default meaning of a lesson
        without a source, so it is not written and the line matches what Anton writes.
        """
        text = self.clean_text(text)
        if not text:
            return False
        topic_slug = sanitize_slug(topic) if topic and topic.strip() else None
        engram = Engram(
            text, "lesson", self.scope, confidence or None, topic_slug,
            None if source in (None, "", "llm") else source, dt.datetime.now(),
        )  # fmt: skip
        line = format_lesson_line(engram).encode("utf-8")
        path = self.lessons_path
        with self._writing(path):
            parsed = self._lessons(fresh=True)
            self._ensure_writable(path, parsed)
            if text in parsed.texts:
                return False
            if parsed.raw.strip():
                append_locked(path, line if parsed.raw.endswith((b"\n", b"\r")) else b"\n" + line)
                self._note(path)
                return True
            with rewriting(path) as rewrite:  # a new file: under the file's lock, in case Anton appended meanwhile
                current = _read(path, parse_lessons_file, self.scope, fresh=True, locked=True)
                if text in current.texts:
                    return False
                head = current.raw if current.raw.strip() else b"# Lessons\n"
                rewrite.replace(head + (line if head.endswith((b"\n", b"\r")) else b"\n" + line))
            _forget(path)
            self._note(path)
        return True

    # ---- scratchpad wisdom -------------------------------------------------------------------------------------

    def recall_scratchpad_wisdom(self, char_budget: int = SCRATCHPAD_WISDOM_CHARS) -> str:
        """When rules and lessons about the scratchpad, surest and newest first, as ``- text`` lines."""
        rules, lessons = self._rules(), self._lessons()
        candidates = [e for e, rel in zip(rules.entries, rules.related, strict=False) if rel and e.kind == "when"]
        candidates += [e for e, rel in zip(lessons.entries, lessons.related, strict=False) if rel]

        def order(engram: Engram) -> tuple[int, int, float]:
            rank = CONFIDENCE_RANK.get(engram.confidence or "medium", 1)
            if engram.updated_at is None:
                return (rank, 1, 0.0)
            return (rank, 0, -engram.updated_at.timestamp())

        lines = list(dict.fromkeys(f"- {e.text}" for e in sorted(candidates, key=order)))
        return "\n".join(within(lines, char_budget))

    # ---- single entries by id ----------------------------------------------------------------------------------

    def list_entries(self, kind_file: str) -> list[Engram]:
        """Entries of one file ('rules', 'lessons' or 'profile') in file order; their `id` names them for changes."""
        _name, path, parser = self._target(kind_file)
        return list(_read(path, parser, self.scope).entries)

    def update_entry(self, kind_file: str, entry_id: str, new_text: str) -> bool:
        """Give the entry with this id new text (its metadata kept, date refreshed); False if no such entry."""
        name, path, parser = self._target(kind_file)
        text = self.clean_text(new_text)
        if not text:
            raise ValueError("a memory entry needs some words: this text is empty or only punctuation")

        def change(parsed: ParsedFile) -> list[str] | None:
            for engram, index in zip(parsed.entries, parsed.entry_lines, strict=False):
                if engram.id != entry_id:
                    continue
                updated = dataclasses.replace(engram, text=text, updated_at=dt.datetime.now())
                if name == "profile":
                    line = format_profile_line(text)
                elif name == "rules":
                    line = format_rule_line(updated)
                else:
                    line = format_lesson_line(updated)
                lines = list(parsed.lines)
                lines[index] = line.rstrip("\n") + _ending(lines[index])
                return lines
            return None

        return self._modify(path, parser, change)

    def read_file(self, kind_file: str) -> ParsedFile:
        """A fresh parse of one file ('rules', 'lessons' or 'profile'): its exact lines, entries and problems."""
        _name, path, parser = self._target(kind_file)
        return _read(path, parser, self.scope, fresh=True)

    def rewrite_file(self, kind_file: str, change: Callable[[ParsedFile], list[str] | None]) -> bool:
        """Rewrite one file under its lock: `change` gets the current parse and returns the new lines (None: keep).

        The same locks as every other change are held, so no write of this or another process can slip in between
        reading and replacing; a file that cannot be read cleanly raises `MemoryFileError` and is left alone. Lines
        `change` adds (not already in the file) have their secrets taken out; the file's own lines stay as they are.
        """
        _name, path, parser = self._target(kind_file)

        def scrubbed(parsed: ParsedFile) -> list[str] | None:
            lines = change(parsed)
            if lines is None:
                return None
            old = set(parsed.lines)
            return [line if line in old else self.redactor(line) for line in lines]

        return self._modify(path, parser, scrubbed)

    def delete_entry(self, kind_file: str, entry_id: str) -> bool:
        """Remove the entry with this id (its line only); False if no such entry."""
        _name, path, parser = self._target(kind_file)

        def change(parsed: ParsedFile) -> list[str] | None:
            for engram, index in zip(parsed.entries, parsed.entry_lines, strict=False):
                if engram.id == entry_id:
                    return parsed.lines[:index] + parsed.lines[index + 1 :]
            return None

        return self._modify(path, parser, change)
