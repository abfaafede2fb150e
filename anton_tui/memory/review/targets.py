"""The targets of self-changes: reading what a target holds now (for the hash check and the diff a person sees),
writing an approved change, and undoing one.

Rules, lessons and profile facts are written through `Cortex.encode_all`, so they take the same path as every other
memory write (the redactor, the locks, Anton's line format) and the memory history records the write, with the
proposal's id in its reason; undo is the history's own undo of that change, which restores the file's bytes. A
skill's SKILL.md is written whole (atomically, under the skill folder's lock, beside a fresh stats.json for a new
skill); the skills folder has no history of its own, so the SKILL.md it replaced is kept with the decision and undo
writes it back (or removes a skill that did not exist), once it has checked that nothing changed the skill since.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anton_tui.memory.files.locking import atomic_write, folder_lock
from anton_tui.memory.history.origin import producing
from anton_tui.memory.review.proposal import Proposal, digest

if TYPE_CHECKING:
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.stores import MemoryStores

REVIEW_PRODUCER = "review"


class UndoRefused(Exception):
    """The change cannot be undone as it stands (the target changed since it was applied); nothing was written."""


@dataclass(frozen=True)
class Applied:
    """What writing a change did: `action` in words, the history change that wrote an entry (empty for a skill, or
    when the entry was already there), and a skill's SKILL.md before the write (None: the skill was new)."""

    action: str
    change: str = ""
    before: str | None = None


def proposal_engram(proposal: Proposal) -> Engram:
    from anton_tui.memory.engrams.engram import Engram

    kind = proposal.form if proposal.kind == "rule" else proposal.kind
    source = "reflection" if proposal.reflection else REVIEW_PRODUCER
    scope = "global" if proposal.kind == "profile" else proposal.scope
    return Engram(proposal.text.strip(), kind, scope, "medium", proposal.topic or None, source)


class ChangeTargets:
    """The memory files and skills of one project, as the review reads and writes them."""

    def __init__(self, stores: MemoryStores, cortex: Cortex) -> None:
        self._stores = stores
        self._cortex = cortex

    @property
    def skills_root(self) -> Path:
        return self._stores.skills.root

    def skill_path(self, label: str) -> Path:
        return self.skills_root / label / "SKILL.md"

    # ---- what a target holds now -------------------------------------------------------------------------------

    def current(self, proposal: Proposal) -> str | None:
        """What the change would replace: the skill's SKILL.md, the profile fact with the same key, the same entry
        already in its file (None: nothing yet)."""
        if proposal.kind == "skill":
            try:
                return self.skill_path(proposal.label).read_text(encoding="utf-8")
            except (FileNotFoundError, NotADirectoryError):
                return None
        hc = self._stores.hippocampus("global" if proposal.kind == "profile" else proposal.scope)
        text = hc.clean_text(proposal.text)
        if proposal.kind == "profile":
            key = text.split(":", 1)[0].strip().lower()
            facts = [fact for fact in hc.identity_facts() if fact.split(":", 1)[0].strip().lower() == key]
            return facts[0] if facts else None
        kind_file = "rules" if proposal.kind == "rule" else "lessons"
        return text if any(entry.text == text for entry in hc.list_entries(kind_file)) else None

    def base(self, proposal: Proposal) -> str:
        """The digest the hash check compares: of what the target holds now."""
        return digest(self.current(proposal))

    def diff(self, proposal: Proposal) -> str:
        """The change as a person reads it: a unified diff of SKILL.md, or the entry's line in its file."""
        if proposal.kind != "skill":
            current = self.current(proposal)
            lines = [f"--- {proposal.target}", f"+++ {proposal.target} (proposed)"]
            if proposal.kind == "profile" and current is not None and current != proposal.text:
                lines.append(f"-- {current}")
            lines.append(f"+- {' '.join(proposal.text.split())}")
            return "\n".join(lines)
        before = self.current(proposal) or ""
        where = f"{proposal.label}/SKILL.md"
        return "".join(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                proposal.text.splitlines(keepends=True),
                fromfile=where if before else "/dev/null",
                tofile=f"{where} (proposed)",
            )
        ).rstrip("\n")

    # ---- writing and undoing -----------------------------------------------------------------------------------

    def apply(self, proposal: Proposal, why: str) -> Applied:
        """Write the change (blocking). Raises ValueError or OSError when it cannot be written."""
        if proposal.kind == "skill":
            return self._write_skill(proposal)
        if self._cortex.mode == "off":
            raise ValueError("memory is switched off (ANTON_MEMORY_MODE=off), so nothing can be written")
        scope = "global" if proposal.kind == "profile" else proposal.scope
        with producing(REVIEW_PRODUCER, why=f"proposal {proposal.id}: {why}", trust=_trust(proposal)):
            encoded = self._cortex.encode_all([proposal_engram(proposal)])
        action = encoded.actions[0] if encoded.actions else "nothing written"
        if action.startswith("Not saved"):
            raise ValueError(action)
        return Applied(action, self._change_of(scope, proposal.id))

    def _change_of(self, scope: str, proposal_id: str) -> str:
        recorder = self._stores.recorder
        if recorder is None:
            return ""
        recorder.flush()
        for change in recorder.history(scope).log(limit=20):
            if (
                change.producer == REVIEW_PRODUCER
                and change.why.startswith(f"proposal {proposal_id}:")
                and change.files
            ):
                return change.id
        return ""

    def _write_skill(self, proposal: Proposal) -> Applied:
        from anton_tui.memory.skills.format import SkillStats, render_json

        folder = self.skills_root / proposal.label
        folder.mkdir(parents=True, exist_ok=True)
        with folder_lock(folder):
            path = folder / "SKILL.md"
            try:
                before: str | None = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                before = None
            atomic_write(path, proposal.text.encode("utf-8"))
            stats = folder / "stats.json"
            if not os.path.lexists(stats):
                atomic_write(stats, render_json(SkillStats().to_json()).encode("utf-8"))
        action = f"{'Changed' if before is not None else 'Saved new'} skill {proposal.label}"
        return Applied(action, "", before)

    def undo(self, proposal: Proposal, applied_change: str, before: str | None) -> str:
        """Put the target back as it was before the change (blocking); returns what was done. Raises UndoRefused."""
        if proposal.kind == "skill":
            return self._undo_skill(proposal, before)
        if not applied_change:
            return "nothing to undo: the entry was already in memory when the change was applied"
        from anton_tui.memory.history import ops as history_ops

        undone = history_ops.undo(self._stores, applied_change)
        if not undone.done:
            raise UndoRefused("; ".join(conflict.describe() for conflict in undone.conflicts))
        return f"undid change {undone.target.short}" if undone.change is not None else "memory already read as before"

    def _undo_skill(self, proposal: Proposal, before: str | None) -> str:
        folder = self.skills_root / proposal.label
        path = folder / "SKILL.md"
        with folder_lock(folder) if folder.is_dir() else contextlib.nullcontext():
            try:
                now = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                now = None
            if digest(now) != digest(proposal.text):
                raise UndoRefused(f"skill {proposal.label} changed after the change was applied; it was left as it is")
            if before is not None:
                atomic_write(path, before.encode("utf-8"))
                return f"skill {proposal.label} is back as it was"
            path.unlink()
            stats = folder / "stats.json"
            if stats.is_file():
                stats.unlink()
        try:
            folder.rmdir()
        except OSError:
            pass  # other files were added to the folder since: they stay
        return f"removed the new skill {proposal.label}"


def _trust(proposal: Proposal) -> str:
    return "untrusted: " + "; ".join(proposal.tainted) if proposal.tainted else "trusted"
