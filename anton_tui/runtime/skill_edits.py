"""Editing saved skills: replacing one part of a skill, checking a new label, renaming a skill's folder.

These are the rules the skills screen applies; they live here so that every editor of skills (the screen, a command,
a test) applies the same ones, and the file work happens in the engine.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

from anton_tui.memory.skills.store import Skill, SkillStore, slugify, validate_label

SKILL_MD_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
NEW_PROCEDURE = "1. Describe the first step.\n"


def part_folder(skill: Skill) -> str:
    """Where a skill keeps its code files: `scripts/` in a SKILL.md skill, `code/` in the older layout."""
    return "scripts/" if skill.format == "skill_md" else "code/"


def part_text(skill: Skill, part: str, file: str) -> str | None:
    """The text of one part of `skill` (`file` is its path inside the skill folder), or None when it has none."""
    match part:
        case "procedure":
            return skill.declarative_md
        case "chunks":
            return skill.chunks_md
        case "code":
            return skill.code_files.get(file.removeprefix(part_folder(skill)))
        case "reference":
            return skill.reference_files.get(file.removeprefix("references/"))
        case "requirements":
            return skill.requirements
    return None


def converted_part_file(part: str, file: str) -> str:
    """Where an edited file of an older-layout skill lives once the skill is SKILL.md (`code/` becomes `scripts/`)."""
    if part == "code" and file.startswith("code/"):
        return "scripts/" + file.removeprefix("code/")
    if part == "procedure":
        return "SKILL.md"
    return file


def edited_skill(skill: Skill, part: str, file: str, text: str) -> Skill:
    """`skill` with one part replaced by `text`. Raises ValueError when the result would not be a valid skill."""
    validate_label(skill.label)
    match part:
        case "procedure":
            if not text.strip():
                raise ValueError("The procedure cannot be empty: a skill is its procedure.")
            return replace(skill, declarative_md=text)
        case "chunks":
            if skill.format == "skill_md":
                raise ValueError("chunks.md is not part of a SKILL.md skill; put notes under references/ instead.")
            return replace(skill, chunks_md=text)
        case "code":
            return replace(skill, code_files={**skill.code_files, file.removeprefix(part_folder(skill)): text})
        case "reference":
            return replace(skill, reference_files={**skill.reference_files, file.removeprefix("references/"): text})
        case "requirements":
            return replace(skill, requirements=text)
    raise ValueError(f"{file} is read-only.")


def label_problem(label: str, skill_format: str, store: SkillStore, current: str | None = None) -> str | None:
    """Why `label` cannot name a skill of `skill_format` in `store`, or None when it can."""
    try:
        validate_label(label)
    except ValueError as exc:
        return str(exc).capitalize() + "."
    if skill_format == "skill_md":
        if not SKILL_MD_NAME.match(label) or "--" in label or len(label) > 64:
            return "A SKILL.md label uses lowercase letters, digits and single hyphens (at most 64)."
    elif label != slugify(label):
        return f"A label uses lowercase letters, digits and underscores: try {slugify(label)}."
    if label != current and store.exists(label):
        return f"A skill called {label} already exists."
    return None


class SkillRenameError(ValueError):
    """A rename that did not happen; the message says why, and nothing was moved."""


def rename_skill(store: SkillStore, label: str, new_label: str) -> tuple[Skill, str | None]:
    """Move the skill's folder to `new_label` (every file goes along), then record the label inside it.

    Returns the renamed skill and a warning when the folder moved but the label inside could not be updated.
    Raises `SkillRenameError` when nothing was moved.
    """
    skill = store.load(label)
    if skill is None or skill.path is None:
        raise SkillRenameError(f"{label} cannot be loaded; fix or delete it first.")
    if skill.read_only:
        raise SkillRenameError(f"{label} is read-only here (it is not one of your skills); nothing was moved.")
    if skill.format != "skill_md":
        raise SkillRenameError(
            f"{label} is kept in the older layout; edit and save it once (it is converted to SKILL.md, its old files "
            "backed up), then rename it."
        )
    problem = label_problem(new_label, skill.format, store)
    if problem:
        raise SkillRenameError(problem)
    target = store.root / new_label
    try:
        os.rename(skill.path, target)
    except OSError as exc:
        raise SkillRenameError(f"Could not rename {label}: {exc.strerror}") from exc
    extra = dict(skill.extra)
    if skill.format == "skill_md":
        extra["name"] = new_label
    renamed = replace(skill, label=new_label, path=None, extra=extra)
    try:
        return store.save(renamed), None
    except (ValueError, OSError) as exc:
        return replace(renamed, path=target), f"Renamed the folder, but its label inside was not updated: {exc}"
