"""Editing saved skills: replacing one part of a skill, checking a new label, creating, renaming, converting,
copying and deleting skills.

These are the rules the skills screen applies; they live here so that every editor of skills (the screen, a command,
a test) applies the same ones, and the file work happens in the engine. `SkillEdits` is the Runtime's service that
runs them off the event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, replace

from anton_tui.memory.skills.store import Skill, SkillStore, make_unique_label, slugify, validate_label

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


@dataclass(frozen=True)
class SkillSaved:
    """A skill as written, and what the user should know about how it was written (a conversion, a copy)."""

    skill: Skill
    warning: str | None = None


class SkillEdits:
    """Writes the user's skills, each change checked first; nothing is written when a check fails."""

    def __init__(self, store: SkillStore) -> None:
        self._store = store

    async def save(self, skill: Skill) -> Skill:
        """Write a skill in its own format. Raises ValueError or OSError, with nothing written."""
        return await asyncio.to_thread(self._store.save, skill)

    async def save_part(self, label: str, part: str, file: str, text: str) -> Skill:
        """Replace one part of a saved skill (after checking the skill stays valid) and write it. Raises
        `LegacyLayoutError` for an older-layout skill and `ReadOnlySkillError` for another source's (see
        `convert_and_save_part`, `copy_and_save_part`)."""
        store = self._store

        def save() -> Skill:
            skill = store.load(label)
            if skill is None:
                raise ValueError(f"{label} cannot be loaded any more; nothing was written.")
            return store.save(edited_skill(skill, part, file, text))

        return await asyncio.to_thread(save)

    async def create(self, name: str, when_to_use: str) -> Skill:
        """A new skill with a placeholder procedure, under a label made unique from `name`."""
        store = self._store

        def create() -> Skill:
            label = make_unique_label(name, store)
            return store.save(Skill(label=label, name=name, when_to_use=when_to_use, declarative_md=NEW_PROCEDURE))

        return await asyncio.to_thread(create)

    async def relabel(self, label: str, new_label: str) -> SkillSaved:
        """Move a skill to a new label. Raises `SkillRenameError` (a ValueError) when nothing was moved."""
        skill, warning = await asyncio.to_thread(rename_skill, self._store, label, new_label)
        return SkillSaved(skill, warning)

    async def delete(self, label: str) -> bool:
        return await asyncio.to_thread(self._store.delete, label)

    async def label_problem(self, label: str, skill_format: str, current: str | None = None) -> str | None:
        """Why `label` cannot name a skill of `skill_format` (a check of names in one folder listing)."""
        return await asyncio.to_thread(label_problem, label, skill_format, self._store, current)

    async def convert_and_save_part(self, label: str, part: str, file: str, text: str) -> SkillSaved:
        """Convert an older-layout skill to SKILL.md (its old files copied to a backup first), then save one edited
        part of it. The warning names the new label and where the backup is."""
        from anton_tui.memory.skills.convert import convert_legacy

        store = self._store

        def save() -> SkillSaved:
            converted = convert_legacy(store, label)
            new_file = converted_part_file(part, file)
            saved = store.save(edited_skill(converted.skill, part, new_file, text))
            note = (
                f"Converted {converted.old_label} to SKILL.md as {saved.label}; "
                f"its old files are kept in {converted.backup}."
            )
            return SkillSaved(saved, note)

        return await asyncio.to_thread(save)

    async def copy_and_save_part(self, label: str, part: str, file: str, text: str) -> SkillSaved:
        """Copy a read-only skill (built-in or another tool's) into the user's skills, then save one edited part of
        the copy. The copy shadows the original from then on; the original is never written."""
        from anton_tui.memory.skills.sources import SOURCE_TITLES

        store = self._store

        def save() -> SkillSaved:
            original = store.load(label)
            copied = store.copy_to_user(label)
            saved = store.save(edited_skill(copied, part, file, text))
            where = SOURCE_TITLES.get(original.source, original.source) if original is not None else "its source"
            note = f"Copied {saved.label} from {where} into your skills and saved the change; your copy is used now."
            return SkillSaved(saved, note)

        return await asyncio.to_thread(save)
