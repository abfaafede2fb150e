"""Building the review pipeline and the reflection chain of a temporary project for tests: real memory stores, the
real memory history, the real skill store, a model client talking to the scripted LLM server, a fixed clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.history.repo import Change
from anton_tui.memory.reflection.wiring import ReflectionDefaults, ReflectionParts
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths

ZONE = timezone(timedelta(hours=1), "CET")
MONDAY = datetime(2026, 11, 23, 9, 0, tzinfo=ZONE)  # the Monday after ISO week 47 of 2026 (16 to 22 November)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = MONDAY) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Project:
    stores: MemoryStores
    cortex: Cortex
    parts: ReflectionParts
    clock: Clock

    @property
    def paths(self) -> AntonPaths:
        return self.stores.paths

    def decisions(self) -> list[Change]:
        """The review's own changes in the memory history, oldest first (both scopes)."""
        assert self.stores.recorder is not None
        return [c for c in reversed(self.stores.recorder.log()) if c.producer == "review"]


def project(home: Path, folder: Path, *, llm: Any = None, clock: Clock | None = None, **settings: Any) -> Project:
    clock = clock or Clock()
    stores = MemoryStores.from_paths(AntonPaths(home, folder))
    for scope in ("global", "project"):
        stores.recorder.history(scope).clock = lambda: clock().timestamp()
    cortex = Cortex(stores.global_hc, stores.project_hc, mode="autopilot")
    parts = ReflectionParts.build(stores, cortex, ReflectionDefaults(**settings), lambda: llm, clock)
    return Project(stores, cortex, parts, clock)


# --------------------------------------------------------------------------- a week of episodes

UTC = timezone.utc


def write_session(folder: Path, started: datetime, lines: list[tuple[str, str, dict[str, Any]]]) -> Path:
    """One session file in Anton's shape: `lines` are (role, content, meta), a minute apart from `started`."""
    import json

    session = started.astimezone(UTC).strftime("%Y%m%d_%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    turn = 0
    with path.open("a", encoding="utf-8") as handle:
        for minute, (role, content, meta) in enumerate(lines):
            turn += role == "user"
            ts = (started + timedelta(minutes=minute)).astimezone(UTC).isoformat()
            record = {"ts": ts, "session": session, "turn": turn, "role": role, "content": content, "meta": meta}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def exchange(question: str, answer: str, *, cells: int = 0, error: str = "", untrusted: bool = False) -> list:
    """One turn: the question, `cells` scratchpad calls (the last failing with `error`), the answer."""
    meta: dict[str, Any] = {"trust": "untrusted"} if untrusted else {}
    lines = [("user", question, {"model": "planner", **meta})]
    for n in range(cells):
        lines.append(("tool_call", f"{{'code': 'step {n}'}}", {"tool": "scratchpad", **meta}))
        failed = error and n == cells - 1
        result_meta = {"tool": "scratchpad", **({"error": True} if failed else {}), **meta}
        lines.append(("tool_result", error if failed else "ok", result_meta))
    lines.append(("assistant", answer, meta))
    return lines
