"""The saved skills as the Runtime shows them: listings, one skill or one part of it, labels, and a label the user
typed matched to a skill.

`SkillReads` reads the `SkillStore` off the event loop and hands out plain frozen snapshots: `SkillListing` for the
skills screen, `SkillUsage` rows for the inspector's Skills tab, a `SkillLookup` for the `/skill` commands.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from anton_tui.memory.skills.format import STAGES

if TYPE_CHECKING:
    from anton_tui.memory.skills.model import BrokenSkill, Skill, SkillClash
    from anton_tui.memory.skills.store import SkillStore


@dataclass(frozen=True)
class SkillListing:
    """The saved skills and the broken ones, as read at one moment: which skills have a `stats.json`, and the files
    in each broken skill's folder (shown read-only)."""

    skills: list[Skill]
    broken: list[BrokenSkill]
    with_stats: frozenset[str] = frozenset()
    broken_files: dict[str, list[str]] = field(default_factory=dict)
    clashes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Labels held by more than one source: the sources whose skill is hidden by the one listed."""

    def skill(self, label: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.label == label), None)

    def problem(self, label: str, source: str = "user") -> BrokenSkill | None:
        return next((p for p in self.broken if p.label == label and p.source == source), None)

    def files_of(self, problem: BrokenSkill) -> list[str]:
        """The files in a broken skill's folder (keyed by label, or `source:label` outside the user's folder)."""
        return self.broken_files.get(broken_key(problem.label, problem.source), [])


def broken_key(label: str, source: str) -> str:
    return label if source == "user" else f"{source}:{label}"


NEVER_USED = tuple((0, 0) for _ in STAGES)  # shared by the rows of every skill not recommended yet (most of them)


@dataclass(frozen=True, slots=True)
class SkillUsage:
    """One skill's usage counters: how often it was recalled, and recommended and used at each stage."""

    label: str
    name: str
    recalls: int
    stages: tuple[tuple[int, int], ...]  # (recommended, used) for stages 1, 2, 3
    last_used: str  # ISO time of the latest use at any stage, "" if never
    cue: str = ""
    source: str = "user"

    @classmethod
    def of(cls, skill: Skill) -> SkillUsage:
        stats = skill.stats
        stages = tuple((stats.stage(n).recommended, stats.stage(n).used) for n in STAGES)
        if stages == NEVER_USED:
            stages = NEVER_USED  # one tuple for all of them, not four per row
        last = max((stats.stage(n).last_used for n in STAGES), default="")
        return cls(skill.label, skill.name or skill.label, stats.total_recalls, stages, last, skill.cue, skill.source)


@dataclass(frozen=True)
class SkillUsageListing:
    """Every skill's usage, the folders that cannot be read, and the labels held by more than one source."""

    rows: list[SkillUsage] = field(default_factory=list)
    broken: list[BrokenSkill] = field(default_factory=list)
    clashes: list[SkillClash] = field(default_factory=list)


@dataclass(frozen=True)
class SkillLookup:
    """What a label the user typed names: the skill itself, a broken skill, or (typos tolerated) the closest label.

    `skill` is the skill named, or the closest one when `closest` is set; `invalid` says why the text cannot be a
    label at all; `labels` lists the saved skills when nothing matched."""

    requested: str
    skill: Skill | None = None
    problem: BrokenSkill | None = None
    closest: str | None = None
    invalid: str | None = None
    labels: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        """Whether a skill (readable or broken) has exactly this label."""
        return self.problem is not None or (self.skill is not None and self.closest is None)


@dataclass(frozen=True)
class SkillPart:
    """One part of a skill, read for the editor: its text (None when the skill or the part is gone), the skill it
    belongs to, and why the skill cannot be read when it is broken."""

    skill: Skill | None
    text: str | None
    problem: BrokenSkill | None = None


