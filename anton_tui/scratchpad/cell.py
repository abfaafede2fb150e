"""One code cell of a scratchpad: what was asked, what came out, and how it ended.

In the brain analogy a cell is one motor command: `description` is the intent declared beforehand (the forward
model the cerebellum compares against), the outputs are the feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CellStatus = Literal["pending", "running", "ok", "error", "killed", "cancelled"]


@dataclass(slots=True)
class Cell:
    code: str
    description: str = ""
    estimated_seconds: float | None = None
    index: int = 0
    stdout: str = ""
    stderr: str = ""
    logs: str = ""
    error: str | None = None
    status: CellStatus = "pending"
    started_at: float | None = None
    finished_at: float | None = None
    stdout_total_chars: int = 0
    truncated: bool = False
    # Something the model must know that the cell itself did not say, e.g. that the process restarted before it.
    notice: str | None = None
    # What the cell reached outside the workspace while it ran: "network 1.2.3.4:443", "file /etc/hosts".
    outside: list[str] = field(default_factory=list)
    # What its threads (or processes it left running) printed after it ended: shown to the user under the cell,
    # never part of what the model reads (see `scratchpad.runtime`).
    after_end: str = ""

    @property
    def duration(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    @property
    def succeeded(self) -> bool:
        return self.error is None and not self.stderr.strip()

    @property
    def was_killed(self) -> bool:
        return self.status in ("killed", "cancelled")
