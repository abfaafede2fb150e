"""Keeps memory files from growing without bound: the coding model picks which entries to keep, nothing else changes.

The cortex decides which scopes need it (`Cortex.compact_all`, more than 20 entries in a scope) and hands each file
to `compact_file` (files with fewer than 8 entries are left alone). The model sees the entries numbered and answers
only with the numbers to keep; it never writes memory text, so every kept line stays byte for byte what it was,
under the heading it was under. A rule written above the first ``##`` heading is offered as an Always rule and,
when kept, moves under ``## Always``, as Anton's compaction files it. Lines the parser could not read, rules under
unknown headings and anything that is not an entry are never offered and never dropped. A number that names no
entry is ignored (and logged), as Anton ignores it. The rewrite holds the file's lock and lands atomically; the
previous file is copied to ``memory/backups/`` first (the last few copies are kept). Any doubt (a model error, no
existing entry kept) leaves the file exactly as it was.

Brain analogy: synaptic homeostasis during sleep, which prunes redundant traces so the important ones stand out.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from anton_tui.memory.engrams.engram import RULE_KINDS, Engram, ParsedFile, split_entry
from anton_tui.memory.files.backups import keep_backup

if TYPE_CHECKING:
    from anton_tui.memory.engrams.hippocampus import Hippocampus

log = logging.getLogger(__name__)

MIN_FILE_ENTRIES = 8  # smaller files are not worth a model call
RULE = (
    f"a rules or lessons file is compacted once it holds {MIN_FILE_ENTRIES} entries or more: in the background "
    "when a scope has more than 20 entries, or now with /memory vacuum"
)
"""The one way the app states when compaction happens (the 20 is `cortex.COMPACTION_THRESHOLD`)."""
MAX_TOKENS = 4096  # the answer is a list of numbers, so this is plenty even for hundreds of entries
FILES = ("rules", "lessons")


class CompactionResult(BaseModel):
    """The numbers of the memory entries to keep; every entry not listed is removed."""

    keep: list[int] = Field(
        description=(
            "Numbers (as shown before each entry) of the entries to keep. List every entry that should stay; "
            "leave out only exact or near duplicates of a kept entry and entries a kept entry clearly supersedes."
        )
    )


SYSTEM_PROMPT = """\
You tidy an assistant's long-term memory file. Each numbered line is one entry (a rule or a lesson, sometimes with \
metadata in an HTML comment: confidence, source, topic, ts = date written).

Decide which entries to keep:
- When several entries say the same thing, keep the clearest, most specific one (prefer higher confidence, then \
the newer date) and leave out the others.
- Leave out an entry only when a kept entry makes it redundant or a newer entry plainly contradicts and replaces it.
- An entry marked (dormant) has not been chosen for a prompt in a long stretch of turns: leave it out when it is \
redundant, out of date or too narrow to matter, and keep it otherwise.
- Keep everything else, including entries you do not fully understand. When in doubt, keep the entry.

