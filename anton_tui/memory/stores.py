"""The memory stores of one project: both memory scopes, the skills, the episode log and where they live.

The `Runtime` holds one `MemoryStores`, and the session's cortex and the Runtime's services share that same set. The
UI never holds it: it sees memory through the Runtime's snapshots.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.memory.episodes.documents import DocumentRecall
from anton_tui.memory.episodes.store import EpisodicMemory
from anton_tui.memory.history.recorder import MemoryRecorder
from anton_tui.memory.skills.sources import SkillSource
from anton_tui.memory.skills.store import SkillStore
from anton_tui.paths import AntonPaths

SCOPES = ("global", "project")


class StoreSettings(Protocol):
    """The settings the stores are made from (a subset of `anton_tui.config.Settings`); the skill sources read their
    own switches from the same object."""

    @property
    def home(self) -> Path: ...

    @property
    def project_dir(self) -> Path: ...

    @property
    def episodic_memory(self) -> bool: ...

    @property
    def managed_memory(self) -> str | None:
        """The administrator's read-only memory folder ("off": none; None: the system's, when there is one)."""
        ...


@dataclass(frozen=True)
class MemoryStores:
    global_hc: Hippocampus
    project_hc: Hippocampus
    skills: SkillStore
    episodic: EpisodicMemory
    paths: AntonPaths
    recorder: MemoryRecorder | None = None  # the history of every memory change (see `history`)
    managed: Hippocampus | None = None  # the read-only managed tier (see `managed`), None when there is none

    @classmethod
    def from_paths(
        cls,
        paths: AntonPaths,
        *,
        episodic_enabled: bool = True,
        skill_sources: Iterable[SkillSource] = (),
        history: bool = True,
        managed_dir: Path | None = None,
    ) -> MemoryStores:
        global_hc = Hippocampus(paths.global_memory, scope="global")
        project_hc = Hippocampus(paths.project_memory, scope="project")
        recorder = MemoryRecorder.from_paths(paths) if history else None
        global_hc.recorder = project_hc.recorder = recorder
        return cls(
            global_hc=global_hc,
            project_hc=project_hc,
            skills=SkillStore(paths.skills, sources=skill_sources, listing_snapshot=paths.skill_listing_snapshot),
            episodic=EpisodicMemory(
                paths.episodes,
                enabled=episodic_enabled,
                documents=DocumentRecall(paths.conversations, paths.reflections),
            ),
            paths=paths,
            recorder=recorder,
            managed=_managed(managed_dir),
        )

    @classmethod
    def from_settings(cls, settings: StoreSettings) -> MemoryStores:
        """Stores for `settings.home` and `settings.project_dir` (episodes follow `settings.episodic_memory`)."""
        from anton_tui.memory.skills.sources import sources_for_settings
        from anton_tui.paths import managed_dir

        return cls.from_paths(
            AntonPaths.from_settings(settings),
            episodic_enabled=bool(settings.episodic_memory),
            skill_sources=sources_for_settings(settings),
            managed_dir=managed_dir(settings.managed_memory),
        )

    def shared(self) -> bool:
        """Whether a scope is shared through a git remote (read from its history's config: cheap, no git library)."""
        if self.recorder is None:
            return False
        for scope in SCOPES:
            try:
                config = (self.recorder.history(scope).git_dir / "config").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if '[remote "' in config:
                return True
        return False

    @property
    def managed_dir(self) -> Path | None:
        return self.managed.base_dir if self.managed is not None else None

    def hippocampus(self, scope: str) -> Hippocampus:
        """The store of one scope: ``"global"`` or ``"project"``."""
        if scope == "global":
            return self.global_hc
        if scope == "project":
            return self.project_hc
        raise ValueError(f"unknown memory scope {scope!r}: use 'global' or 'project'")

    def scoped(self) -> list[tuple[str, Hippocampus]]:
        """Both scopes, global first (the order the inspector lists them)."""
        return [("global", self.global_hc), ("project", self.project_hc)]


def _managed(folder: Path | None) -> Hippocampus | None:
    if folder is None:
        return None
    from anton_tui.memory.engrams.managed import ManagedHippocampus

    return ManagedHippocampus(folder)
