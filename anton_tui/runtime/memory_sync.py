"""The Runtime's operations on shared memory: remotes, sync (by hand or on a timer), and merges waiting for a choice.

`Runtime` takes these methods from `MemorySyncOps`. Every sync runs `memory.sync` in a thread, one at a time, so a turn
never waits for git or the network; when it ends, a `MemorySynced` event goes to the session's background events and
the header shows it. The timer (``ANTON_MEMORY_SYNC_MINUTES``, off by default) starts after the first frame and only
syncs scopes that have a remote (and a managed memory folder that is a clone).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.memory.sync.entry_merge import MergeConflict
    from anton_tui.memory.sync.syncer import SyncOutcome


def sync_line(outcomes: list[SyncOutcome], when: float | None = None) -> tuple[str, bool]:
    """The header's words for a sync: ``synced 14:02`` or ``sync failed 14:02`` (local time)."""
    stamp = time.strftime("%H:%M", time.localtime(when or (max((o.time for o in outcomes), default=0) or time.time())))
    bad = [o for o in outcomes if not o.ok and o.status != "no remote"]
    if not bad:
        return f"⇅ synced {stamp}", True
    worst = bad[0].status
    word = {"conflicts": "to resolve", "secret": "secret held back", "failed": "failed"}.get(worst, worst)
    return f"⇅ sync {word} {stamp}", False


class MemorySyncOps:
    """Shared-memory operations of the `Runtime` (they use its `stores`, `settings` and `background_events`)."""

    stores: MemoryStores
    settings: Any
    session: Any
    background_events: asyncio.Queue | None
    busy: bool

    _sync_lock: asyncio.Lock | None = None
    _sync_timer: asyncio.Task | None = None
    last_sync: list[SyncOutcome] = []  # noqa: RUF012 (replaced, never changed in place; the Runtime's services own it next)

    # ---- remotes --------------------------------------------------------------------------------------------------

    async def memory_remote_add(self, scope: str, url: str) -> str:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.add_remote, self.stores, scope, url)

    async def memory_remote_remove(self, scope: str) -> bool:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.remove_remote, self.stores, scope)

    async def memory_remotes(self) -> dict[str, str]:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.shared_scopes, self.stores)

    # ---- syncing --------------------------------------------------------------------------------------------------

    async def memory_sync(
        self, scope: str | None = None, *, prefer: str | None = None, tell: bool = False
    ) -> list[SyncOutcome]:
        """Sync one scope, or every shared scope and the managed folder; the outcomes also go to the header (and,
        with `tell`, what needs the user to a chat notice: the timer's syncs have no reply of their own)."""
        from anton_tui.memory.sync import syncer as sync

        if self._sync_lock is None:
            self._sync_lock = asyncio.Lock()
        redactor = getattr(getattr(self.session, "cortex", None), "redactor", None)
        async with self._sync_lock:

            def run() -> list[SyncOutcome]:
                scopes = [scope] if scope else list(sync.shared_scopes(self.stores))
                outcomes = [sync.sync(self.stores, name, prefer=prefer, redactor=redactor) for name in scopes]
                managed = self.stores.managed_dir
                if scope is None and managed is not None and (managed / ".git").exists():
                    outcomes.append(sync.managed_pull(managed))
                return outcomes

            outcomes = await asyncio.to_thread(run)
        if outcomes:
            self.last_sync = outcomes
            self._announce(outcomes, tell=tell)
        return outcomes

    async def memory_resolve(self, scope: str, prefer: str) -> SyncOutcome:
        """Finish a sync that waited for a choice: keep this machine's version ("ours") or take theirs ("theirs")."""
        outcomes = await self.memory_sync(scope, prefer=prefer)
        return outcomes[0]

    async def memory_waiting(self) -> dict[str, list[MergeConflict]]:
        """The merge parts that wait for a choice, per scope."""
        from anton_tui.memory.sync import syncer as sync

        def read() -> dict[str, list[MergeConflict]]:
            return {s: found for s in ("global", "project") if (found := sync.pending(self.stores, s))}

        return await asyncio.to_thread(read)

    async def memory_keep_local(self, scope: str, entry_ids: list[str]) -> int:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.keep_local, self.stores, scope, entry_ids)

    def _announce(self, outcomes: list[SyncOutcome], when: float | None = None, *, tell: bool = False) -> None:
        queue = self.background_events
        if queue is None:
            return
        from anton_tui.agent.events import MemorySynced

        line, ok = sync_line(outcomes, when)
        waiting = sum(len(o.conflicts) for o in outcomes)
        detail = ""
        if tell:
            needs = [o for o in outcomes if o.status in ("conflicts", "secret")]
            detail = "\n".join([f"Sync: {o.message}." for o in needs] + [f"  {hit.describe()}" for o in needs
                                                                          for hit in o.secrets])  # fmt: skip
            if any(o.secrets for o in needs):
                detail += "\nEdit the entry, or keep it on this machine only: /memory sync keep-local <scope>."
        queue.put_nowait(MemorySynced(line, ok, waiting, detail))

    # ---- after the first frame ------------------------------------------------------------------------------------

    async def start_sync(self) -> None:
        """Show the last sync in the header and start the timer when one is set."""
        from anton_tui.memory.sync import syncer as sync

        def last() -> tuple[list[SyncOutcome], float]:
            found = []
            for scope in sync.shared_scopes(self.stores):
                data = sync.last_outcome(self.stores, scope)
                if data:
                    found.append(sync.SyncOutcome(scope, data.get("status", ""), data.get("message", ""),
                                                  float(data.get("time", 0))))  # fmt: skip
            return found, max((o.time for o in found), default=0.0)

        if self.stores.recorder is None:
            return
        outcomes, when = await asyncio.to_thread(last)
        if outcomes:
            self.last_sync = outcomes
            self._announce(outcomes, when)
        minutes = int(getattr(self.settings, "memory_sync_minutes", 0) or 0)
        if minutes > 0 and self._sync_timer is None:
            self._sync_timer = asyncio.create_task(self._sync_every(minutes * 60.0))

    async def _sync_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await self.memory_sync(tell=True)
            except Exception:
                continue

    async def stop_sync(self) -> None:
        if self._sync_timer is not None:
            self._sync_timer.cancel()
            self._sync_timer = None
