"""Learns from scratchpad cells that went wrong: one post-mortem per turn turns their errors into lessons.

The scratchpad tool calls `on_pre_execute` / `on_post_execute` around every cell. A clean cell (no error, nothing on
stderr) costs nothing: it is not kept and causes no model call. A cell that failed or warned is copied into a buffer.
At the end of the turn `flush()` sends the buffered cells to the coding model once, with their declared intent, code
and output, and saves at most three general lessons (project lessons, topic ``scratchpad``), which reach the
scratchpad tool's description in later turns. The flush runs in the background; the reply never waits for it.

Brain analogy: the cerebellum compares what a movement was meant to do with what it did, and corrects the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from anton_tui.memory.engrams.engram import Engram, sanitize_text

if TYPE_CHECKING:
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.scratchpad.cell import Cell

log = logging.getLogger(__name__)

MAX_TOKENS = 2048  # a model that narrates before the forced tool call must still reach it
CODE_CHARS, STDOUT_CHARS, STDERR_CHARS, ERROR_CHARS = 800, 500, 400, 400
TRUNCATED = "\n... [truncated]"
CUT_HEAD = "[truncated] ...\n"
DEFAULT_TOPIC = "scratchpad"

Sink = Callable[[list[Engram], str], Any]


class CerebellumLesson(BaseModel):
    text: str = Field(
        description=(
            "One general, reusable lesson in one sentence: what to do (or avoid) next time and why. It must make "
            "sense without this session's variable names, file names or values."
        )
    )
    topic: str = Field(
        default=DEFAULT_TOPIC,
        description="A short topic slug such as 'scratchpad', 'pandas' or 'http'; 'scratchpad' when unsure.",
    )


class CerebellumReport(BaseModel):
    """Lessons learned from scratchpad cells that failed or warned."""

    lessons: list[CerebellumLesson] = Field(
        default_factory=list,
        description=(
            "At most three lessons, most useful first. Empty when the failures were one-off typos or say "
            "nothing that would help future code."
        ),
    )


SYSTEM_PROMPT = """\
You review Python cells that an assistant ran in a persistent scratchpad and that failed or printed warnings. For \
each cell you see the intent it declared beforehand, its code, and what actually happened.

Compare intent with outcome and find the cause of each failure. Then write lessons that would stop the same kind \
of mistake in future cells: about a library's behaviour, a data format, an environment limit, or a better way to \
structure scratchpad work. Prefer one lesson that covers several cells over one per cell.

Skip typos and one-off slips that teach nothing. Never restate the error message as a lesson, and do not mention \
this session's variable names or values. Return an empty list when there is nothing worth remembering."""


@dataclass(frozen=True, slots=True)
class CellRecord:
    """What the post-mortem needs from a cell, copied when the cell finished (the pad may compact it later)."""

    description: str
    code: str
    stdout: str
    stderr: str
    error: str | None

    @classmethod
    def of(cls, cell: Cell) -> CellRecord:
        return cls(cell.description, cell.code, cell.stdout, cell.stderr, cell.error)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATED


def _clip_tail(text: str, limit: int) -> str:
    """Keep the end: a traceback says what went wrong in its last lines."""
    return text if len(text) <= limit else CUT_HEAD + text[-limit:]


def format_cells(records: list[CellRecord]) -> str:
    """The post-mortem prompt body: one ``### Cell i`` block per cell, each part cut to its own limit.

    Code and output keep their beginning, errors their end (where a traceback names the exception).
    """
    blocks = []
    for number, record in enumerate(records, start=1):
        parts = [
            f"### Cell {number}",
            f"Intent: {record.description or '(not declared)'}",
            f"Code:\n```python\n{_clip(record.code, CODE_CHARS)}\n```",
        ]
        if record.stdout.strip():
            parts.append(f"Stdout:\n{_clip(record.stdout, STDOUT_CHARS)}")
        if record.stderr.strip():
            parts.append(f"Stderr:\n{_clip(record.stderr, STDERR_CHARS)}")
        if record.error:
            parts.append(f"Error:\n{_clip_tail(record.error, ERROR_CHARS)}")
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)


class Cerebellum:
    """Buffers the turn's failed or warning cells and turns them into lessons with one model call per turn.

    `sink(engrams, producer)` is where lessons go: the session's encoding gate (`ChatSession.encode_through_gate`).
    Without one, lessons are encoded directly when the gate lets them through and the held ones are dropped.
    """

    def __init__(self, cortex: Cortex, llm: Any, max_lessons_per_flush: int = 3, sink: Sink | None = None) -> None:
        self.cortex = cortex
        self.llm = llm
        self.max_lessons_per_flush = max_lessons_per_flush
        self.sink = sink
        self.cells_seen = 0
        self._buffer: list[CellRecord] = []

    # ---- observer hooks (called by the scratchpad tool) --------------------------------------------------------

    def on_pre_execute(self, cell: Cell) -> None:
        self.cells_seen += 1

    def on_post_execute(self, cell: Cell) -> None:
        if cell.error is None and not cell.stderr.strip():
            return
        self._buffer.append(CellRecord.of(cell))

    # ---- end of turn -------------------------------------------------------------------------------------------

    @property
    def buffered_count(self) -> int:
        return len(self._buffer)

    def reset(self) -> None:
        """Forget the buffered cells (a cancelled turn teaches nothing reliable)."""
        self._buffer.clear()

    def take(self) -> list[CellRecord]:
        """Hand over the buffered cells and start an empty buffer for the next turn."""
        records, self._buffer = self._buffer, []
        return records

    async def flush(self, records: list[CellRecord] | None = None) -> list[Engram]:
        """One post-mortem over `records` (default: everything buffered); returns the lessons handed to the sink."""
        records = self.take() if records is None else records
        if not records:
            return []
        report = await self.llm.generate_object_code(
            CerebellumReport,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": format_cells(records)}],
            max_tokens=MAX_TOKENS,
        )
        engrams: list[Engram] = []
        for lesson in report.lessons:
            text = sanitize_text(lesson.text)
            if text and len(engrams) < self.max_lessons_per_flush:
                topic = sanitize_text(lesson.topic) or DEFAULT_TOPIC
                engrams.append(
                    Engram(text, "lesson", scope="project", confidence="medium", topic=topic, source="consolidation")
                )
        if engrams:
            if self.sink is not None:
                self.sink(engrams, "cerebellum")
            else:
                self.cortex.encode_passing(engrams)
        return engrams
