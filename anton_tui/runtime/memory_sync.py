"""Shared memory as the Runtime offers it: remotes, sync (by hand or on a timer), and merges waiting for a choice.

`MemorySync` runs every sync of `memory.sync` in a thread, one at a time, so a turn never waits for git or the
network; when it ends, a `MemorySynced` event goes to the session's background events and the header shows it. The
timer (``ANTON_MEMORY_SYNC_MINUTES``, off by default) starts after the first frame and only syncs scopes that have a
remote (and a managed memory folder that is a clone).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from anton_tui.runtime.protocols import SyncSession, SyncSettings

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


class MemorySync:
    """Shared memory: remotes, syncs one at a time, the timer, and the outcome of the last sync."""

    def __init__(self, stores: MemoryStores, session: SyncSession, settings: Callable[[], SyncSettings]) -> None:
        self._stores = stores
        self._session = session
        self._settings = settings
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self.last: list[SyncOutcome] = []
        """The outcomes of the last sync (by hand, on the timer, or as read at start)."""

    # ---- remotes --------------------------------------------------------------------------------------------------

    async def add_remote(self, scope: str, url: str) -> str:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.add_remote, self._stores, scope, url)

    async def remove_remote(self, scope: str) -> bool:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.remove_remote, self._stores, scope)

    async def remotes(self) -> dict[str, str]:
        """The shared scopes and their remotes' addresses."""
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.shared_scopes, self._stores)

    @property
    def managed_dir(self) -> Path | None:
        """The administrator's read-only memory folder (pulled by a sync when it is a clone), if there is one."""
        return self._stores.managed_dir

    # ---- syncing --------------------------------------------------------------------------------------------------

    async def sync(
        self, scope: str | None = None, *, prefer: str | None = None, tell: bool = False
    ) -> list[SyncOutcome]:
        """Sync one scope, or every shared scope and the managed folder; the outcomes also go to the header (and,
        with `tell`, what needs the user to a chat notice: the timer's syncs have no reply of their own)."""
        from anton_tui.memory.sync import syncer as sync

        redactor = self._session.redact
        stores = self._stores
        async with self._lock:

            def run() -> list[SyncOutcome]:
                scopes = [scope] if scope else list(sync.shared_scopes(stores))
                outcomes = [sync.sync(stores, name, prefer=prefer, redactor=redactor) for name in scopes]
                managed = stores.managed_dir
                if scope is None and managed is not None and (managed / ".git").exists():
                    outcomes.append(sync.managed_pull(managed))
                return outcomes

            outcomes = await asyncio.to_thread(run)
        if outcomes:
            self.last = outcomes
            self._announce(outcomes, tell=tell)
        return outcomes

    async def resolve(self, scope: str, prefer: str) -> SyncOutcome:
        """Finish a sync that waited for a choice: keep this machine's version ("ours") or take theirs ("theirs")."""
        outcomes = await self.sync(scope, prefer=prefer)
        return outcomes[0]

    async def waiting(self) -> dict[str, list[MergeConflict]]:
        """The merge parts that wait for a choice, per scope."""
        from anton_tui.memory.sync import syncer as sync

        def read() -> dict[str, list[MergeConflict]]:
            return {s: found for s in ("global", "project") if (found := sync.pending(self._stores, s))}

        return await asyncio.to_thread(read)

    async def keep_local(self, scope: str, entry_ids: list[str]) -> int:
        from anton_tui.memory.sync import syncer as sync

        return await asyncio.to_thread(sync.keep_local, self._stores, scope, entry_ids)

    def _announce(self, outcomes: list[SyncOutcome], when: float | None = None, *, tell: bool = False) -> None:
        queue = self._session.background_events
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

    async def start(self) -> None:
        """Show the last sync in the header and start the timer when one is set."""
        from anton_tui.memory.sync import syncer as sync

        def last() -> tuple[list[SyncOutcome], float]:
            found = []
            for scope in sync.shared_scopes(self._stores):
                data = sync.last_outcome(self._stores, scope)
                if data:
                    found.append(sync.SyncOutcome(scope, data.get("status", ""), data.get("message", ""),
                                                  float(data.get("time", 0))))  # fmt: skip
            return found, max((o.time for o in found), default=0.0)

        if self._stores.recorder is None:
            return
        outcomes, when = await asyncio.to_thread(last)
        if outcomes:
            self.last = outcomes
            self._announce(outcomes, when)
        minutes = self._settings().memory_sync_minutes
        if minutes > 0:
            self.start_timer(minutes * 60.0)

    def start_timer(self, seconds: float) -> None:
        """Sync every `seconds` from now on (once started, a second call changes nothing)."""
        if self._timer is None:
            self._timer = asyncio.create_task(self._sync_every(seconds))

    @property
    def timer_running(self) -> bool:
        return self._timer is not None

    async def _sync_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await self.sync(tell=True)
            except Exception:
                continue

    async def stop(self) -> None:
        """Stop the timer (at exit)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
