"""Where things live on disk: the global home (``~/.anton``) and a project's ``.anton`` folder.

The layout is the one anton-agent uses, so both programs read and write the same files.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_FILE_HEADER = "# Anton environment variables\n"

ANTON_MD_TEMPLATE = """\
# Anton Workspace

Created: {date}

<!-- Add project context, conventions, and notes below.
     Anton reads this file at the start of every conversation. -->
"""


MANAGED_MEMORY_DEFAULT = Path("/etc/anton/memory")  # the managed memory tier's folder when nothing else is set
MANAGED_OFF = ("off", "none", "false", "0", "no")


def managed_dir(setting: str | None, system_default: Path = MANAGED_MEMORY_DEFAULT) -> Path | None:
    """The managed memory tier's folder for a setting value (None: no managed tier; see `memory/engrams/managed.py`)."""
    if setting is not None and setting.strip():
        if setting.strip().lower() in MANAGED_OFF:
            return None
        return Path(setting.strip()).expanduser()
    return system_default if system_default.is_dir() else None


@dataclass(frozen=True)
class AntonPaths:
    home: Path
    project_dir: Path

    @classmethod
    def from_settings(cls, settings: Any) -> AntonPaths:
        return cls(home=Path(settings.home), project_dir=Path(settings.project_dir))

    # Global, shared by every project.
    @property
    def global_env(self) -> Path:
        return self.home / ".env"

    @property
    def global_memory(self) -> Path:
        return self.home / "memory"

    @property
    def skills(self) -> Path:
        return self.home / "skills"

    @property
    def skill_listing_snapshot(self) -> Path:
        """The skill listing of the last run, which the next run's first listing checks instead of reading every
        skill (derived: see `memory.skills.snapshot`)."""
        return self.home / "cache" / "skill-listing.txt"

    @property
    def themes(self) -> Path:
        return self.home / "themes"

    # This project only.
    @property
    def project_anton(self) -> Path:
        return self.project_dir / ".anton"

    @property
    def project_memory(self) -> Path:
        return self.project_anton / "memory"

    @property
    def episodes(self) -> Path:
        return self.project_anton / "episodes"

    @property
    def venvs(self) -> Path:
        return self.project_anton / "scratchpad-venvs"

    @property
    def project_env(self) -> Path:
        return self.project_anton / ".env"

    @property
    def anton_md(self) -> Path:
        return self.project_anton / "anton.md"

    @property
    def conversations(self) -> Path:
        """Summaries of the finished conversations (Markdown, one per conversation)."""
        return self.project_anton / "conversations"

    @property
    def reflections(self) -> Path:
        """The daily, weekly and monthly reflections, one folder per kind."""
        return self.project_anton / "reflections"

    @property
    def acc_journal(self) -> Path:
        """The ACC's journal, one file per day."""
        return self.project_anton / "acc"

    @property
    def review_book(self) -> Path:
        """Every proposed self-change and the review's decisions about it."""
        return self.project_anton / "review" / "proposals.json"

    def ensure_workspace(self) -> list[Path]:
        """Create the project's ``.anton/``, ``memory/``, ``anton.md`` and ``.env`` where missing.

        Existing files are never touched. Returns what was created.
        """
        created = [folder for folder in (self.project_anton, self.project_memory) if not folder.is_dir()]
        self.project_memory.mkdir(parents=True, exist_ok=True)
        today = datetime.date.today().isoformat()
        if _create_new(self.anton_md, ANTON_MD_TEMPLATE.format(date=today)):
            created.append(self.anton_md)
        if _create_new(self.project_env, ENV_FILE_HEADER, private=True):
            created.append(self.project_env)
        return created


def _create_new(path: Path, text: str, *, private: bool = False) -> bool:
    """Write ``text`` to ``path`` only if nothing is there yet, even when another process races us."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True
