"""A session with no model, no saved conversations and no held memories, as the Runtime's protocol asks a session to
be (`anton_tui.runtime.protocols.ChatSessionLike`): the scripted sessions of the tests build on it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from anton_tui.agent.context_fit import ContextKeeper
from anton_tui.redact import Redactor


class QuietSession:
    """Answers nothing; every other part of a session says there is none (no model, no learning loops, no history
    store, no background work, nothing held for review)."""

    running = False
    background_events: asyncio.Queue[Any] | None = None
    llm = None
    learning: Any = None
    history_store = None
    context_reports: Any = None

    def __init__(self) -> None:
        self.redact = Redactor()
        self.context = ContextKeeper()
        self.held_why: dict[Any, Any] = {}
        self.closed = False

    async def turn(self, user_text: str, notes: Sequence[str] = ()) -> AsyncIterator[Any]:
        return
        yield  # an async generator that yields nothing

    def cancel(self) -> None:
        pass

    def new_conversation(self) -> None:
        pass

    async def warm_up(self) -> None:
        pass

    async def warm_up_model(self) -> None:
        pass

    async def warm_up_recall(self) -> None:
        pass

    async def close(self) -> None:
        self.closed = True

    def restore_held(self, held: Any) -> int:
        return 0

    def ask_between_turns(self) -> None:
        pass

    async def resume(self, session_id: str) -> Any:
        raise LookupError(f"No saved conversation {session_id!r}.")

    def transcript(self) -> list[Any]:
        return []

    def user_turns(self) -> list[Any]:
        return []

    def rewind(self, index: int) -> str:
        raise ValueError(f"Message {index} is not one of the user's messages.")

    def delete_saved(self, session_id: str) -> list[Path]:
        return []

