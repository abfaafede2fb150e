"""A reflection on disk: Markdown with YAML front matter, ``<project>/.anton/reflections/<kind>/<label>.md``.

The front matter says what the reflection covers and what it was made from: `period`, `label`, `span` (start and
end, ISO times), `written`, `quiet` (below the activity threshold: a one-line note, no model call), `tainted` (why
its input was untrusted, when it was), `inputs` (how much of each source it read), `statistics`, and `proposals`,
each with its id, kind, target, text, status and why. The status is kept up to date as proposals are decided. The
body is the notes themselves, under a heading.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.reflection.periods import KINDS, Period, PeriodKind

log = logging.getLogger(__name__)

TITLES = {"daily": "Daily reflection", "weekly": "Weekly reflection", "monthly": "Monthly reflection"}


@dataclass(frozen=True)
class ProposalLine:
    """A proposal as the reflection lists it."""

    id: str
    kind: str
    target: str
    text: str
    status: str
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "target": self.target, "text": self.text, "status": self.status,
                "why": self.why}  # fmt: skip


@dataclass(frozen=True)
class Reflection:
    """One reflection file's content (see the module docstring)."""

    period: Period
    start: str
    end: str
    written: str
    quiet: bool
    notes: str
    title: str = ""
    tainted: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    statistics: dict[str, Any] = field(default_factory=dict)
    proposals: tuple[ProposalLine, ...] = ()

    @property
    def heading(self) -> str:
        heading = f"{TITLES[self.period.kind]}: {self.period.label}"
        return f"{heading} — {self.title}" if self.title else heading

    def with_statuses(self, statuses: dict[str, tuple[str, str]]) -> Reflection:
        """The same reflection with its proposals' statuses (id → (status, why)) brought up to date."""
        lines = tuple(
            replace(line, status=statuses[line.id][0], why=statuses[line.id][1]) if line.id in statuses else line
            for line in self.proposals
        )
        return replace(self, proposals=lines)

    def render(self) -> str:
        import yaml

        front: dict[str, Any] = {
            "period": self.period.kind,
            "label": self.period.label,
            "span": {"start": self.start, "end": self.end},
            "written": self.written,
            "quiet": self.quiet,
        }
        if self.title:
            front["title"] = self.title
        if self.tainted:
            front["tainted"] = list(self.tainted)
        front["inputs"] = dict(self.inputs)
        front["statistics"] = dict(self.statistics)
        front["proposals"] = [line.to_json() for line in self.proposals]
        dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
        return f"---\n{dumped}---\n# {self.heading}\n\n{self.notes.strip()}\n"


class ReflectionFormatError(ValueError):
    """A reflection file that cannot be read as one (the file is left as it is)."""


def parse(text: str, path: Path | None = None) -> Reflection:
    import yaml

    where = f"{path}: " if path is not None else ""
    if not text.startswith("---\n"):
        raise ReflectionFormatError(f"{where}does not start with front matter")
    front_text, sep, body = text[4:].partition("\n---\n")
    if not sep:
        raise ReflectionFormatError(f"{where}front matter has no closing '---' line")
    try:
        front = yaml.safe_load(front_text)
    except yaml.YAMLError as exc:
        raise ReflectionFormatError(f"{where}front matter is not valid YAML ({exc})") from None
    if not isinstance(front, dict):
        raise ReflectionFormatError(f"{where}front matter is not a mapping")
    try:
        kind = front["period"]
        if kind not in KINDS:
            raise ValueError(f"unknown period {kind!r}")
        period = Period.from_label(kind, str(front["label"]))
        span = front.get("span") or {}
        proposals = tuple(
            ProposalLine(str(item["id"]), str(item.get("kind", "")), str(item.get("target", "")),
                         str(item.get("text", "")), str(item.get("status", "proposed")), str(item.get("why") or ""))
            for item in front.get("proposals") or ()
        )  # fmt: skip
    except (KeyError, ValueError, TypeError) as exc:
        raise ReflectionFormatError(f"{where}{exc}") from None
    heading, _, notes = body.partition("\n")
    if not heading.startswith("# "):
        notes = body
    return Reflection(
        period=period,
        start=str(span.get("start", "")),
        end=str(span.get("end", "")),
        written=str(front.get("written", "")),
        quiet=bool(front.get("quiet")),
        notes=notes.strip(),
        title=str(front.get("title") or ""),
        tainted=tuple(str(reason) for reason in front.get("tainted") or ()),
        inputs=dict(front.get("inputs") or {}),
        statistics=dict(front.get("statistics") or {}),
        proposals=proposals,
    )


class ReflectionFiles:
    """The reflections of one project, by kind and label."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, period: Period) -> Path:
        return self.folder / period.kind / f"{period.label}.md"

    def read(self, period: Period) -> Reflection | None:
        """The reflection for `period`; None when there is none. Raises ReflectionFormatError for a damaged one."""
        path = self.path(period)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ReflectionFormatError(f"{path}: cannot be read ({exc})") from None
        return parse(text, path)

    def read_or_none(self, period: Period) -> Reflection | None:
        """The reflection for `period`, or None when there is none or it cannot be read (a damaged file is left
        as it is and logged)."""
        try:
            return self.read(period)
        except ReflectionFormatError as exc:
            log.warning("%s", exc)
            return None

    def write(self, reflection: Reflection) -> Path:
        path = self.path(reflection.period)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, reflection.render().encode("utf-8"))
        return path

    def periods(self, kind: PeriodKind) -> list[Period]:
        """The periods of `kind` with a reflection file, oldest first (names that are no period are skipped)."""
        try:
            names = sorted((self.folder / kind).iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for path in names:
            if path.suffix != ".md" or path.name.startswith("."):
                continue
            try:
                found.append(Period.from_label(kind, path.stem))
            except ValueError:
                continue
        return sorted(found)

    def last(self, kind: PeriodKind) -> Period | None:
        periods = self.periods(kind)
        return periods[-1] if periods else None
