"""Says who is writing memory right now: the producer, session, turn and reason carried to every memory write.

A producer (memorize, cerebellum, consolidator, acc, identity, compaction, reset, user edit, undo) wraps its write in
`producing(...)`; the write path of `Hippocampus` reads `current()` and hands it to the history, which puts it in the
change's commit message. A context variable follows the write into `asyncio.to_thread`, so nothing has to pass it
through every call in between. Writes made with no producer set are recorded as ``app``.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

PRODUCERS = (
    "memorize", "cerebellum", "consolidator", "acc", "identity", "compaction", "confirmation",
    "reset", "user edit", "undo", "external", "baseline", "app",
)  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class Origin:
    """Where a memory change came from."""

    producer: str = "app"
    session: str = ""
    turn: int | None = None
    why: str = ""
    trust: str = ""  # "" (not judged), "trusted" or "untrusted: <reason>"
    archive: str = ""  # a folder the change moved files to (an episodic reset), for undo to bring them back


_current: contextvars.ContextVar[Origin] = contextvars.ContextVar(
    "memory_origin",
    default=Origin(),  # noqa: B039 (Origin is a frozen dataclass: the default is never changed in place)
)


def current() -> Origin:
    """The origin of writes made here and now."""
    return _current.get()


@contextmanager
def producing(
    producer: str, *, session: str = "", turn: int | None = None, why: str = "", trust: str = ""
) -> Iterator[Origin]:
    """Writes inside this block are recorded as made by `producer` (for `session`, `turn`, because of `why`)."""
    origin = Origin(producer, session or "", turn, why or "", trust or "")
    token = _current.set(origin)
    try:
        yield origin
    finally:
        _current.reset(token)
