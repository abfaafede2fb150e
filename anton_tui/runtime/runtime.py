"""The engine as the app sees it: one object that owns the settings, the conversation, the memory stores, the
scratchpads and the background work, and offers everything the UI does as typed async operations.

The UI renders what the session emits and calls these operations; it never opens, renames or deletes a file itself.
Every operation that touches the disk runs off the event loop (`asyncio.to_thread`), so a slow disk never freezes
the screen. `RuntimeStarter` (in `start.py`) builds a `Runtime` from the settings' sources; tests build one around a
scripted session.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from anton_tui.memory.history.origin import producing
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths
from anton_tui.runtime.goal_ops import GoalOps
from anton_tui.runtime.memory_history import MemoryHistoryOps
from anton_tui.runtime.memory_sync import MemorySyncOps
from anton_tui.runtime.model_warm_up import ModelWarmUpOps
from anton_tui.runtime.protocols import ChatSessionLike, HoldsTurnMemory, ScratchpadControl
from anton_tui.runtime.skill_install_ops import SkillInstallOps, SkillInstallReport  # noqa: F401 (re-exported)
from anton_tui.runtime.usage import UsageOps
from anton_tui.runtime.workspace_ops import WorkspaceOps
from anton_tui.settings_sources import FirstFrame

if TYPE_CHECKING:
    from anton_tui.agent.conversations import Resumed, TranscriptEntry, UserTurn
    from anton_tui.agent.history_store import SavedSession
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.episodes.store import Episode
    from anton_tui.memory.skills.store import BrokenSkill, Skill

T = TypeVar("T")


@dataclass(frozen=True)
class SkillListing:
    """The saved skills and the broken ones, as read at one moment: which skills have a `stats.json`, and the files
    in each broken skill's folder (shown read-only)."""

    skills: list[Skill]
    broken: list[BrokenSkill]
    with_stats: frozenset[str] = frozenset()
    broken_files: dict[str, list[str]] = field(default_factory=dict)
    clashes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Labels held by more than one source: the sources whose skill is hidden by the one listed."""

    def skill(self, label: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.label == label), None)

    def problem(self, label: str, source: str = "user") -> BrokenSkill | None:
        return next((p for p in self.broken if p.label == label and p.source == source), None)

    def files_of(self, problem: BrokenSkill) -> list[str]:
        """The files in a broken skill's folder (keyed by label, or `source:label` outside the user's folder)."""
        return self.broken_files.get(broken_key(problem.label, problem.source), [])


def broken_key(label: str, source: str) -> str:
    return label if source == "user" else f"{source}:{label}"


@dataclass(frozen=True)
class SkillSaved:
    skill: Skill
    warning: str | None = None


async def off_loop(function: Callable[..., T], *args: Any) -> T:
    """Run blocking work (the disk, a lock, a parse) in a thread, away from the event loop."""
    return await asyncio.to_thread(function, *args)


async def _maybe_await(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


class Runtime(MemoryHistoryOps, MemorySyncOps, WorkspaceOps, GoalOps, UsageOps, ModelWarmUpOps, SkillInstallOps):
    # memory history (memory_history.py), sync (memory_sync.py), `@` and `!` (workspace_ops.py), /goal runs (goal_ops.py),
    # the status line (usage.py), the model SDK's import when typing starts (model_warm_up.py),
    # installing skills (skill_install_ops.py)
    """Settings, session, memory stores, scratchpads and background work of one project, behind typed operations.

    `session` is the conversation (the real `ChatSession`, the demo's, or a scripted one in tests). `stores` are
    the memory stores every part shares (built from the settings' folders when not given). `closing` is what to close
    on exit (the session by default; the demo closes its throw-away folder too). `banner` is a line shown atop the
    chat, and `suggest_prompt` pre-fills the empty prompt after each turn (the demo uses both).
    """

    def __init__(
        self,
        settings: Any,
        session: ChatSessionLike,
        *,
        stores: MemoryStores | None = None,
        control: ScratchpadControl | None = None,
        closing: Any = None,
        banner: str | None = None,
        suggest_prompt: Callable[[], str | None] | None = None,
        demo: bool = False,
    ) -> None:
        self.settings = settings
        self.session = session
        self._stores = stores
        self.control = control if control is not None else session if isinstance(session, ScratchpadControl) else None
        self._closing = session if closing is None else closing
        self.banner = banner
        self.suggest_prompt = suggest_prompt
        self.demo = demo

    # ----------------------------------------------------------------- what the UI reads

    @property
    def stores(self) -> MemoryStores:
        if self._stores is None:
            self._stores = MemoryStores.from_settings(self.settings)
        return self._stores

    @property
    def paths(self) -> AntonPaths:
        return AntonPaths.from_settings(self.settings)

    @property
    def first_frame(self) -> FirstFrame:
        return FirstFrame.of(self.settings)

    @property
    def provider_label(self) -> str:
        """What the header calls the planning provider: the session's own name for it when it has one."""
        role = getattr(getattr(self.session, "llm", None), "planning", None)
        name = getattr(getattr(role, "provider", None), "name", None)
        return str(name or getattr(self.settings, "planning_provider", ""))

    @property
    def needs_setup(self) -> bool:
        """True when the planning or the coding model has no way to be called (no key, no compatible server URL)."""
        if self.demo or not hasattr(self.settings, "has_api_key"):
            return False
        from anton_tui.config import needs_setup

        return needs_setup(self.settings)

    @property
    def busy(self) -> bool:
        return bool(getattr(self.session, "running", False))

    @property
    def background_events(self) -> asyncio.Queue | None:
        return getattr(self.session, "background_events", None)

    # ----------------------------------------------------------------- the conversation

    def turn(self, text: str) -> Any:
        """The events of one turn (an async iterator), carrying the `@` files and the `!` commands run before it."""
        return self.turn_with_context(text)

    async def cancel(self) -> None:
        self.stop_goal()  # a running goal starts no further turn
        await _maybe_await(self.session.cancel())

    def new_conversation(self) -> None:
        """Forget the conversation so far; memory, skills and past episodes stay."""
        self.forget_held_commands()
        forget = getattr(self.session, "new_conversation", None)
        if forget is not None:
            forget()

    async def scratchpad_action(self, action: str, pad: str) -> Any:
        """`cancel_cell`, `reset_pad` or `remove_pad` on one pad; None when this session has no scratchpad control."""
        if self.control is None:
            return None
        return await _maybe_await(getattr(self.control, action)(pad))

    async def warm_up(self) -> None:
        """Pay the slow first-time costs in the background: the model SDK import, the episode search index and the
        skills' change feed."""
        # ---- memory history (runtime/memory_history.py): first, it is quick and brings back held memories ----
        await self.start_history()
        await self.start_sync()  # shared memory: the last sync in the header, the timer if one is set
        # ---- skills: listings learn what changed from an inotify feed, not a stat per skill (skill_feed.py) ----
        await off_loop(self.stores.skills.follow_changes)
        warm_up = getattr(self.session, "warm_up", None)
        if warm_up is not None:
            await warm_up()
        # ---- the model SDK (runtime/model_warm_up.py): when the user starts typing, or a little later ----
        self.schedule_model_warm_up()

    async def close(self) -> None:
        self.cancel_model_warm_up()
        # ---- memory history: what is queued is committed before exit ----
        await self.stop_sync()
        if self._stores is not None:
            await self.flush_history()
        close = getattr(self._closing, "close", None)
        if close is not None:
            await _maybe_await(close())
        if self._stores is not None:  # the skills' change feed: its inotify descriptor is closed
            await off_loop(self._stores.skills.stop_following_changes)

    # ----------------------------------------------------------------- settings

    async def apply_settings(self, settings: Any) -> None:
        """Use new settings now: the session is re-configured in place (raises when it cannot be)."""
        apply = getattr(self.session, "apply_settings", None)
        if apply is not None:
            apply(settings)
        else:
            from anton_tui.agent.factory import apply_settings

            apply_settings(self.session, settings, stores=self.stores)  # type: ignore[arg-type]
        self.settings = settings

    async def save_settings(self, updates: dict[str, str | None]) -> Any:
        """Write `updates` to the project's `.anton/.env` and return the settings as they now load."""
        return await save_settings(Path(self.settings.project_dir), updates)

    async def save_theme(self, name: str) -> None:
        """Remember the theme in the project's `.env` (raises OSError or ValueError when it cannot be written)."""
        from anton_tui.config import write_project_env

        await off_loop(write_project_env, Path(self.settings.project_dir), {"ANTON_THEME": name})

    # ----------------------------------------------------------------- memory entries

    async def update_entry(self, scope: str, kind_file: str, entry_id: str, text: str) -> bool:
        """Replace one entry's text; False when it changed on disk meanwhile. Raises MemoryFileError or ValueError."""
        with producing("user edit", why=f"edited in the app ({scope} {kind_file})"):
            return await off_loop(self.stores.hippocampus(scope).update_entry, kind_file, entry_id, text)

    async def delete_entry(self, scope: str, kind_file: str, entry_id: str) -> bool:
        with producing("user edit", why=f"deleted in the app ({scope} {kind_file})"):
            return await off_loop(self.stores.hippocampus(scope).delete_entry, kind_file, entry_id)

    async def entries(self, kind_file: str) -> list[tuple[str, Engram]]:
        """Every entry of `rules`, `lessons` or `profile` in both scopes, global first."""

        def read() -> list[tuple[str, Engram]]:
            return [(scope, engram) for scope, hc in self.stores.scoped() for engram in hc.list_entries(kind_file)]

        return await off_loop(read)

    async def search_episodes(self, query: str, max_results: int = 20) -> list[Episode]:
        return await off_loop(lambda: self.stores.episodic.recall(query, max_results=max_results))

    @property
    def can_compact(self) -> bool:
        """Whether this session can compact memory (it needs the model's learning loops)."""
        return getattr(self.session, "learning", None) is not None

    async def compact_now(self) -> Any:
        """Compact both scopes now; returns the lines to report."""
        learning = getattr(self.session, "learning", None)
        if learning is None:
            return "Compaction is not available in this session."
        return await learning.compact_now()

    # ----------------------------------------------------------------- skills

    async def list_skills(self) -> SkillListing:
        store = self.stores.skills

        def listing() -> SkillListing:
            skills, broken = store.survey(lambda skill: skill)  # each folder read once
            with_stats = frozenset(s.label for s in skills if s.path is not None and (s.path / "stats.json").is_file())
            files = {broken_key(problem.label, problem.source): folder_files(problem.path) for problem in broken}
            clashes = {clash.label: clash.shadowed for clash in store.clashes()}
            return SkillListing(skills, broken, with_stats, files, clashes)

        return await off_loop(listing)

    async def skill_commands(self) -> list[tuple[str, str]]:
        """(label, description) of the skills the user can run as `/label` (marked `user-invocable: true`)."""
        return await off_loop(self.stores.skills.slash_commands)

    async def load_skill(self, label: str) -> Skill | None:
        return await off_loop(self.stores.skills.load, label)

    async def preload_skill(self, label: str) -> str:
        """Give a skill to every request of this conversation (``/skill load``); returns the label loaded. Raises
        ValueError with the reason when it cannot be loaded."""
        if not isinstance(self.session, HoldsTurnMemory):
            raise ValueError("this session cannot preload skills")
        return await off_loop(self.session.turn_memory.preload, self.stores.skills, label)

    async def skill_problem(self, label: str) -> BrokenSkill | None:
        return await off_loop(self.stores.skills.problem, label)

    async def read_skill_file(self, label: str, relative: str, limit: int = 1024 * 1024, source: str = "user") -> str:
        """A file of a skill as text (for read-only views), cut after `limit` bytes; a short note when unreadable.
        `source` names a read-only source's folder instead of the user's own."""
        roots = {item.key: item.path for item in self.stores.skills.sources}
        root = self.stores.skills.root if source == "user" else roots.get(source)
        if root is None:
            return f"(the source {source} is switched off)"
        return await off_loop(read_text_capped, root / label / relative, limit)

    async def skill_files(self, label: str) -> list[str]:
        """The files in a skill's folder (paths inside it), hidden files and caches left out."""
        return await off_loop(folder_files, self.stores.skills.root / label)

    async def save_skill(self, skill: Skill) -> Skill:
        """Write a skill in its own format. Raises ValueError or OSError, with nothing written."""
        return await off_loop(self.stores.skills.save, skill)

    async def save_skill_part(self, label: str, part: str, file: str, text: str) -> Skill:
        """Replace one part of a saved skill (after checking the skill stays valid) and write it."""
        from anton_tui.runtime.skill_edits import edited_skill

        def save() -> Skill:
            skill = self.stores.skills.load(label)
            if skill is None:
                raise ValueError(f"{label} cannot be loaded any more; nothing was written.")
            return self.stores.skills.save(edited_skill(skill, part, file, text))

        return await off_loop(save)

    async def create_skill(self, name: str, when_to_use: str) -> Skill:
        """A new skill with a placeholder procedure, under a label made unique from `name`."""
        from anton_tui.memory.skills.store import Skill, make_unique_label
        from anton_tui.runtime.skill_edits import NEW_PROCEDURE

        def create() -> Skill:
            label = make_unique_label(name, self.stores.skills)
            skill = Skill(label=label, name=name, when_to_use=when_to_use, declarative_md=NEW_PROCEDURE)
            return self.stores.skills.save(skill)

        return await off_loop(create)

    async def rename_skill(self, label: str, new_label: str) -> SkillSaved:
        """Move a skill to a new label. Raises `SkillRenameError` (a ValueError) when nothing was moved."""
        from anton_tui.runtime.skill_edits import rename_skill

        skill, warning = await off_loop(rename_skill, self.stores.skills, label, new_label)
        return SkillSaved(skill, warning)

    async def delete_skill(self, label: str) -> bool:
        return await off_loop(self.stores.skills.delete, label)

    def label_problem(self, label: str, skill_format: str, current: str | None = None) -> str | None:
        """Why `label` cannot name a skill of `skill_format` (a check of names in one folder listing)."""
        from anton_tui.runtime.skill_edits import label_problem

        return label_problem(label, skill_format, self.stores.skills, current)

    @property
    def can_draft_skills(self) -> bool:
        """Whether this session can turn its work into a skill (it needs a model client)."""
        return getattr(self.session, "llm", None) is not None

    async def draft_skill(self, hint: str) -> Skill:
        """Turn the recent work into a saved skill with the model. Raises LLMError or ValueError."""
        from anton_tui.agent.skill_draft import draft_skill

        return await draft_skill(self.session, hint)  # type: ignore[arg-type]

    # ----------------------------------------------------------------- saved conversations

    @property
    def can_save_conversations(self) -> bool:
        """Whether conversations are saved and can be resumed (they need episodic memory)."""
        return getattr(self.session, "history_store", None) is not None

    async def list_conversations(self) -> list[SavedSession]:
        """The project's saved conversations (this program's and Anton's), newest first."""
        store = getattr(self.session, "history_store", None)
        return await off_loop(store.list_sessions) if store is not None else []

    async def newest_conversation(self) -> str | None:
        store = getattr(self.session, "history_store", None)
        return await off_loop(store.newest) if store is not None else None

    async def resume(self, session_id: str) -> Resumed:
        """Continue a saved conversation. Raises LookupError, HistoryBroken (a ValueError) or RuntimeError."""
        return await self.session.resume(session_id)  # type: ignore[attr-defined]

    def transcript(self) -> list[TranscriptEntry]:
        """The conversation so far, as the chat shows it (typed messages, answers, tool calls, a summary)."""
        transcript = getattr(self.session, "transcript", None)
        return transcript() if transcript is not None else []

    def user_turns(self) -> list[UserTurn]:
        user_turns = getattr(self.session, "user_turns", None)
        return user_turns() if user_turns is not None else []

    async def rewind(self, index: int) -> str:
        """Drop the user message at history `index` and everything after it (the saved file follows); returns the
        message's text. Memory written by the dropped turns stays."""
        return await off_loop(self.session.rewind, index)  # type: ignore[attr-defined]

    async def delete_conversation(self, session_id: str) -> list[Path]:
        """Delete a saved conversation (its history file and episode log); not the one in progress."""
        return await off_loop(self.session.delete_saved, session_id)  # type: ignore[attr-defined]

    # ================================================================= skills: layouts, sources and install
    # (kept together: conversion of older-layout skills, read-only skill sources, installing skills)

    async def convert_and_save_skill_part(self, label: str, part: str, file: str, text: str) -> SkillSaved:
        """Convert an older-layout skill to SKILL.md (its old files copied to a backup first), then save one edited
        part of it. The warning names the new label and where the backup is."""
        from anton_tui.memory.skills.convert import convert_legacy
        from anton_tui.runtime.skill_edits import converted_part_file, edited_skill

        def save() -> SkillSaved:
            converted = convert_legacy(self.stores.skills, label)
            new_file = converted_part_file(part, file)
            saved = self.stores.skills.save(edited_skill(converted.skill, part, new_file, text))
            note = (
                f"Converted {converted.old_label} to SKILL.md as {saved.label}; "
                f"its old files are kept in {converted.backup}."
            )
            return SkillSaved(saved, note)

        return await off_loop(save)

    async def copy_and_save_skill_part(self, label: str, part: str, file: str, text: str) -> SkillSaved:
        """Copy a read-only skill (built-in or another tool's) into the user's skills, then save one edited part of
        the copy. The copy shadows the original from then on; the original is never written."""
        from anton_tui.memory.skills.sources import SOURCE_TITLES
        from anton_tui.runtime.skill_edits import edited_skill

        def save() -> SkillSaved:
            original = self.stores.skills.load(label)
            copied = self.stores.skills.copy_to_user(label)
            saved = self.stores.skills.save(edited_skill(copied, part, file, text))
            where = SOURCE_TITLES.get(original.source, original.source) if original is not None else "its source"
            note = f"Copied {saved.label} from {where} into your skills and saved the change; your copy is used now."
            return SkillSaved(saved, note)

        return await off_loop(save)


async def save_settings(project_dir: Path, updates: dict[str, str | None]) -> Any:
    """Write `updates` to `<project>/.anton/.env` and return the settings as they now load.

    Raises ValueError or OSError when nothing could be written, and SettingsError when the file was written but the
    settings do not load."""
    from anton_tui.config import load_settings, write_project_env

    def save() -> Any:
        write_project_env(project_dir, updates)
        return load_settings(project_dir)

    return await off_loop(save)


def read_text_capped(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return f"(cannot be read: {exc.strerror})"
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n… (file continues)" if len(data) > limit else "")


def folder_files(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            files.append(rel.as_posix())
    return files
