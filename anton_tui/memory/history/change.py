"""One recorded change of a memory scope, as the list of changes and the log show it.

Shared by the repository (`repo`), which makes changes from commits, and the list kept beside it (`log_index`),
which stores them one per line.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class Change:
    """One recorded change of one scope. `imported`: it came from a remote through a sync (another machine made
    it); only changes this machine recorded itself can be undone."""

    id: str
    time: float
    scope: str
    producer: str
    summary: str
    session: str = ""
    turn: int | None = None
    why: str = ""
    trust: str = ""
    files: tuple[str, ...] = ()
    archive: str = ""
    imported: bool = False

    @property
    def short(self) -> str:
        return self.id[:8]

    def to_json(self) -> dict[str, Any]:
        return {field: getattr(self, field) for field in FIELDS} | {"files": list(self.files)}


FIELDS = tuple(field.name for field in dataclasses.fields(Change))
