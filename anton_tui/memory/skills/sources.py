"""Where skills come from besides the user's own `~/.anton/skills`: the project's `.agents/skills`, the skill folders
other agent tools keep in the home folder (`~/.agents/skills`, `~/.claude/skills`) and the built-in skills shipped
inside this package. All of them are read here and never written.

When two places hold a skill with the same label, the first one in this order wins and the others are shown as
shadowed: the project's `.agents/skills`, then the user's `~/.anton/skills`, then `~/.agents/skills`, then
`~/.claude/skills`, then the built-in skills. Each source except the user's own can be switched off in the settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUILTIN_ROOT = Path(__file__).with_name("builtin_skills")


@dataclass(frozen=True)
class SkillSource:
    """A read-only folder of SKILL.md skills. `before_user`: its skills shadow the user's own of the same label."""

    key: str
    title: str
    path: Path
    before_user: bool = False


USER_TITLE = "Your skills"
SOURCE_TITLES = {
    "project": "Project (.agents/skills)",
    "user": USER_TITLE,
    "agents": "~/.agents/skills",
    "claude": "~/.claude/skills",
    "builtin": "Built-in",
}
SOURCE_ORDER = ("project", "user", "agents", "claude", "builtin")
SOURCE_SETTINGS = {
    "project": "skills_project_agents",
    "agents": "skills_user_agents",
    "claude": "skills_claude",
    "builtin": "skills_builtin",
}
"""The setting (ANTON_<NAME>) that switches each read-only source on or off."""


def skill_sources(
    project_dir: Path, *, home: Path | None = None, enabled: Mapping[str, bool] | None = None
) -> tuple[SkillSource, ...]:
    """The read-only sources for `project_dir`, in precedence order, leaving out those `enabled` switches off.
    `home` defaults to the real home folder (`Path.home()`)."""
    home = Path.home() if home is None else Path(home)
    candidates = (
        SkillSource("project", SOURCE_TITLES["project"], Path(project_dir) / ".agents" / "skills", before_user=True),
        SkillSource("agents", SOURCE_TITLES["agents"], home / ".agents" / "skills"),
        SkillSource("claude", SOURCE_TITLES["claude"], home / ".claude" / "skills"),
        SkillSource("builtin", SOURCE_TITLES["builtin"], BUILTIN_ROOT),
    )
    switches = enabled or {}
    return tuple(source for source in candidates if switches.get(source.key, True))


def in_precedence_order(sources: tuple[SkillSource, ...]) -> list[SkillSource | None]:
    """`sources` in precedence order, with None standing for the user's own folder (after those `before_user`)."""
    before = [source for source in sources if source.before_user]
    return [*before, None, *(source for source in sources if not source.before_user)]


def sources_for_settings(settings: Any) -> tuple[SkillSource, ...]:
    """The sources the settings leave switched on."""
    enabled = {key: bool(getattr(settings, name, True)) for key, name in SOURCE_SETTINGS.items()}
    return skill_sources(Path(settings.project_dir), enabled=enabled)
