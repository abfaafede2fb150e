"""The engine as the app sees it: one object that owns the settings, the conversation, the memory stores, the
scratchpads and the background work, and offers everything the UI shows and does as typed async operations.

The UI renders what the session emits, reads snapshots (plain frozen dataclasses) and calls these operations; it
never holds a store and never opens, renames or deletes a file itself. Every operation that touches the disk runs off
the event loop (`asyncio.to_thread`), so a slow disk never freezes the screen.

The `Runtime` composes services, each owning its state and written against a small protocol of what it needs from
the session (`protocols.py`):

- `workspace` (`workspace.py`): `@` files, `!` commands, and the turn that carries both
- `goals` (`goals.py`): `/goal` runs
- `usage` (`usage.py`): tokens and cost for the status line
- `model_warm_up` (`model_warm_up.py`): what only a turn needs (the model SDK, the ranking index, the episode search's library, the
  skills' change feed), loaded when the user starts typing
- `history` (`memory_history.py`): the memory history and the memories held for review
- `sync` (`memory_sync.py`): shared memory, by hand and on a timer
- `memory` (`memory_reads.py`): the memory overview, entries, episodes and compaction sizes
- `skills` (`skill_reads.py`) and `skill_edits` (`skill_edits.py`): reading and writing skills
- `skill_install` (`skill_install.py`): installing skills from a folder or a git URL
- `reflection` (`reflection.py`): the reflection chain and the review's proposals, conversation summaries and
  reflections in the background
- `conversations` (`conversations.py`): the saved conversations' tree, rename, trash, fork, export; the ledgers

The services over the memory stores are made with the stores, on first use. `RuntimeStarter` (in `start.py`) builds a
`Runtime` from the settings' sources; tests build one around a scripted session.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from anton_tui.memory.history.origin import producing
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths
from anton_tui.runtime.goals import Goals
from anton_tui.runtime.model_warm_up import ModelWarmUp
from anton_tui.runtime.protocols import ChatSessionLike, Closable, ScratchpadControl
from anton_tui.runtime.usage import Usage, UsageFigures
from anton_tui.runtime.workspace import Workspace
from anton_tui.settings_sources import FirstFrame

if TYPE_CHECKING:
    from anton_tui.agent.context_report import ContextReport
    from anton_tui.agent.conversations import Resumed, TranscriptEntry, UserTurn
    from anton_tui.agent.events import UsageUpdated
    from anton_tui.agent.history_store import SavedSession
    from anton_tui.agent.shell import ShellEvent
    from anton_tui.agent.skill_draft import DraftedSkill
    from anton_tui.config import Settings
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.history.repo import Change
    from anton_tui.runtime.conversations import Conversations
    from anton_tui.runtime.memory_history import MemoryHistory
    from anton_tui.runtime.memory_reads import MemoryReads
    from anton_tui.runtime.memory_sync import MemorySync
    from anton_tui.runtime.reflection import ReflectionService
    from anton_tui.runtime.skill_edits import SkillEdits
    from anton_tui.runtime.skill_install import SkillInstaller
    from anton_tui.runtime.skill_reads import SkillReads

T = TypeVar("T")


async def off_loop(function: Callable[..., T], *args: Any) -> T:
    """Run blocking work (the disk, a lock, a parse) in a thread, away from the event loop."""
    return await asyncio.to_thread(function, *args)


async def _maybe_await(result: object) -> Any:
    return await result if inspect.isawaitable(result) else result


class Runtime:
    """Settings, session, memory stores, scratchpads and background work of one project, behind typed operations.

    `session` is the conversation (the real `ChatSession`, the demo's, or a scripted one in tests). `stores` are
    the memory stores every part shares (built from the settings' folders when not given). `control` is what acts on
    the scratchpads (None: the pane's buttons say they cannot). `closing` is what to close on exit (the session by
    default; the demo closes its throw-away folder too). `banner` is a line shown atop the chat, and
    `suggest_prompt` pre-fills the empty prompt after each turn (the demo uses both).
    """

    def __init__(
        self,
        settings: Settings,
        session: ChatSessionLike,
        *,
        stores: MemoryStores | None = None,
        control: ScratchpadControl | None = None,
        closing: Closable | None = None,
        banner: str | None = None,
        suggest_prompt: Callable[[], str | None] | None = None,
        demo: bool = False,
    ) -> None:
        self.settings = settings
        self.session = session
        self._stores = stores
        self.control = control
        self._closing: Closable = session if closing is None else closing
        self.banner = banner
        self.suggest_prompt = suggest_prompt
        self.demo = demo
        self.workspace = Workspace(session, self._current_settings)
        self.goals = Goals(session)
        self.usage = Usage(session, self._current_settings)
        self.model_warm_up = ModelWarmUp(session, also=self._warm_up_for_turns)
        self._reflection: ReflectionService | None = None  # made when first asked for (`reflection`)

    def _current_settings(self) -> Settings:
        return self.settings

    def _memory_stores(self) -> MemoryStores:
        if self._stores is None:
            self._stores = MemoryStores.from_settings(self.settings)
        return self._stores

    # ----------------------------------------------------------------- the services over the memory stores

    @cached_property
    def history(self) -> MemoryHistory:
        from anton_tui.runtime.memory_history import MemoryHistory

        return MemoryHistory(self._memory_stores(), self.session)

    @cached_property
    def sync(self) -> MemorySync:
        from anton_tui.runtime.memory_sync import MemorySync

        return MemorySync(self._memory_stores(), self.session, self._current_settings)

    @cached_property
    def memory(self) -> MemoryReads:
        from anton_tui.runtime.memory_reads import MemoryReads

        return MemoryReads(self._memory_stores(), self._current_settings)

    @cached_property
    def skills(self) -> SkillReads:
        from anton_tui.runtime.skill_reads import SkillReads

        return SkillReads(self._memory_stores().skills)

    @cached_property
    def skill_edits(self) -> SkillEdits:
        from anton_tui.runtime.skill_edits import SkillEdits

        return SkillEdits(self._memory_stores().skills)

    @property
    def reflection(self) -> ReflectionService:
        """The reflection chain and the review's proposals. A real session brings its own parts (they share its
        model and its review pipeline); any other works over the stores alone, with no model and no background
        work."""
        if self._reflection is None:
            from anton_tui.agent.session import ChatSession
            from anton_tui.runtime.reflection import ReflectionService, standalone_parts

            session = self.session
            if isinstance(session, ChatSession) and session.reflection is not None:
                self._reflection = ReflectionService(session.reflection, session, self._current_settings)
            else:
                parts = standalone_parts(self._memory_stores())
                self._reflection = ReflectionService(parts, None, self._current_settings)
        return self._reflection

    @cached_property
    def skill_install(self) -> SkillInstaller:
        from anton_tui.runtime.skill_install import SkillInstaller

        return SkillInstaller(self._memory_stores().skills)

    @cached_property
    def conversations(self) -> Conversations:
        from anton_tui.agent.session import ChatSession
        from anton_tui.runtime.conversations import Conversations

        session = self.session if isinstance(self.session, ChatSession) else None  # others save no conversation
        return Conversations(session, Path(self.settings.project_dir))

    # ----------------------------------------------------------------- what the UI reads

    @property
    def paths(self) -> AntonPaths:
        """Where this project's memory, skills, episodes and settings live."""
        return self._memory_stores().paths

    @property
    def first_frame(self) -> FirstFrame:
        return FirstFrame.of(self.settings)

    @property
    def provider_label(self) -> str:
        return self.usage.provider_label

    @property
    def needs_setup(self) -> bool:
        """True when the planning or the coding model has no way to be called (no key, no compatible server URL)."""
        if self.demo:
            return False
        from anton_tui.config import Settings

        # Runtimes that tests build around a scripted session carry stand-in settings, which name no model to set up.
        return isinstance(self.settings, Settings) and self.settings.needs_setup()  # type: ignore[redundant-expr]  # stand-ins, see above

    @property
    def busy(self) -> bool:
        return self.session.running

    @property
    def background_events(self) -> asyncio.Queue[Any] | None:
        return self.session.background_events

    # ----------------------------------------------------------------- the conversation

    def turn(self, text: str) -> AsyncIterator[Any]:
        """The events of one turn, carrying the `@` files and the `!` commands run before it."""
        return self.workspace.turn(text)

    async def cancel(self) -> None:
        self.goals.stop()  # a running goal starts no further turn
        await _maybe_await(self.session.cancel())

    def new_conversation(self) -> None:
        """Forget the conversation so far; memory, skills and past episodes stay."""
        self.workspace.forget_held_commands()
        self.session.new_conversation()

    async def scratchpad_action(self, action: str, pad: str) -> Any:
        """`cancel_cell`, `reset_pad` or `remove_pad` on one pad; None when this session has no scratchpad control."""
        control = self.control
        if control is None:
            return None
        match action:
            case "cancel_cell":
                result = control.cancel_cell(pad)
            case "reset_pad":
                result = control.reset_pad(pad)
            case "remove_pad":
                result = control.remove_pad(pad)
            case _:
                raise ValueError(f"unknown scratchpad action {action!r}")
        return await _maybe_await(result)

    async def warm_up(self) -> None:
        """Start the background work and pay the first-time costs the screen needs, and the episode search index's
        catch-up (indexing what was written since it was last used would slow typing down if it waited for the
        first keystroke); what only a turn needs waits until the user starts typing (`warm_up_model`)."""
        await self.history.start()  # first: it is quick and brings back held memories
        await self.sync.start()  # shared memory: the last sync in the header, the timer if one is set
        await self.session.warm_up()
        if self._reflects:
            await self.reflection.start()  # summaries left to write, due reflections, the idle watch

    async def _warm_up_for_turns(self) -> None:
        """After the model SDK, when the user started typing: the skills' change feed (each turn's listing learns
        what changed from inotify) and what a recall needs."""
        await off_loop(self._memory_stores().skills.follow_changes)
        await self.session.warm_up_recall()

    @property
    def _reflects(self) -> bool:
        """Whether this runtime runs reflection's background work (a real session with its parts, not the demo)."""
        from anton_tui.agent.session import ChatSession

        return not self.demo and isinstance(self.session, ChatSession) and self.session.reflection is not None

    async def close(self) -> None:
        if self._reflection is not None:  # the conversation in progress gets a moment to be summarised
            await self._reflection.close()
        if self._stores is not None:
            await self.sync.stop()
            await self.history.flush()  # what is queued is committed before exit
        await self._closing.close()
        if self._stores is not None:  # the skills as listed, for the next start; the change feed's descriptor closed
            await off_loop(self._stores.skills.save_listing_snapshot)
            await off_loop(self._stores.skills.stop_following_changes)

    # ----------------------------------------------------------------- settings

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings now: the session is re-configured in place (raises when it cannot be)."""
        from anton_tui.agent.factory import apply_settings
        from anton_tui.agent.session import ChatSession

        if not isinstance(self.session, ChatSession):
            raise RuntimeError("this session has no model to re-configure")
        apply_settings(self.session, settings, stores=self._memory_stores())
        self.settings = settings

    async def save_settings(self, updates: dict[str, str | None]) -> Settings:
        """Write `updates` to the project's `.anton/.env` and return the settings as they now load."""
        return await save_settings(Path(self.settings.project_dir), updates)

    async def save_theme(self, name: str) -> None:
        """Remember the theme in the project's `.env` (raises OSError or ValueError when it cannot be written)."""
        from anton_tui.config import write_project_env

        await off_loop(write_project_env, Path(self.settings.project_dir), {"ANTON_THEME": name})

    # ----------------------------------------------------------------- memory entries and episodes

    async def update_entry(self, scope: str, kind_file: str, entry_id: str, text: str) -> bool:
        """Replace one entry's text; False when it changed on disk meanwhile. Raises MemoryFileError or ValueError."""
        hc = self._memory_stores().hippocampus(scope)
        with producing("user edit", why=f"edited in the app ({scope} {kind_file})"):
            return await off_loop(hc.update_entry, kind_file, entry_id, text)

    async def delete_entry(self, scope: str, kind_file: str, entry_id: str) -> bool:
        """Remove one entry; False when it was already gone. Raises MemoryFileError."""
        hc = self._memory_stores().hippocampus(scope)
        with producing("user edit", why=f"deleted in the app ({scope} {kind_file})"):
            return await off_loop(hc.delete_entry, kind_file, entry_id)

    async def delete_episode_turn(self, session_id: str, turn: int) -> int:
        """Remove every line of one turn from a session's episode log; returns how many lines went."""
        return await off_loop(self._memory_stores().episodic.delete_turn, session_id, turn)

    @property
    def can_compact(self) -> bool:
        """Whether this session can compact memory (it needs the model's learning loops)."""
        return self.session.learning is not None

    async def compact_now(self) -> list[str] | str:
        """Compact both scopes now; returns the lines to report."""
        learning = self.session.learning
        if learning is None:
            return "Compaction is not available in this session."
        return await learning.compact_now()

    # ----------------------------------------------------------------- skills the model drafts

    @property
    def can_draft_skills(self) -> bool:
        """Whether this session can turn its work into a skill (it needs a model client)."""
        return self.session.llm is not None

    async def draft_skill(self, hint: str) -> DraftedSkill:
        """Turn the recent work into a skill with the model, through the review (saved, held for the user or
        rejected). Raises LLMError or ValueError."""
        from anton_tui.agent.session import ChatSession
        from anton_tui.agent.skill_draft import draft_skill

        if not isinstance(self.session, ChatSession):
            raise ValueError("this session has no model to draft a skill with")
        return await draft_skill(self.session, hint)

    async def preload_skill(self, label: str) -> str:
        """Give a skill to every request of this conversation (``/skill load``); returns the label loaded. Raises
        ValueError with the reason when it cannot be loaded."""
        from anton_tui.agent.session import ChatSession

        if not isinstance(self.session, ChatSession):
            raise ValueError("this session cannot preload skills")
        return await off_loop(self.session.turn_memory.preload, self._memory_stores().skills, label)

    # ----------------------------------------------------------------- saved conversations

    @property
    def can_save_conversations(self) -> bool:
        """Whether conversations are saved and can be resumed (they need episodic memory)."""
        return self.session.history_store is not None

    async def list_conversations(self) -> list[SavedSession]:
        """The project's saved conversations (this program's and Anton's), newest first; a summarised one is shown
        by its summary's title."""
        from anton_tui.agent.session import ChatSession

        store = self.session.history_store
        rows = await off_loop(store.list_sessions) if store is not None else []
        session = self.session
        if isinstance(session, ChatSession) and session.summaries is not None:
            rows = await off_loop(session.summaries.titled, rows)
        return rows

    async def newest_conversation(self) -> str | None:
        store = self.session.history_store
        return await off_loop(store.newest) if store is not None else None

    async def resume(self, session_id: str) -> Resumed:
        """Continue a saved conversation. Raises LookupError, HistoryBroken (a ValueError) or RuntimeError."""
        return await self.session.resume(session_id)

    def transcript(self) -> list[TranscriptEntry]:
        """The conversation so far, as the chat shows it (typed messages, answers, tool calls, a summary)."""
        return self.session.transcript()

    def user_turns(self) -> list[UserTurn]:
        return self.session.user_turns()

    def user_turn_shown(self, shown: Sequence[str], at: int) -> UserTurn | None:
        """The turn of the conversation behind message `at` of the user's messages the chat shows (`shown`, oldest
        first); None when it is no longer in the conversation (a summarised or rewound message). Paired from the newest
        back, so a message typed twice is matched with the right turn."""
        from anton_tui.agent.context_report import match_from_end

        turns = self.session.user_turns()
        pairs = match_from_end(shown, [turn.text for turn in turns])
        return turns[pairs[at]] if at in pairs else None

    async def rewind(self, index: int) -> str:
        """Drop the user message at history `index` and everything after it (the saved file follows); returns the
        message's text. Memory written by the dropped turns stays."""
        return await off_loop(self.session.rewind, index)

    async def delete_conversation(self, session_id: str) -> list[Path]:
        """Delete a saved conversation (its history file and episode log); not the one in progress."""
        return await off_loop(self.session.delete_saved, session_id)

    # ----------------------------------------------------------------- the services' operations the screens call
    # (one line each, under the names the main screen, the app and the prompt have always used)

    def warm_up_model(self) -> asyncio.Task[None]:
        return self.model_warm_up.start()

    def note_usage(self, event: UsageUpdated) -> UsageFigures:
        return self.usage.note(event)

    @property
    def held_count(self) -> int:
        """Memories and proposed changes waiting for the user's review (the header's badge)."""
        return self.history.held_count + self._held_changes

    def held_count_without(self, decided: Iterable[Engram]) -> int:
        return self.history.held_count_without(decided) + self._held_changes

    @property
    def _held_changes(self) -> int:
        return self._reflection.held if self._reflection is not None else 0

    async def record_external(self, scope: str | None = None) -> None:
        await self.history.record_external(scope)

    async def memory_log(self, scope: str | None = None, limit: int | None = None) -> list[Change]:
        return await self.history.log(scope, limit)

    def context_report(self, turn: int | None = None) -> ContextReport | None:
        return self.history.context_report(turn)

    async def match_files(self, query: str, limit: int = 50) -> list[str]:
        return await self.workspace.match_files(query, limit)

    @property
    def workspace_capped(self) -> bool:
        return self.workspace.capped

    def run_shell(self, command: str) -> AsyncIterator[ShellEvent]:
        return self.workspace.run_shell(command)

    def goal(self, objective: str, max_turns: int) -> AsyncIterator[Any]:
        return self.goals.start(objective, max_turns)

    @property
    def goal_running(self) -> bool:
        return self.goals.running

    def stop_goal(self) -> bool:
        return self.goals.stop()

    async def skill_commands(self) -> list[tuple[str, str]]:
        return await self.skills.slash_commands()


async def save_settings(project_dir: Path, updates: dict[str, str | None]) -> Settings:
    """Write `updates` to `<project>/.anton/.env` and return the settings as they now load.

    Raises ValueError or OSError when nothing could be written, and SettingsError when the file was written but the
    settings do not load."""
    from anton_tui.config import load_settings, write_project_env

    def save() -> Settings:
        write_project_env(project_dir, updates)
        return load_settings(project_dir)

    return await off_loop(save)
