"""Replays a scratchpad's cells after the fact and keeps what is worth remembering as rules and lessons.

`should_replay` decides without a model call whether a run of cells is worth a look (two or more cells and an error,
a kill, or a long session of five or more). `replay_and_extract` compresses the cells to one line each and asks the
coding model for at most five memories, each with a kind, scope and confidence so the encoding gate can decide
whether to ask the user. The consolidator also remembers, per pad, which cells it has replayed: a pad's cells are
replayed once, and later turns only look at the cells added since.

Brain analogy: hippocampal replay during sleep, when the day's experience is rerun in compressed form and the
durable parts are written into the cortex.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from anton_tui.memory.engrams.engram import Engram, sanitize_text

if TYPE_CHECKING:
    from anton_tui.scratchpad.cell import Cell
    from anton_tui.scratchpad.runtime import Scratchpad

MIN_CELLS = 2
LONG_SESSION_CELLS = 5
MAX_ENGRAMS = 5
MAX_TOKENS = 2048
LINE_CHARS = 200
ERROR_CODE_CHARS = 300
KILL_WORDS = ("cancelled", "killed")
KILL_PREFIXES = ("Cancelled", "Cell timed out", "Cell killed")


class ConsolidatedMemory(BaseModel):
    text: str = Field(description="The memory in one self-contained sentence.")
    kind: Literal["always", "never", "when", "lesson"] = Field(
        default="lesson",
        description=(
            "always / never: a behaviour rule; when: a conditional rule written as 'When X, do Y'; "
            "lesson: a fact learned about a library, API, dataset or environment."
        ),
    )
    scope: Literal["global", "project"] = Field(
        default="project",
        description="global when it holds in any project (general tooling, libraries); project when it is about this "
        "project's data, files or services.",
    )
    confidence: Literal["high", "medium", "low"] = Field(
        default="medium",
        description="high only when the cells prove it beyond doubt; medium when it is a likely generalisation.",
    )
    topic: str = Field(default="", description="For lessons, a short topic slug such as 'pandas' or 'coingecko-api'.")


class ConsolidatedMemories(BaseModel):
    """Durable rules and lessons drawn from a replayed scratchpad session."""

    items: list[ConsolidatedMemory] = Field(
        default_factory=list,
        description="At most five memories, most valuable first; empty when the session taught nothing lasting.",
    )


SYSTEM_PROMPT = """\
You review a finished stretch of work in a Python scratchpad, one line per cell, and decide what is worth \
remembering for future sessions.

Look for:
- behaviour rules: things to always or never do, or what to do in a given situation (for example \
"When an API paginates, fetch pages in a loop and call progress() between pages");
- lessons: facts learned about a library, an API, a dataset or the environment (for example "The sales export uses \
semicolons as separators").

Only keep what would change how future work is done. Skip what is obvious, one-off or specific to a single value. \
Return an empty list when nothing qualifies."""


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def _headline(error: str) -> str:
    """The line of an error that says what happened: the first for kills and cancels, else the last (traceback)."""
    return _first_line(error) if error.lstrip().startswith(KILL_PREFIXES) else _last_line(error)


def summarize_cells(cells: list[Cell]) -> str:
    lines = []
    for number, cell in enumerate(cells, start=1):
        intent = cell.description or "(no description)"
        if cell.error:
            lines.append(f"Cell {number} [error]: {intent} -> ERROR: {_headline(cell.error)[:LINE_CHARS]}")
            code = cell.code if len(cell.code) <= ERROR_CODE_CHARS else cell.code[:ERROR_CODE_CHARS] + "..."
            lines.append("  Code: " + code.replace("\n", "\n        "))
        elif cell.stderr.strip():
            lines.append(f"Cell {number} [warning]: {intent} -> stderr: {_first_line(cell.stderr)[:LINE_CHARS]}")
        else:
            lines.append(f"Cell {number} [ok]: {intent} -> {_first_line(cell.stdout)[:LINE_CHARS] or '(no output)'}")
    return "\n".join(lines)


class Consolidator:
    """Decides which pads' cells deserve a replay and turns a replay into engrams."""

    def __init__(self, max_engrams: int = MAX_ENGRAMS) -> None:
        self.max_engrams = max_engrams
        self._replayed: dict[str, tuple[int, int]] = {}  # pad name -> (id of the pad object, last cell index replayed)

    @staticmethod
    def should_replay(cells: list[Cell]) -> bool:
        """Worth a model call? Not under two cells; yes for five or more, any error, or a cancelled/killed cell."""
        if len(cells) < MIN_CELLS:
            return False
        if len(cells) >= LONG_SESSION_CELLS:
            return True
        if any(cell.error for cell in cells):
            return True
        return any(word in cell.stderr.lower() for cell in cells for word in KILL_WORDS)

    async def replay_and_extract(self, cells: list[Cell], llm: Any) -> list[Engram]:
        """One coding-model call over the cells' summary; at most `max_engrams` engrams, source consolidation."""
        if not cells:
            return []
        result = await llm.generate_object_code(
            ConsolidatedMemories,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": f"Scratchpad cells, in order:\n\n{summarize_cells(cells)}"}],
            max_tokens=MAX_TOKENS,
        )
        engrams: list[Engram] = []
        for item in result.items:
            text = sanitize_text(item.text)
            if text and len(engrams) < self.max_engrams:
                topic = sanitize_text(item.topic) or None
                engrams.append(Engram(text, item.kind, item.scope, item.confidence, topic, "consolidation"))
        return engrams

    # ---- which cells are new -----------------------------------------------------------------------------------

    def unreplayed(self, pad: Scratchpad) -> list[Cell]:
        """The pad's finished cells added since its last replay (a pad removed and created again starts over)."""
        pad_id, last = self._replayed.get(pad.name, (id(pad), 0))
        if pad_id != id(pad):
            last = 0
        return [cell for cell in pad.cells if cell.index > last and cell.status not in ("pending", "running")]

    def mark_replayed(self, pad: Scratchpad, cells: list[Cell]) -> None:
        if cells:
            self._replayed[pad.name] = (id(pad), max(cell.index for cell in cells))

    def due(self, pads: Iterable[Scratchpad], *, errors_reviewed: bool = False) -> list[tuple[str, list[Cell]]]:
        """Copies of the new cells of every pad worth replaying now; those cells count as replayed from here on.

        With `errors_reviewed` (the cerebellum already studies every failed or warning cell), failures alone do
        not trigger a second look at the same cells; a long session still does.
        """
        found = []
        for pad in pads:
            cells = self.unreplayed(pad)
            signal = [cell for cell in cells if cell.succeeded] if errors_reviewed else cells
            if len(cells) >= LONG_SESSION_CELLS or self.should_replay(signal):
                self.mark_replayed(pad, cells)
                found.append((pad.name, [dataclasses.replace(cell) for cell in cells]))
        return found