class SkillReads:
    """Reads the saved skills (the user's and the read-only sources') off the event loop."""

    def __init__(self, store: SkillStore) -> None:
        self._store = store

    async def listing(self) -> SkillListing:
        """Every skill with its parts, the broken ones with their files, and the clashes between sources."""
        store = self._store

        def listing() -> SkillListing:
            skills, broken = store.survey(lambda skill: skill)  # each folder read once
            with_stats = frozenset(s.label for s in skills if s.path is not None and (s.path / "stats.json").is_file())
            files = {broken_key(problem.label, problem.source): folder_files(problem.path) for problem in broken}
            clashes = {clash.label: clash.shadowed for clash in store.clashes()}
            return SkillListing(skills, broken, with_stats, files, clashes)

        return await asyncio.to_thread(listing)

    async def usage(self) -> SkillUsageListing:
        """Every skill's usage counters (only the counters are kept, not the procedures), broken folders and
        clashes."""
        store = self._store

        def read() -> SkillUsageListing:
            rows, broken = store.survey(SkillUsage.of)  # one read per folder
            return SkillUsageListing(rows, broken, store.clashes())

        return await asyncio.to_thread(read)

    async def labels(self) -> list[str]:
        """The labels of every skill the agent can recall (nothing when the folder cannot be read)."""

        def read() -> list[str]:
            try:
                return [summary["label"] for summary in self._store.list_summaries()]
            except OSError:
                return []

        return await asyncio.to_thread(read)

    async def slash_commands(self) -> list[tuple[str, str]]:
        """(label, description) of the skills the user can run as `/label` (marked `user-invocable: true`)."""
        return await asyncio.to_thread(self._store.slash_commands)

    async def load(self, label: str) -> Skill | None:
        """The skill called `label`, None when there is none or it is broken. Raises ValueError for a bad label."""
        return await asyncio.to_thread(self._store.load, label)

    async def problem(self, label: str) -> BrokenSkill | None:
        return await asyncio.to_thread(self._store.problem, label)

    async def lookup(self, requested: str) -> SkillLookup:
        """The skill `requested` names, or the closest label to it (see `SkillLookup`)."""
        store = self._store

        def find() -> SkillLookup:
            try:
                skill = store.load(requested)
                if skill is not None:
                    return SkillLookup(requested, skill=skill)
                problem = store.problem(requested)
                if problem is not None:
                    return SkillLookup(requested, problem=problem)
                closest = store.closest_match(requested)
            except ValueError as exc:
                return SkillLookup(requested, invalid=str(exc))
            if closest is not None and (skill := store.load(closest)) is not None:
                return SkillLookup(requested, skill=skill, closest=closest)
            labels = tuple(summary["label"] for summary in store.list_summaries())
            return SkillLookup(requested, closest=closest, labels=labels)

        return await asyncio.to_thread(find)

    async def part(self, label: str, part: str, file: str) -> SkillPart:
        """One part of a skill (`file` is its path inside the skill folder), as the editor opens it."""
        from anton_tui.runtime.skill_edits import part_text

        def read() -> SkillPart:
            skill = self._store.load(label)
            if skill is None:
                return SkillPart(None, None, self._store.problem(label))
            return SkillPart(skill, part_text(skill, part, file))

        return await asyncio.to_thread(read)

    async def read_file(self, label: str, relative: str, limit: int = 1024 * 1024, source: str = "user") -> str:
        """A file of a skill as text (for read-only views), cut after `limit` bytes; a short note when unreadable.
        `source` names a read-only source's folder instead of the user's own."""
        roots = {item.key: item.path for item in self._store.sources}
        root = self._store.root if source == "user" else roots.get(source)
        if root is None:
            return f"(the source {source} is switched off)"
        return await asyncio.to_thread(read_text_capped, root / label / relative, limit)


def read_text_capped(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return f"(cannot be read: {exc.strerror})"
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n… (file continues)" if len(data) > limit else "")


def folder_files(folder: Path) -> list[str]:
    """The files in a folder (paths inside it), hidden files and caches left out."""
    if not folder.is_dir():
        return []
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            files.append(rel.as_posix())
    return files
