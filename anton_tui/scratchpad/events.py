"""Events a scratchpad emits while a cell runs, so a viewer can follow it live.

Plain dataclasses, posted in order: one CellStarted, any number of CellOutput / CellProgress / CellHeartbeat,
then one CellFinished carrying the finished Cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from anton_tui.scratchpad.cell import Cell


@dataclass(frozen=True, slots=True)
class CellStarted:
    pad: str
    index: int
    description: str
    code: str


@dataclass(frozen=True, slots=True)
class CellOutput:
    pad: str
    index: int
    stream: Literal["stdout", "stderr"]
    text: str


@dataclass(frozen=True, slots=True)
class CellProgress:
    pad: str
    index: int
    message: str


@dataclass(frozen=True, slots=True)
class CellHeartbeat:
    pad: str
    index: int
    elapsed: float


@dataclass(frozen=True, slots=True)
class CellOutside:
    """The running cell opened a network connection or read a file outside the workspace."""

    pad: str
    index: int
    kind: Literal["network", "file"]
    target: str


@dataclass(frozen=True, slots=True)
class CellFinished:
    pad: str
    index: int
    cell: Cell


ScratchpadEvent = CellStarted | CellOutput | CellProgress | CellHeartbeat | CellOutside | CellFinished
ScratchpadEventSink = Callable[[ScratchpadEvent], None]
