"""Keeps memory files from growing without bound: the coding model picks which entries to keep, nothing else changes.

A scope whose rules.md and lessons.md hold more than 20 entries is compacted file by file (files with fewer than 8
entries are left alone). The model sees the entries numbered and answers only with the numbers to keep; it never
writes memory text, so every kept line stays byte for byte what it was, under the heading it was under. Lines the
parser could not read, rules under unknown headings and anything that is not an entry are never offered and never
dropped. The rewrite holds the file's lock and lands atomically; the previous file is copied to
``memory/backups/`` first (the last few copies are kept). Any doubt (a model error, an empty answer, a number out of
range) leaves the file exactly as it was.

Brain analogy: synaptic homeostasis during sleep, which prunes redundant traces so the important ones stand out.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from anton_tui.memory.cortex import COMPACTION_THRESHOLD
from anton_tui.memory.engram import RULE_KINDS, Engram, ParsedFile
from anton_tui.memory.locking import atomic_write

if TYPE_CHECKING:
    from anton_tui.memory.cortex import Cortex
    from anton_tui.memory.hippocampus import Hippocampus

log = logging.getLogger(__name__)

MIN_FILE_ENTRIES = 8  # smaller files are not worth a model call
MAX_TOKENS = 4096  # the answer is a list of numbers, so this is plenty even for hundreds of entries
BACKUPS_KEPT = 5
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

    @property
    def changed(self) -> bool:
        return self.problem is None and self.kept is not None and self.kept < self.before

    def __str__(self) -> str:
        where = f"{self.scope} {self.file}.md"
        if self.problem:
            return f"{where}: left unchanged ({self.problem})"
        if not self.changed:
            return f"{where}: all {self.before} entries kept"
        return f"{where}: kept {self.kept} of {self.before} entries (previous file saved as {self.backup})"


def candidates(parsed: ParsedFile, file: str) -> list[tuple[Engram, int]]:
    """Entries compaction may choose between, with their line index: readable entries under known sections only."""
    troubled = {problem.line - 1 for problem in parsed.problems if problem.line is not None}
    found = []
    for engram, index in zip(parsed.entries, parsed.entry_lines):
        if index in troubled or (file == "rules" and engram.kind not in RULE_KINDS):
            continue
        found.append((engram, index))
    return found


def _numbered(parsed: ParsedFile, file: str, entries: list[tuple[Engram, int]]) -> str:
    rows = []
    for number, (engram, index) in enumerate(entries):
        body = parsed.lines[index].strip().removeprefix("- ")
        rows.append(f"{number}. [{engram.kind}] {body}" if file == "rules" else f"{number}. {body}")
    return "\n".join(rows)


def _line_key(parsed: ParsedFile, engram: Engram, index: int) -> tuple[str, str]:
    return engram.kind, parsed.lines[index].rstrip("\r\n")


def _backup(hc: "Hippocampus", file: str, data: bytes) -> str:
    folder = hc.base_dir / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    path = folder / f"{file}.md.{stamp}.bak"
    atomic_write(path, data)
    for old in sorted(folder.glob(f"{file}.md.*.bak"))[:-BACKUPS_KEPT]:
        old.unlink(missing_ok=True)
    return str(path)


async def compact_file(hc: "Hippocampus", file: str, llm: Any, scope: str) -> CompactionOutcome | None:
    """Compact one file of one scope; None when it is too small to bother."""
    parsed = hc.read_file(file)
    offered = candidates(parsed, file)
    if len(offered) < MIN_FILE_ENTRIES:
        return None
    if not parsed.writable:
        return CompactionOutcome(scope, file, len(offered), problem="the file cannot be read cleanly")
    outcome = CompactionOutcome(scope, file, len(offered))
    try:
        result = await llm.generate_object_code(
            CompactionResult,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": f"Entries of {file}.md:\n\n{_numbered(parsed, file, offered)}"}],
            max_tokens=MAX_TOKENS,
        )
    except Exception as exc:  # any model failure: the file stays as it is
        log.warning("compaction of %s skipped: %s", hc.base_dir / f"{file}.md", exc)
        return _failed(outcome, f"the model call failed: {exc}")
    keep = set(result.keep)
    if not keep:
        return _failed(outcome, "the model kept nothing")
    if any(not 0 <= number < len(offered) for number in keep):
        return _failed(outcome, f"the model named entries that do not exist: {sorted(keep)}")
    if len(keep) == len(offered):
        return CompactionOutcome(scope, file, len(offered), kept=len(offered))

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
        if not doomed:
            return None
        before = len(candidates(current, file))
        written.update(backup=_backup(hc, file, current.raw), before=before, kept=before - len(doomed))
        return [line for index, line in enumerate(current.lines) if index not in doomed]

    try:
        changed = hc.rewrite_file(file, change)
    except Exception as exc:  # a lock or disk problem: nothing was replaced
        log.warning("compaction of %s failed: %s", hc.base_dir / f"{file}.md", exc)
        return _failed(outcome, str(exc))
    if not changed:
        return _failed(outcome, "the entries to remove were already gone")
    return CompactionOutcome(scope, file, written["before"], written["kept"], written["backup"])


def _failed(outcome: CompactionOutcome, problem: str) -> CompactionOutcome:
    return CompactionOutcome(outcome.scope, outcome.file, outcome.before, problem=problem)


async def compact_cortex(cortex: "Cortex", *, force: bool = False) -> list[CompactionOutcome]:
    """Compact every scope over the threshold (every scope with `force`); one outcome per file looked at."""
    if cortex.llm is None:
        raise RuntimeError("compaction needs a language model, and this memory has none")
    outcomes = []
    for label, hc in cortex.scopes():
        if not force and hc.entry_count() <= COMPACTION_THRESHOLD:
            continue
        for file in FILES:
            outcome = await compact_file(hc, file, cortex.llm, label.lower())
            if outcome is not None:
                outcomes.append(outcome)
    return outcomes
