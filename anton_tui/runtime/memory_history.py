"""The Runtime's operations on the memory history: list, show, undo, reset, and recording changes made outside.

`Runtime` takes these methods from `MemoryHistoryOps`; each runs `memory.history_ops` off the event loop. The history
is started after the first frame (`start_history`, from `warm_up`), and a scope whose history cannot be written is
reported once on the session's background events as `MemoryHistoryBroken`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.memory.history.ops import Undone
    from anton_tui.memory.history.repo import Change
    from anton_tui.memory.stores import MemoryStores


class MemoryHistoryOps:
    """Memory history operations of the `Runtime` (they use its `stores` and `background_events`)."""

    stores: MemoryStores
    background_events: asyncio.Queue | None
    session: Any

    async def start_history(self) -> None:
        """Record memory as it is now (a first look, or what changed while the app was closed) and report problems."""
        recorder = self.stores.recorder
        if recorder is None:
            return
        loop = asyncio.get_running_loop()
        queue = self.background_events

        def report(scope: str, message: str) -> None:
            from anton_tui.agent.events import MemoryHistoryBroken

            if queue is not None:
                loop.call_soon_threadsafe(queue.put_nowait, MemoryHistoryBroken(scope, message))

        recorder.on_problem = report
        await asyncio.to_thread(recorder.start)
        await self.restore_held()

    async def restore_held(self) -> int:
        """Bring back the memories that waited for review when the app last closed; they are asked again."""
        restore = getattr(self.session, "restore_held", None)
        recorder = self.stores.recorder
        if restore is None or recorder is None:
            return 0
        from anton_tui.memory.trust import HeldMemories

        git_dir = recorder.history("project").git_dir
        held = HeldMemories(git_dir.with_name(git_dir.stem + ".held.json"))
        count = await asyncio.to_thread(restore, held)
        if count and hasattr(self.session, "_ask_between_turns"):
            self.session._ask_between_turns()
        return count

    def held_count_without(self, decided: Any) -> int:
        """How many still wait once the ones just answered (`decided`) are taken out."""
        return len([e for e in getattr(self.session, "held_why", ()) or () if e not in set(decided)])

    @property
    def held_count(self) -> int:
        """How many memories wait for the user's review (the header's badge)."""
        return len(getattr(self.session, "held_why", ()) or ())

    async def record_external(self, scope: str | None = None) -> None:
        """Memory files changed on disk (the watcher saw it): record what differs from the history as external."""
        recorder = self.stores.recorder
        if recorder is None:
            return
        for name in [scope] if scope else ["global", "project"]:
            await asyncio.to_thread(recorder.record_external, name)

    async def memory_log(self, scope: str | None = None, limit: int | None = None) -> list[Change]:
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.log, self.stores, scope, limit)

    async def memory_show(self, change: str) -> tuple[Change, str]:
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.show, self.stores, change)

    async def memory_undo(self, change: str) -> Undone:
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.undo, self.stores, change)

    async def memory_reset(self, scope: str) -> Any:
        """``/memory reset global|project|episodic``: a recorded change that undo can revert (episodes archived)."""
        from anton_tui.memory.history import ops as history_ops

        return await asyncio.to_thread(history_ops.reset, self.stores, scope)

    async def flush_history(self) -> None:
        recorder = self.stores.recorder
        if recorder is not None:
            await asyncio.to_thread(recorder.flush)

    # ---- what the agent saw (agent/context_report.py) ----

    def context_report(self, turn: int | None = None) -> Any:
        """The memory and skills a turn's request carried (the latest turn by default); None before any."""
        reports = getattr(self.session, "context_reports", None)
        if reports is None:
            return None
        return reports.latest() if turn is None else reports.by_turn.get(turn)
