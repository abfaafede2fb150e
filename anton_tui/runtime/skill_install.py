"""Installing skills from a folder or a git URL, as the Runtime offers it: fetch the source (a shallow clone for a
URL), offer every skill found to the caller, who chooses, then copy the chosen ones into the user's skills.

The choosing is the caller's (the app shows a list in a modal); the file work, the checks and the backups of
replaced skills happen here, in threads away from the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.memory.skills.install import Offer
    from anton_tui.memory.skills.store import SkillStore


@dataclass(frozen=True)
class SkillInstallReport:
    installed: list[str]
    problems: list[str]
    replaced: list[str] = field(default_factory=list)
    """Labels of the user's own skills that were replaced (their old folders are in the backups folder)."""


class SkillInstaller:
    """Installs skills into the user's skills folder."""

    def __init__(self, store: SkillStore) -> None:
        self._store = store

    async def install(self, source: str, choose: Callable[[list[Offer]], Any]) -> SkillInstallReport:
        """Install skills from a folder or a git URL (cloned with `git clone --depth 1` into a temporary folder).

        `choose(offers)` (may be async) gets every skill found, as `skill_install.Offer`s (installable or not, each
        with its clash), and returns the labels to install (None: nothing). A chosen label that is one of the
        user's skills replaces it, its old folder moved into the backups folder. Raises `InstallError` (a
        ValueError) when the source cannot be read or holds no installable skill; nothing is written then."""
        from anton_tui.memory.skills.install import InstallError, fetched, install, survey

        store = self._store
        source_cm = fetched(source)
        folder = await asyncio.to_thread(source_cm.__enter__)
        try:
            offers = await asyncio.to_thread(survey, store, folder)
            problems = [f"{offer.label}: {offer.problem}" for offer in offers if not offer.installable]
            if not any(offer.installable for offer in offers):
                raise InstallError(
                    f"No skill (a folder with a valid SKILL.md) was found in {source}; nothing was installed."
                    + (f" Problems: {'; '.join(problems)}" if problems else "")
                )
            answer = choose(offers)
            chosen: Collection[str] | None = await answer if inspect.isawaitable(answer) else answer
            installed: list[str] = []
            replaced: list[str] = []
            for offer in offers:
                if offer.candidate is None or not chosen or offer.label not in chosen:
                    continue
                try:
                    await asyncio.to_thread(install, store, offer.candidate, replace=offer.replaces)
                except InstallError as exc:
                    problems.append(str(exc))
                    continue
                installed.append(offer.label)
                if offer.replaces:
                    replaced.append(offer.label)
        finally:
            await asyncio.to_thread(source_cm.__exit__, None, None, None)
        return SkillInstallReport(installed, problems, replaced)
