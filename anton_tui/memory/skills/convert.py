"""Converting one skill from the older meta.json/declarative.md layout to SKILL.md, when the user asks for it.

The result is what anton-agent 2.26.10.26.1 makes of the same folder when it migrates it (same SKILL.md bytes,
`code/` moved to `scripts/`, the folder renamed to its hyphen-case label), with one difference: the old folder is
first copied whole into a backup outside the skills folder, so nothing the user wrote is lost. (Inside the skills
folder anton-agent would treat the backup as a skill of its own and migrate it too.)
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from anton_tui.memory.files.locking import folder_lock
from anton_tui.memory.skills.format import (
    SkillFormatError,
    folder_kind,
    new_front_matter,
    normalize_name,
    parse_meta,
    read_text,
    render_skill_md,
    write_text,
)
from anton_tui.memory.skills.store import BrokenSkill, BrokenSkillError, Skill, SkillNotFoundError, SkillStore


@dataclass(frozen=True)
class Converted:
    skill: Skill
    old_label: str
    backup: Path


def backups_folder(store: SkillStore) -> Path:
    """Where converted skills' old files are kept: `<skills folder>/../backups/skills/`."""
    return store.root.parent / "backups" / "skills"


def converted_label(store: SkillStore, old_label: str) -> str:
    """The label a conversion gives `old_label` (`csv_summary` → `csv-summary`, `-2`… when that is taken)."""
    new = normalize_name(old_label) or "skill"
    if new == old_label:
        return new
    candidate, number = new, 2
    while os.path.lexists(store.root / candidate):
        candidate, number = f"{new}-{number}", number + 1
    return candidate


def convert_legacy(store: SkillStore, label: str) -> Converted:
    """Back up and convert the older-layout skill `label`; returns it as it now loads.

    Raises SkillNotFoundError when there is no such skill, ValueError when it is already SKILL.md, and
    BrokenSkillError (nothing changed) when its files cannot be read.
    """
    folder = store._resolve(label)
    if folder is None:
        raise SkillNotFoundError(f"no skill labelled {label!r}")
    if folder_kind(folder) != "anton":
        raise ValueError(f"{folder.name} is already a SKILL.md skill")
    problem = store.problem(folder.name)
    if problem is not None:
        raise BrokenSkillError(problem)
    old_label = folder.name
    with folder_lock(folder):
        try:
            meta = parse_meta(read_text(folder / "meta.json"), old_label)
            procedure = read_text(folder / "declarative.md")
        except (SkillFormatError, OSError) as exc:
            raise BrokenSkillError(BrokenSkill(old_label, folder, str(exc))) from None
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        backup = backups_folder(store) / f"{old_label}.{stamp}"
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(folder, backup, symlinks=True)
        new_label = converted_label(store, old_label)
        front = new_front_matter(
            label=new_label,
            display_name=meta.name,
            description=meta.description.strip(),
            when_to_use=meta.when_to_use.strip(),
            provenance=meta.provenance or "manual",
            created_at=meta.created_at,
        )
        write_text(folder / "SKILL.md", render_skill_md(front, procedure))
        code, scripts = folder / "code", folder / "scripts"
        if code.is_dir() and not os.path.lexists(scripts):
            code.rename(scripts)
        (folder / "meta.json").unlink(missing_ok=True)
        (folder / "declarative.md").unlink(missing_ok=True)
    if new_label != old_label:
        folder.rename(store.root / new_label)
    skill = store.load(new_label)
    if skill is None:
        raise BrokenSkillError(BrokenSkill(new_label, store.root / new_label, "the converted skill does not load"))
    return Converted(skill, old_label, backup)
