"""The memory history as the Runtime offers it: list, show, undo, reset, recording changes made outside, and the
memories held for review.

`MemoryHistory` runs `memory.history.ops` off the event loop. The history is started after the first frame
(`start`, from the runtime's warm-up), and a scope whose history cannot be written is reported once on the session's
background events as `MemoryHistoryBroken`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from anton_tui.runtime.protocols import HistorySession

if TYPE_CHECKING:
    from anton_tui.agent.context_report import ContextReport
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.history.ops import Undone
    from anton_tui.memory.history.repo import Change
    from anton_tui.memory.stores import MemoryStores


class MemoryHistory:
    """The history of every memory change, and the memories that wait for the user's review."""

    def __init__(self, stores: MemoryStores, session: HistorySession) -> None:
        self._stores = stores
        self._session = session

    async def start(self) -> None:
        """Record memory as it is now (a first look, or what changed while the app was closed) and report problems."""
        recorder = self._stores.recorder
        if recorder is None:
            return
        loop = asyncio.get_running_loop()
        queue = self._session.background_events

        def report(scope: str, message: str) -> None:
            from anton_tui.agent.events import MemoryHistoryBroken

            if queue is not None:
                loop.call_soon_threadsafe(queue.put_nowait, MemoryHistoryBroken(scope, message))

        recorder.on_problem = report
        await asyncio.to_thread(recorder.start)
        await self.restore_held()

    async def restore_held(self) -> int:
        """Bring back the memories that waited for review when the app last closed; they are asked again."""
        recorder = self._stores.recorder
        if recorder is None:
            return 0
        from anton_tui.memory.trust import HeldMemories

        git_dir = recorder.history("project").git_dir
        held = HeldMemories(git_dir.with_name(git_dir.stem + ".held.json"))
        count = await asyncio.to_thread(self._session.restore_held, held)
        if count:
            self._session.ask_between_turns()
        return count

    @property
    def held_count(self) -> int:
        """How many memories wait for the user's review (the header's badge)."""
        return len(self._session.held_why)

    def held_count_without(self, decided: Iterable[Engram]) -> int:
        """How many still wait once the ones just answered (`decided`) are taken out."""
        answered = set(decided)
        return sum(1 for engram in self._session.held_why if engram not in answered)

    async def record_external(self, scope: str | None = None) -> None:
        """Memory files changed on disk (the watcher saw it): record what differs from the history as external."""
        recorder = self._stores.recorder
        if recorder is None:
            return
        for name in [scope] if scope else ["global", "project"]:
            await asyncio.to_thread(recorder.record_external, name)

    async def log(self, scope: str | None = None, limit: int | None = None) -> list[Change]:
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.log, self._stores, scope, limit)

    async def show(self, change: str) -> tuple[Change, str]:
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.show, self._stores, change)

    async def undo(self, change: str) -> Undone:
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.undo, self._stores, change)

    async def reset(self, scope: str) -> Change | None:
        """``/memory reset global|project|episodic``: a recorded change that undo can revert (episodes archived)."""
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.reset, self._stores, scope)

    async def flush(self) -> None:
        """Commit what is queued (before exit)."""
        recorder = self._stores.recorder
        if recorder is not None:
            await asyncio.to_thread(recorder.flush)

    def context_report(self, turn: int | None = None) -> ContextReport | None:
        """The memory and skills a turn's request carried (the latest turn by default); None before any."""
        reports = self._session.context_reports
        if reports is None:
            return None
        return reports.latest() if turn is None else reports.by_turn.get(turn)
