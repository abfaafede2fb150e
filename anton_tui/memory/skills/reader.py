"""Reading one skill folder whole: its SKILL.md (or the older meta.json and declarative.md), its stage files,
requirements and usage counters, as a `Skill`; or, for a folder that cannot be read, a `BrokenSkill` saying why.

The store reads a skill here before it loads, saves or counts it, and the catalog (`listing.py`) reads here the
skills a full listing returns. Nothing here writes.
"""

from __future__ import annotations

from pathlib import Path

from anton_tui.memory.skills.format import (
    SkillFormatError,
    SkillStats,
    describe_error,
    folder_kind,
    front_matter_fields,
    link_out,
    parse_front_matter,
    parse_meta,
    parse_stats,
    read_text,
    read_text_files,
    split_skill_md,
    stages_on_disk,
    validate_label,
)
from anton_tui.memory.skills.model import BrokenSkill, Skill


def read_stats(folder: Path) -> SkillStats:
    """The usage counters in `folder`'s stats.json (zero when it has none). Raises SkillFormatError when damaged."""
    try:
        text = read_text(folder / "stats.json")
    except FileNotFoundError:
        return SkillStats()
    return parse_stats(text)[0]


def read_skill(folder: Path, root: Path, *, skill_md_only: bool = False) -> Skill | None:
    """The skill in `folder`, a folder of the skills folder `root`; None when it holds no skill (or, with
    `skill_md_only`, as a read-only source asks, no SKILL.md skill). Raises SkillFormatError, ValueError or OSError
    when it cannot be read, and SkillFormatError when a file in it links out of `root`."""
    label = folder.name
    kind = folder_kind(folder)
    if kind is None or (skill_md_only and kind != "skill_md"):
        return None
    escape = link_out(folder, root)
    if escape is not None:
        raise SkillFormatError(escape)
    if kind == "skill_md":
        front_text, body = split_skill_md(read_text(folder / "SKILL.md"))
        front = parse_front_matter(front_text)
        fields = front_matter_fields(front, label)
        skill = Skill(
            label=label,
            name=fields.display_name,
            description=fields.description,
            declarative_md=body,
            created_at=fields.created_at,
            provenance=fields.provenance,
            code_files=read_text_files(folder / "scripts"),
            reference_files=read_text_files(folder / "references"),
            format="skill_md",
            extra=front,
        )
    else:
        try:
            meta = parse_meta(read_text(folder / "meta.json"), label)
        except FileNotFoundError:
            raise SkillFormatError("meta.json is missing") from None
        try:
            procedure = read_text(folder / "declarative.md")
        except FileNotFoundError:
            raise SkillFormatError("declarative.md (the procedure) is missing") from None
        chunks = folder / "chunks.md"
        skill = Skill(
            label=label,
            name=meta.name,
            description=meta.description,
            when_to_use=meta.when_to_use,
            declarative_md=procedure,
            created_at=meta.created_at,
            provenance=meta.provenance,
            chunks_md=read_text(chunks) if chunks.is_file() else None,
            code_files=read_text_files(folder / "code"),
            format="anton",
            extra=meta.extra,
        )
    requirements = folder / "requirements.txt"
    skill.requirements = read_text(requirements) if requirements.is_file() else None
    skill.stats = read_stats(folder)
    skill.stages_present = stages_on_disk(folder, kind)
    skill.path = folder
    return skill


def diagnose(folder: Path, root: Path) -> tuple[Skill | None, BrokenSkill | None]:
    """(the skill, None) for a folder of the user's skills folder `root` that reads; (None, why) for one that does
    not; (None, None) for a folder that holds no skill."""
    try:
        validate_label(folder.name)
        return read_skill(folder, root), None
    except (SkillFormatError, ValueError, OSError) as exc:
        return None, BrokenSkill(folder.name, folder, describe_error(exc))


def read_source_skill(folder: Path, root: Path, source_key: str) -> Skill | None:
    """The SKILL.md skill in `folder` of the read-only source `source_key` (kept in `root`), marked as coming from
    there; None when it holds none or cannot be read (the source's listing reports why)."""
    try:
        skill = read_skill(folder, root, skill_md_only=True)
    except (SkillFormatError, ValueError, OSError):
        return None
    if skill is not None:
        skill.source = source_key
        if source_key == "builtin":
            skill.provenance = "builtin"
    return skill
