"""Saved procedures ("skills") in `~/.anton/skills/<label>/`: listing, loading, saving and usage counters.

Two on-disk kinds are read side by side: SKILL.md folders with YAML front matter (newer anton-agent and the open
Agent Skills layout: references/ is stage 2, scripts/ stage 3) and the older multi-stage folder (meta.json +
declarative.md, optional chunks.md, code/, requirements.txt, stats.json). Skills are written only as SKILL.md, with
the labels and front matter anton-agent 2.26.10.26.1 writes, so it lists them without touching a byte. An older
skill is read as it is and converted (old files backed up) only on request, see `convert.py`. Files that
cannot be parsed are reported, never rewritten.

Brain analogy: this is the striatum, procedural memory. The prompt carries only one cue line per skill; the whole
procedure is pulled into working memory on demand.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from anton_tui.memory.files.locking import folder_lock
from anton_tui.memory.skills.format import (
    STAGES,
    SkillFormatError,
    SkillStats,
    StageStats,
    build_front_matter,
    bump_recommended,
    folder_kind,
    link_out,
    new_front_matter,
    normalize_name,
    parse_front_matter,
    parse_stats,
    read_text,
    render_json,
    render_skill_md,
    split_skill_md,
    stages_on_disk,
    stats_from_json,
    validate_label,
    validate_name,
    validate_relative_file,
    write_text,
)
from anton_tui.memory.skills.listing import SkillCatalog
from anton_tui.memory.skills.model import (
    OTHER_TOOL_SOURCES,
    BrokenSkill,
    BrokenSkillError,
    LegacyLayoutError,
    ReadOnlySkillError,
    Skill,
    SkillClash,
    SkillNotFoundError,
    SkillSummary,
    label_variants,
    match_key,
    slugify,
)
from anton_tui.memory.skills.reader import diagnose, read_source_skill, read_stats
from anton_tui.memory.skills.snapshot import SETTLE_NS
from anton_tui.memory.skills.sources import SOURCE_TITLES, SkillSource

T = TypeVar("T")

__all__ = [
    "BrokenSkill",
    "BrokenSkillError",
    "LegacyLayoutError",
    "ReadOnlySkillError",
    "Skill",
    "SkillClash",
    "SkillNotFoundError",
    "SkillStats",
    "SkillStore",
    "SkillSummary",
    "StageStats",
    "format_no_match",
    "format_recall",
    "make_unique_label",
    "normalize_name",
    "procedural_memory_section",
    "slugify",
    "validate_label",
]


def make_unique_label(base: str, store: SkillStore) -> str:
    """`normalize_name(slugify(base))`, or `base-2`, `base-3`… when that label (in either spelling) is taken."""
    slug = normalize_name(slugify(base)) or "skill"
    candidate, number = slug, 2
    while store.exists(candidate) or store.read_only_folder(candidate) is not None:
        candidate, number = f"{slug}-{number}", number + 1
    return candidate


def _now_iso(clock: Callable[[], datetime]) -> str:
    return clock().isoformat()


# --------------------------------------------------------------------------- the store


class SkillStore:
    """All skills under one folder (normally `~/.anton/skills`). `clock` returns the current time (tests fix it).

    Listings are the job of the `SkillCatalog` it holds (`catalog`); the store reads, writes and counts one skill."""

    def __init__(
        self,
        root: Path | str,
        *,
        clock: Callable[[], datetime] | None = None,
        sources: Iterable[SkillSource] = (),
        listing_snapshot: Path | None = None,
    ) -> None:
        self.root = Path(root)
        self._clock = clock or (lambda: datetime.now(UTC))
        self.sources = tuple(sources)
        self.catalog = SkillCatalog(self.root, self.sources, listing_snapshot)

    # ----------------------------------------------------------------- listings (the catalog's)

    @property
    def listing_warning(self) -> str | None:
        """Set when the skills folder could not be listed the last time it was read (e.g. no permission)."""
        return self.catalog.listing_warning

    def list_summaries(self) -> list[SkillSummary]:
        """Label, name, description, when_to_use and source of every healthy skill that is not shadowed, sorted by
        label; procedures are not read."""
        return self.catalog.list_summaries()

    def list_all(self, *, include_shadowed: bool = False) -> list[Skill]:
        """Every skill that loads, sorted by label (shadowed skills of read-only sources only when asked)."""
        return self.catalog.list_all(include_shadowed=include_shadowed)

    def broken(self) -> list[BrokenSkill]:
        """Skill folders whose files cannot be read, each with the reason (see `SkillCatalog.broken`)."""
        return self.catalog.broken()

    def survey(
        self, convert: Callable[[Skill], T], *, include_shadowed: bool = False
    ) -> tuple[list[T], list[BrokenSkill]]:
        """`list_all()` and `broken()` in one pass, each skill folder read once (see `SkillCatalog.survey`)."""
        return self.catalog.survey(convert, include_shadowed=include_shadowed)

    def clashes(self) -> list[SkillClash]:
        """Labels held by more than one source, each with the source that wins."""
        return self.catalog.clashes()

    def slash_commands(self) -> list[tuple[str, str]]:
        """(label, description) of each listed skill the user can run as `/label`, sorted by label."""
        return self.catalog.slash_commands()

    def save_listing_snapshot(self, *, settle_ns: int = SETTLE_NS) -> int | None:
        """Keep the skill listing for the next run's first listing (see `SkillCatalog.save_snapshot`); a skill
        changed within `settle_ns` of now waits for a later run."""
        return self.catalog.save_snapshot(settle_ns=settle_ns)

    def follow_changes(self, *, max_watches: int | None = None) -> bool:
        """Let listings learn what changed from the change feed (see `SkillCatalog.follow_changes`)."""
        return self.catalog.follow_changes(max_watches=max_watches)

    def stop_following_changes(self) -> None:
        """Stop the process's change feed; listings check by `stat` again."""
        self.catalog.stop_following_changes()

    # ----------------------------------------------------------------- read-only sources

    def read_only_folder(self, label: str) -> tuple[SkillSource, Path] | None:
        """The first read-only source holding a SKILL.md folder for `label` (either spelling), and that folder."""
        validate_label(label)
        for source in self.sources:
            for variant in label_variants(label):
                folder = source.path / variant
                if (folder / "SKILL.md").is_file():
                    return source, folder
        return None

    def _load_read_only(self, label: str, *, before_user: bool) -> Skill | None:
        for source in self.sources:
            if source.before_user != before_user:
                continue
            for variant in label_variants(label):
                folder = source.path / variant
                if not (folder / "SKILL.md").is_file():
                    continue
                skill = read_source_skill(folder, source.path, source.key)
                if skill is not None:
                    return skill
        return None

    def _resolve(self, label: str) -> Path | None:
        """The skill folder for `label`, trying both the `csv_summary` and the `csv-summary` spelling."""
        for variant in label_variants(label):
            folder = self.root / variant
            if folder.is_dir() and folder_kind(folder) is not None:
                return folder
        return None

    def exists(self, label: str) -> bool:
        """True when anything (even a broken or foreign folder) already uses this label in either spelling."""
        validate_label(label)
        return any(os.path.lexists(self.root / variant) for variant in label_variants(label))

    # ----------------------------------------------------------------- reading

    def problem(self, label: str) -> BrokenSkill | None:
        """Why `label` does not load, or None when it loads or does not exist."""
        folder = self._resolve(validate_label(label))
        return None if folder is None else diagnose(folder, self.root)[1]

    def load(self, label: str) -> Skill | None:
        """The skill `label` (either spelling) from the first source that has it (see `sources.py`), or None when
        it is absent or broken (see `problem`). A broken user skill falls back to a read-only one of the same label."""
        validate_label(label)
        if self.sources:
            skill = self._load_read_only(label, before_user=True)
            if skill is not None:
                return skill
        folder = self._resolve(label)
        skill = None if folder is None else diagnose(folder, self.root)[0]
        if skill is None and self.sources:
            skill = self._load_read_only(label, before_user=False)
        return skill

    def copy_to_user(self, label: str) -> Skill:
        """Copy the read-only skill `label` (every file of its folder) into the user's skills folder, where it
        shadows the original and can be edited. Raises ValueError when that is not possible; nothing is written."""
        found = self.read_only_folder(label)
        if found is None:
            raise SkillNotFoundError(f"no read-only skill labelled {label!r}")
        source, folder = found
        if source.before_user:
            raise ReadOnlySkillError(
                f"{folder.name} comes from {source.path} and takes precedence over your own skills; edit it there"
            )
        target = self.root / folder.name
        if os.path.lexists(target):
            raise ValueError(f"{target} already exists; nothing was copied")
        escape = link_out(folder, source.path)
        if escape is not None:
            raise ValueError(escape)
        self.root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(folder, target, ignore=shutil.ignore_patterns(".*", "__pycache__"))
        copied = self.load_user(folder.name)
        if copied is None:
            raise ValueError(f"the copy of {folder.name} does not load; it was left in {target}")
        return replace(copied, provenance="manual")

    def load_user(self, label: str) -> Skill | None:
        """The user's own skill `label` only (the one writes act on), or None."""
        folder = self._resolve(validate_label(label))
        return None if folder is None else diagnose(folder, self.root)[0]

    # ----------------------------------------------------------------- writing

    def save(self, skill: Skill) -> Skill:
        """Write `skill` and return it as stored. Counters in an existing stats.json are never touched.

        A new skill gets the label anton-agent would give it (`My New_Skill!` → `my-new-skill`). Raises
        LegacyLayoutError when the folder holds an older-layout skill (convert it first), ValueError for a bad label
        or file name, and BrokenSkillError (nothing written) when the folder's SKILL.md is malformed.
        """
        label = validate_label(skill.label)
        if skill.read_only:
            raise ReadOnlySkillError(
                f"{label} comes from {SOURCE_TITLES.get(skill.source, skill.source)} and is read-only here; copy it "
                "into your skills to change it"
            )
        validate_name(skill.name)
        for rel in [*skill.code_files, *skill.reference_files]:
            validate_relative_file(rel)
        folder = self._resolve(label)
        if folder is None:
            label = normalize_name(label)
            if not label:
                raise ValueError(f"skill label {skill.label!r} has no letters or digits")
            folder = self._resolve(label) or self.root / label
        escape = link_out(folder, self.root) if os.path.lexists(folder) else None
        if escape is not None:
            raise BrokenSkillError(BrokenSkill(folder.name, folder, escape))
        if skill.format != "skill_md" or folder_kind(folder) == "anton":
            problem = diagnose(folder, self.root)[1] if folder_kind(folder) == "anton" else None
            if problem is not None:
                raise BrokenSkillError(problem)
            raise LegacyLayoutError(
                f"{folder.name} is kept in the older meta.json/declarative.md layout; convert it to SKILL.md "
                "before saving (its old files are kept in a backup)"
            )
        folder.mkdir(parents=True, exist_ok=True)
        with folder_lock(folder):
            kind = folder_kind(folder)
            if kind == "anton":
                raise LegacyLayoutError(f"{folder.name} changed to the older layout while it was being saved")
            created_at = skill.created_at or ("" if kind is not None else _now_iso(self._clock))
            self._write_skill_md(folder, skill, created_at)
            if skill.requirements is not None:
                write_text(folder / "requirements.txt", skill.requirements)
            stats_path = folder / "stats.json"
            if not os.path.lexists(stats_path):
                write_text(stats_path, render_json(skill.stats.to_json()))
        return replace(
            skill,
            label=folder.name,
            created_at=created_at,
            path=folder,
            stats=self._stats_or(folder, skill.stats),
            stages_present=stages_on_disk(folder, skill.format),
        )

    def new_skill_md(self, skill: Skill) -> str:
        """The SKILL.md `save` writes for `skill` as a new skill (anton-agent's front matter, dated now), so that a
        change can be reviewed as the exact text it would write."""
        front = new_front_matter(
            label=normalize_name(skill.label) or skill.label,
            display_name=skill.name,
            description=skill.description,
            when_to_use=skill.when_to_use,
            provenance=skill.provenance,
            created_at=skill.created_at or _now_iso(self._clock),
        )
        return render_skill_md(front, skill.declarative_md)

    def _stats_or(self, folder: Path, fallback: SkillStats) -> SkillStats:
        try:
            return read_stats(folder)
        except (SkillFormatError, OSError):
            return fallback

    def _refuse_if_broken(self, folder: Path, check: Callable[[], object]) -> None:
        try:
            check()
        except FileNotFoundError:
            return
        except SkillFormatError as exc:
            raise BrokenSkillError(BrokenSkill(folder.name, folder, str(exc))) from None

    def _write_files(self, base: Path, files: Mapping[str, str]) -> None:
        targets = [(base / validate_relative_file(rel), text) for rel, text in files.items()]
        for path, text in targets:
            write_text(path, text)

    def _write_skill_md(self, folder: Path, skill: Skill, created_at: str) -> None:
        path = folder / "SKILL.md"
        self._refuse_if_broken(folder, lambda: parse_front_matter(split_skill_md(read_text(path))[0]))
        self._write_files(folder / "references", skill.reference_files)
        self._write_files(folder / "scripts", skill.code_files)
        if not path.exists():
            front = new_front_matter(
                label=folder.name,
                display_name=skill.name,
                description=skill.description,
                when_to_use=skill.when_to_use,
                provenance=skill.provenance,
                created_at=created_at,
            )
            write_text(path, render_skill_md(front, skill.declarative_md))
            return
        description = skill.description
        if skill.when_to_use and skill.when_to_use not in description:
            # SKILL.md has no when-to-use field; anton-agent appends it to the description the same way.
            lead = description.rstrip().rstrip(".")
            description = f"{lead}. {skill.when_to_use}" if lead else skill.when_to_use
        front = build_front_matter(
            skill.extra,
            label=folder.name,
            display_name=skill.name,
            description=description,
            provenance=skill.provenance,
            created_at=created_at,
        )
        try:
            old_front, old_body = split_skill_md(read_text(path))
            unchanged = old_body == skill.declarative_md and parse_front_matter(old_front) == front
        except FileNotFoundError:
            unchanged = False
        if not unchanged:
            write_text(path, render_skill_md(front, skill.declarative_md))

    def delete(self, label: str) -> bool:
        """Remove the skill's folder (a symlinked folder: only the link). False when there is no such skill."""
        folder = self._resolve(validate_label(label))
        if folder is None:
            return False
        if folder.is_symlink():
            folder.unlink()
        else:
            shutil.rmtree(folder)
        return True

    def increment_recommended(self, label: str, *, stage: int = 1) -> SkillStats:
        """Count one recall of `label` at `stage` (1-3) under a lock, so concurrent recalls are all counted."""
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        folder = self._resolve(validate_label(label))
        if folder is None:
            raise SkillNotFoundError(f"no skill labelled {label!r}")
        problem = diagnose(folder, self.root)[1]
        if problem is not None:  # a broken skill is left exactly as it is
            raise BrokenSkillError(problem)
        path = folder / "stats.json"
        with folder_lock(folder):
            try:
                text = read_text(path)
            except FileNotFoundError:
                data = SkillStats().to_json()
            else:
                try:
                    data = parse_stats(text)[1]
                except SkillFormatError as exc:
                    raise BrokenSkillError(BrokenSkill(folder.name, folder, str(exc))) from None
            bump_recommended(data, stage, _now_iso(self._clock))
            stats = stats_from_json(data)
            write_text(path, render_json(data))
        return stats

    def closest_match(self, bad_label: str, *, cutoff: float = 0.6) -> str | None:
        """Label of the healthy skill nearest to a mistyped one (`csv_sumary` → `csv_summary`), or None."""
        validate_label(bad_label)
        labels = [summary["label"] for summary in self.list_summaries()]
        by_key = {match_key(label): label for label in labels}
        for candidate in (bad_label, slugify(bad_label)):
            if match_key(candidate) in by_key:
                return by_key[match_key(candidate)]
        import difflib  # (only for a label typed wrong)

        matches = difflib.get_close_matches(match_key(slugify(bad_label)), list(by_key), n=1, cutoff=cutoff)
        return by_key[matches[0]] if matches else None


