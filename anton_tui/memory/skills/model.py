"""What a skill is, as the rest of the program sees it: the `Skill` record, a broken skill's report, the one-line
summaries the prompt lists, label clashes between sources, the errors a skill operation raises, and the label rules
(spelling variants, the hyphen-case slug).

Kept apart from `store.py` (reading and writing skill folders) and `listing.py` (the cached listing) so that
both can share these types without importing each other.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from anton_tui.memory.skills.format import SkillFormat, SkillStats, validate_label


@dataclass
class Skill:
    """One saved procedure. `label` is its folder name; `declarative_md` is the stage-1 procedure text."""

    label: str
    name: str = ""
    description: str = ""
    when_to_use: str = ""
    declarative_md: str = ""
    created_at: str = ""
    provenance: str = "manual"
    chunks_md: str | None = None
    code_files: dict[str, str] = field(default_factory=dict)
    reference_files: dict[str, str] = field(default_factory=dict)
    requirements: str | None = None
    format: SkillFormat = "skill_md"
    path: Path | None = None
    stats: SkillStats = field(default_factory=SkillStats)
    stages_present: tuple[int, ...] = (1,)
    extra: dict[str, Any] = field(default_factory=dict)
    """meta.json keys this app does not interpret, or the whole SKILL.md front matter; written back unchanged."""
    source: str = "user"
    """Where it was read: "user" (`~/.anton/skills`, the only place written) or a read-only source's key."""

    @property
    def read_only(self) -> bool:
        return self.source != "user"

    @property
    def allowed_tools(self) -> list[str] | None:
        """The Agent Skills `allowed-tools` field (space- or comma-separated text, or a list), None when unset."""
        value = self.extra.get("allowed-tools") if self.format == "skill_md" else None
        if value is None:
            return None
        items = value if isinstance(value, list) else str(value).replace(",", " ").split()
        return [str(item).strip() for item in items if str(item).strip()]

    @property
    def user_invocable(self) -> bool:
        """`user-invocable: true`: the user can run it as the slash command `/label`."""
        return self.format == "skill_md" and self.extra.get("user-invocable") is True

    @property
    def model_invocable(self) -> bool:
        """False for `disable-model-invocation: true`: kept out of the skill list the model sees."""
        return not (self.format == "skill_md" and self.extra.get("disable-model-invocation") is True)

    @property
    def cue(self) -> str:
        """The one line shown in the prompt: when to use it, else what it does."""
        return self.when_to_use or self.description


@dataclass(frozen=True)
class BrokenSkill:
    """A skill folder that cannot be read: why, and where it was found (`source`: "user" or a read-only source's
    key). Its files are left exactly as they are."""

    label: str
    path: Path
    reason: str
    source: str = "user"


class SkillSummary(TypedDict):
    label: str
    name: str
    description: str
    when_to_use: str
    format: SkillFormat
    source: str
    model_invocable: bool


@dataclass(frozen=True)
class SkillClash:
    """A label held by more than one source: `winner` is used, `shadowed` are hidden (source keys)."""

    label: str
    winner: str
    shadowed: tuple[str, ...]


class BrokenSkillError(ValueError):
    """The skill's files are malformed; nothing was written. `problem` says which file and why."""

    def __init__(self, problem: BrokenSkill) -> None:
        super().__init__(f"skill {problem.label!r} is broken: {problem.reason}")
        self.problem = problem


class SkillNotFoundError(LookupError):
    pass


class ReadOnlySkillError(ValueError):
    """The skill comes from a read-only source (built-in or another tool's folder); copy it into the user's skills
    to change it. Nothing was written."""


class LegacyLayoutError(ValueError):
    """Saving would rewrite a skill kept in the older meta.json/declarative.md layout; it has to be converted to
    SKILL.md first (`convert.convert_legacy`, which keeps a backup). Nothing was written."""


# --------------------------------------------------------------------------- labels


def slugify(text: str) -> str:
    """Turn any text into a hyphen-case label (`"CSV Summary!"` → `csv-summary`); `skill` when nothing is left."""
    slug = text.strip().lower().replace("_", "-").replace(" ", "-")
    slug = re.sub(r"[^a-z0-9-]+", "-", slug)
    slug = re.sub(r"-+", "-", slug).strip("-")
    return slug or "skill"


def label_variants(label: str) -> list[str]:
    """The spellings a label may have on disk: as given, with hyphens, with underscores."""
    return list(dict.fromkeys((label, label.replace("_", "-"), label.replace("-", "_"))))


def match_key(label: str) -> str:
    """What two labels that name the same skill have in common (case and `-`/`_` aside)."""
    return label.lower().replace("-", "_")


_PLAIN_LABEL = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
"""Labels that pass every rule of `validate_label` at a glance (the usual kind)."""


_PLAIN_LABELS = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}/)*")


def all_plain_labels(labels: list[str]) -> bool:
    """Whether every one of `labels` is of the usual kind (so valid), checked in one go (`/` is in no folder name)."""
    return _PLAIN_LABELS.fullmatch("/".join(labels) + "/" if labels else "") is not None


@functools.lru_cache(maxsize=1 << 16)
def is_valid_label(label: str) -> bool:
    if _PLAIN_LABEL.fullmatch(label):
        return True
    try:
        validate_label(label)
    except ValueError:
        return False
    return True


OTHER_TOOL_SOURCES = ("project", "agents", "claude")
SOURCE_ORDER_INDEX = {key: index for index, key in enumerate(("project", "user", "agents", "claude", "builtin"))}