You cannot edit entries, only choose them. Answer with the numbers of the entries to keep."""


@dataclass(frozen=True)
class CompactionOutcome:
    """What happened to one file: `kept`/`before` entries, the backup written, or why it was left unchanged."""

    scope: str
    file: str
    before: int
    kept: int | None = None
    backup: str | None = None
    problem: str | None = None
    ignored: tuple[int, ...] = ()
    """Numbers the model named that are no entry (left out, as Anton leaves them out)."""

    @property
    def changed(self) -> bool:
        return self.problem is None and self.kept is not None and self.kept < self.before

    def __str__(self) -> str:
        where = f"{self.scope} {self.file}.md"
        if self.problem:
            return f"{where}: left unchanged ({self.problem})"
        ignored = f"; ignored entry numbers that do not exist: {_listed(self.ignored)}" if self.ignored else ""
        if not self.changed:
            return f"{where}: all {self.before} entries kept{ignored}"
        return f"{where}: kept {self.kept} of {self.before} entries (previous file saved as {self.backup}){ignored}"


def _listed(numbers: tuple[int, ...]) -> str:
    return ", ".join(str(number) for number in numbers)


def file_sizes(hc: Hippocampus) -> dict[str, int]:
    """How many entries compaction would offer the model in each file of one scope (what `MIN_FILE_ENTRIES` counts)."""
    return {file: len(candidates(hc.read_file(file), file)) for file in FILES}


def candidates(parsed: ParsedFile, file: str) -> list[tuple[Engram, int]]:
    """Entries compaction may choose between, with their line index, in file order: readable entries under known
    sections, and (rules) readable rules above the first heading, offered as Always rules."""
    troubled = {problem.line - 1 for problem in parsed.problems if problem.line is not None}
    found = _above_first_heading(parsed) if file == "rules" else []
    for engram, index in zip(parsed.entries, parsed.entry_lines, strict=False):
        if index in troubled or (file == "rules" and engram.kind not in RULE_KINDS):
            continue
        found.append((engram, index))
    return found


def _first_heading(parsed: ParsedFile) -> int:
    return min(parsed.headings.values(), default=len(parsed.lines))


def _above_first_heading(parsed: ParsedFile) -> list[tuple[Engram, int]]:
    found = []
    for index in range(_first_heading(parsed)):
        stripped = parsed.lines[index].strip()
        if not stripped.startswith("- "):
            continue
        text, confidence, topic, source, day, issue = split_entry(stripped[2:])
        if text and not issue:
            found.append(
                (
                    Engram(
                        text,
                        "always",
                        parsed.entries[0].scope if parsed.entries else "project",
                        confidence,
                        topic,
                        source,
                        day,
                    ),
                    index,
                )
            )
    return found


def _rebuilt(parsed: ParsedFile, doomed: set[int], moving: set[int]) -> list[str]:
    """`parsed.lines` without the lines at `doomed`, and with the rules at `moving` (above the first heading) moved
    to the top of the ``## Always`` section, where Anton's compaction puts them (file order: they came first). A
    file without that heading gets it, before its first heading."""
    lines = parsed.lines

    def kept(start: int, end: int) -> list[str]:
        return [lines[i] for i in range(start, end) if i not in doomed and i not in moving]

    moved = [_terminated(lines[i]) for i in sorted(moving)]
    if not moved:
        return kept(0, len(lines))
    always = parsed.headings.get("always")
    if always is not None:
        return kept(0, always + 1) + moved + kept(always + 1, len(lines))
    first = _first_heading(parsed)
    head = kept(0, first)
    if first < len(lines):
        return [*head, "## Always\n", *moved, "\n", *kept(first, len(lines))]
    if head:
        head[-1] = _terminated(head[-1])
    return head + (["\n"] if head and head[-1].strip() else []) + ["## Always\n", *moved]


def _terminated(line: str) -> str:
    return line if line.endswith(("\n", "\r")) else line + "\n"


DORMANT = " (dormant)"


def _numbered(parsed: ParsedFile, file: str, entries: list[tuple[Engram, int]], dormant: frozenset[str]) -> str:
    """The entries as the model sees them: numbered, rules with their kind, dormant ones marked (see `counters`)."""
    rows = []
    for number, (engram, index) in enumerate(entries):
        body = parsed.lines[index].strip().removeprefix("- ") + (DORMANT if engram.id in dormant else "")
        rows.append(f"{number}. [{engram.kind}] {body}" if file == "rules" else f"{number}. {body}")
    return "\n".join(rows)


def _line_key(parsed: ParsedFile, engram: Engram, index: int) -> tuple[str, str]:
    return engram.kind, parsed.lines[index].rstrip("\r\n")


def _backup(hc: Hippocampus, file: str, data: bytes) -> str:
    return str(keep_backup(hc.base_dir / "backups", f"{file}.md", data))


async def compact_file(hc: Hippocampus, file: str, llm: Any, scope: str) -> CompactionOutcome | None:
    """Compact one file of one scope; None when it is too small to bother."""
    parsed = hc.read_file(file)
    offered = candidates(parsed, file)
    if len(offered) < MIN_FILE_ENTRIES:
        return None
    if not parsed.writable:
        return CompactionOutcome(scope, file, len(offered), problem="the file cannot be read cleanly")
    outcome = CompactionOutcome(scope, file, len(offered))
    dormant = frozenset(entry for entry, figures in hc.counters.figures(file).items() if figures.dormant)
    try:
        result = await llm.generate_object_code(
            CompactionResult,
            system=SYSTEM_PROMPT,
            messages=[
                {"role": "user", "content": f"Entries of {file}.md:\n\n{_numbered(parsed, file, offered, dormant)}"}
            ],
            max_tokens=MAX_TOKENS,
        )
    except Exception as exc:  # any model failure: the file stays as it is
        log.warning("compaction of %s skipped: %s", hc.base_dir / f"{file}.md", exc)
        return _failed(outcome, f"the model call failed: {exc}")
    named = set(result.keep)
    ignored = tuple(sorted(number for number in named if not 0 <= number < len(offered)))
    keep = named.difference(ignored)
    if ignored:
        log.warning(
            "compaction of %s: ignored entry numbers that do not exist: %s",
            hc.base_dir / f"{file}.md",
            _listed(ignored),
        )
    outcome = replace(outcome, ignored=ignored)
    if not keep:
        why = "the model kept nothing" if not ignored else "the model named no entry that exists"
        return _failed(outcome, why)
    stray = {index for engram, index in _above_first_heading(parsed)} if file == "rules" else set()
    if len(keep) == len(offered) and not stray:
        return replace(outcome, kept=len(offered))

    drop_lines = {index for number, (_, index) in enumerate(offered) if number not in keep}
    drop_keys = Counter(_line_key(parsed, e, index) for e, index in offered if index in drop_lines)
    written: dict[str, Any] = {}

    def change(current: ParsedFile) -> list[str] | None:
        if current.raw == parsed.raw:
            doomed = drop_lines
        else:  # the file changed while the model thought: drop the same lines wherever they are now
            remaining = Counter(drop_keys)
            doomed = set()
            for engram, index in candidates(current, file):
                key = _line_key(current, engram, index)
                if remaining[key] > 0:
                    remaining[key] -= 1
                    doomed.add(index)
        moving = {index for _, index in _above_first_heading(current)} - doomed if file == "rules" else set()
        if not doomed and not moving:
            return None
        before = len(candidates(current, file))
        written.update(backup=_backup(hc, file, current.raw), before=before, kept=before - len(doomed))
        return _rebuilt(current, doomed, moving)

    try:
        changed = hc.rewrite_file(file, change)
    except Exception as exc:  # a lock or disk problem: nothing was replaced
        log.warning("compaction of %s failed: %s", hc.base_dir / f"{file}.md", exc)
        return _failed(outcome, str(exc))
    if not changed:
        return _failed(outcome, "the entries to remove were already gone")
    return replace(outcome, before=written["before"], kept=written["kept"], backup=written["backup"])


def _failed(outcome: CompactionOutcome, problem: str) -> CompactionOutcome:
    return replace(outcome, kept=None, backup=None, problem=problem)
