"""What the `Runtime` and its services need from a conversation, from the scratchpads and from the settings.

Each service is written against the small protocol of what it uses (the goals need `TurnTaking`, the usage figures
`ModelAccess`, the model warm-up `ModelWarmingUp`, the workspace `WorkspaceSession`, the history `HistorySession`,
shared memory `SyncSession`), and `ChatSessionLike` is all of them together: what a session must offer to run in the
app. The real `ChatSession` offers it, and so must a scripted session in a test (with no model, no saved
conversations and no held memories, it says so with `None`, empty lists and no-ops).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from anton_tui.agent.events import SessionEvent

if TYPE_CHECKING:
    from anton_tui.agent.context_fit import ContextKeeper
    from anton_tui.agent.context_report import ContextReports
    from anton_tui.agent.conversations import Resumed, TranscriptEntry, UserTurn
    from anton_tui.agent.history_store import SavedSession
    from anton_tui.llm.client import LLMClient
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.trust import HeldMemories
    from anton_tui.redact import Redactor


class TurnTaking(Protocol):
    """A conversation's turns: each user message starts one that streams engine events until it finishes.

    `notes` (the `@` files' note, the `!` commands run) go into the user message after the typed text."""

    @property
    def running(self) -> bool: ...

    def turn(self, user_text: str, notes: Sequence[str] = ()) -> AsyncIterator[SessionEvent]: ...

    def cancel(self) -> object:
        """Stop the running turn; may return an awaitable, which the runtime awaits."""
        ...

    def new_conversation(self) -> None: ...


class BackgroundWork(Protocol):
    """Work that outlives a turn: its events arrive on `background_events` (None: this session has no such work)."""

    @property
    def background_events(self) -> asyncio.Queue[SessionEvent] | None: ...

    async def warm_up(self) -> None:
        """Pay the slow first-time costs the screen needs (the secret patterns) in the background."""
        ...

    async def close(self) -> None: ...


class Redacting(Protocol):
    """Hides secrets: in the commands' output a turn carries, and in the memory a sync pushes."""

    @property
    def redact(self) -> Redactor: ...


class HeldMemoryReview(Protocol):
    """Memories held back for the user's review (copilot mode, or a turn that read untrusted text)."""

    @property
    def held_why(self) -> Collection[Engram]: ...

    def restore_held(self, held: HeldMemories) -> int: ...

    def ask_between_turns(self) -> None:
        """Ask the user about the held memories now, although no turn is running."""
        ...


class ContextReporting(Protocol):
    """The record of what each request carried of memory and skills (None before the first request)."""

    @property
    def context_reports(self) -> ContextReports | None: ...


class ModelAccess(Protocol):
    """The model client (None: a session without a model) and what sizes each request to it."""

    @property
    def llm(self) -> LLMClient | None: ...

    @property
    def context(self) -> ContextKeeper: ...


class ModelWarmingUp(Protocol):
    async def warm_up_model(self) -> None:
        """Import the model SDK in the background, so the first turn does not wait for it."""
        ...

    async def warm_up_recall(self) -> None:
        """Load what an episode search needs (its library and word analysers), so the first recall does not wait."""
        ...


class Compacting(Protocol):
    """The learning loops' compaction, run on demand (`/memory vacuum`)."""

    async def compact_now(self) -> list[str]: ...


class LearningLoops(Protocol):
    @property
    def learning(self) -> Compacting | None: ...


class ConversationList(Protocol):
    """The saved conversations of the project."""

    def list_sessions(self, limit: int | None = None) -> list[SavedSession]: ...

    def newest(self) -> str | None: ...


class SavedConversations(Protocol):
    """Saving, resuming, rewinding and deleting conversations (`history_store` is None when they are not saved)."""

    @property
    def history_store(self) -> ConversationList | None: ...

    async def resume(self, session_id: str) -> Resumed: ...

    def transcript(self) -> list[TranscriptEntry]: ...

    def user_turns(self) -> list[UserTurn]: ...

    def rewind(self, index: int) -> str: ...

    def delete_saved(self, session_id: str) -> list[Path]: ...


class WorkspaceSession(TurnTaking, Redacting, Protocol):
    """What the workspace needs (`workspace.py`): the session's turns, and the redactor for the commands' output."""


class HistorySession(HeldMemoryReview, ContextReporting, BackgroundWork, Protocol):
    """What the memory history needs (`memory_history.py`): the held memories, the context reports, and where to
    report a history that cannot be written."""


class SyncSession(Redacting, BackgroundWork, Protocol):
    """What shared memory needs (`memory_sync.py`): the redactor that keeps secrets from being pushed, and where to
    report a sync."""


class ChatSessionLike(
    TurnTaking,
    BackgroundWork,
    Redacting,
    HeldMemoryReview,
    ContextReporting,
    ModelAccess,
    ModelWarmingUp,
    LearningLoops,
    SavedConversations,
    Protocol,
):
    """Everything the `Runtime` asks of a session: the protocols of its services together."""


class ScratchpadControl(Protocol):
    """Actions the scratchpad pane can ask of the engine. Each may return an awaitable."""

    def cancel_cell(self, pad: str) -> object: ...

    def reset_pad(self, pad: str) -> object: ...

    def remove_pad(self, pad: str) -> object: ...


class Closable(Protocol):
    async def close(self) -> None: ...


class SettingsLike(Protocol):
    """The settings fields the UI reads: a subset of `anton_tui.config.Settings`. `keymap`, a mapping of binding ids
    to keys, is read when present, and the header shows `effective_memory_mode`, or `memory_mode` where there is
    none."""

    home: Path
    project_dir: Path
    theme: str
    planning_provider: str
    planning_model: str


class WorkspaceSettings(Protocol):
    @property
    def project_dir(self) -> Path: ...


class ModelSettings(Protocol):
    """What the status line and the header fall back on when the session has no model client of its own."""

    @property
    def planning_provider(self) -> str: ...

    @property
    def planning_model(self) -> str: ...

    @property
    def context_window(self) -> int | None: ...


class SyncSettings(Protocol):
    @property
    def memory_sync_minutes(self) -> int:
        """Sync shared memory every so many minutes (0: only by hand)."""
        ...


class MemorySettings(Protocol):
    """What the memory overview says of the settings: the mode, when compaction runs, whether episodes are kept."""

    @property
    def memory_mode(self) -> str: ...

    @property
    def effective_memory_mode(self) -> str: ...

    @property
    def compaction_every_turns(self) -> int: ...

    @property
    def episodic_memory(self) -> bool: ...