# --------------------------------------------------------------------------- texts for the model


def format_recall(skill: Skill, requested_label: str | None = None) -> str:
    """The recall_skill tool result: an optional did-you-mean warning, the skill's heading and its procedure."""
    lines: list[str] = []
    if requested_label and match_key(requested_label) != match_key(skill.label):
        lines += [
            f"⚠ No skill is labelled `{requested_label}`. Showing the closest one, `{skill.label}`; "
            "use that label from now on.",
            "",
        ]
    lines += [f"# Skill recalled: `{skill.label}`", f"# Skill: {skill.name or skill.label}", ""]
    if skill.description:
        lines += [skill.description, ""]
    lines += ["## Procedure (Stage 1 — declarative)", "", skill.declarative_md.strip()]
    return "\n".join(lines)


def format_no_match(requested_label: str, available: Iterable[str]) -> str:
    """The recall_skill result when no saved skill is close to the requested label."""
    labels = list(available)
    if not labels:
        return f"NO MATCH: there is no skill labelled `{requested_label}`; no skills have been saved yet."
    return f"NO MATCH: there is no skill labelled `{requested_label}`. Available skills: {', '.join(labels)}."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def procedural_memory_section(summaries: Iterable[Mapping[str, Any]]) -> str:
    """System-prompt section listing each skill's label and cue; "" when there are no skills."""
    lines = []
    for summary in summaries:
        if summary.get("model_invocable") is False:
            continue
        cue = _one_line(summary.get("when_to_use") or summary.get("description") or "")
        line = f"- `{summary['label']}` — {cue}" if cue else f"- `{summary['label']}`"
        if summary.get("source") in OTHER_TOOL_SOURCES:
            line += f" (from {SOURCE_TITLES[summary['source']]})"
        lines.append(line)
    if not lines:
        return ""
    instruction = (
        "These are procedures saved from earlier work. When the user's request fits one of them, call "
        "`recall_skill` with its label before you start and follow the steps it returns; if none fits, carry on "
        "without it."
    )
    return "\n\n## Procedural memory (skills available)\n\n" + instruction + "\n\n" + "\n".join(lines)
