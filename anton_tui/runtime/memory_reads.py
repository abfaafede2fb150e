"""Memory as the Runtime shows it: the `/memory` overview, the entries of each kind with the lines that could not be
read, episode search and the turns of a session, and the sizes compaction looks at.

`MemoryReads` reads the memory stores off the event loop and hands out plain frozen snapshots, so the UI never
holds a store. Edits go through the Runtime's own operations (`update_entry`, `delete_entry`, `delete_episode_turn`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from anton_tui.runtime.protocols import MemorySettings

if TYPE_CHECKING:
    from anton_tui.memory.engrams.engram import Engram, MemoryProblem
    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from anton_tui.memory.engrams.rule_figures import RuleFigures
    from anton_tui.memory.episodes.store import Episode
    from anton_tui.memory.stores import MemoryStores

KINDS = ("rules", "lessons", "profile")
"""The files of one memory scope, as `kind_file` names them."""


@dataclass(frozen=True)
class ScopeOverview:
    """One memory scope at a glance. `exists` is False before the scope's folder is made (nothing else is read)."""

    scope: str
    folder: Path
    exists: bool
    identity: tuple[str, ...] = ()
    rules: int = 0
    lessons: int = 0
    topics: tuple[str, ...] = ()
    entries: int = 0
    """Bullet lines in rules.md and lessons.md: what the compaction threshold counts."""


@dataclass(frozen=True)
class MemoryOverview:
    """The `/memory` dashboard: the mode, each scope, when compaction is due, and the episodes."""

    mode: str
    configured_mode: str
    """The mode the setting names; `mode` differs when memory is switched off altogether."""
    scopes: tuple[ScopeOverview, ...]
    compaction_threshold: int
    compaction_every_turns: int
    compaction_rule: str
    episodic_memory: bool
    sessions: int

    @property
    def total_entries(self) -> int:
        return sum(scope.entries for scope in self.scopes)

    @property
    def crowded(self) -> list[ScopeOverview]:
        """The scopes with more entries than the compaction threshold."""
        return [scope for scope in self.scopes if scope.entries > self.compaction_threshold]


@dataclass(frozen=True)
class ScopeEntries:
    """The entries of one kind in one tier (``managed``, ``global`` or ``project``), in the order they are shown,
    the file they come from, and that file's lines that could not be read (left as they are)."""

    scope: str
    path: Path
    entries: list[Engram]
    problems: list[MemoryProblem] = field(default_factory=list)
    unwritable: str | None = None
    """Why the file will not be written (an edit or a delete is refused), or None."""


@dataclass(frozen=True)
class EntryListing:
    """Every entry of one kind (`rules`, `lessons` or `profile`), tier by tier."""

    kind_file: str
    tiers: tuple[ScopeEntries, ...]

    @property
    def count(self) -> int:
        return sum(len(tier.entries) for tier in self.tiers)


@dataclass(frozen=True)
class EpisodeSearch:
    """The lines of past conversations that match `query`, best first, or why the search failed."""

    query: str
    episodes: tuple[Episode, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class EpisodeTurn:
    turn: int
    question: str
    answer: str


@dataclass(frozen=True)
class SessionTurns:
    """The turns of one session's episode log (the current session, or the newest one logged)."""

    session: str | None
    turns: tuple[EpisodeTurn, ...] = ()

    def get(self, turn: int) -> EpisodeTurn | None:
        return next((found for found in self.turns if found.turn == turn), None)


@dataclass(frozen=True)
class CompactionFile:
    name: str  # "global lessons.md"
    entries: int


@dataclass(frozen=True)
class CompactionTable:
    """How many entries compaction would offer the model in each file, and from how many it does."""

    files: tuple[CompactionFile, ...]
    min_entries: int
    rule: str

    @property
    def due(self) -> list[CompactionFile]:
        return [file for file in self.files if file.entries >= self.min_entries]

    @property
    def largest(self) -> CompactionFile:
        return max(self.files, key=lambda file: (file.entries, file.name), default=CompactionFile("none", 0))


def entries_of(hc: Hippocampus, kind_file: str) -> list[Engram]:
    """One scope's entries of a kind, as they are listed: rules by kind (always, never, when), the rest in file
    order."""
    if kind_file == "rules":
        return hc.get_rules()
    if kind_file == "lessons":
        return hc.get_lessons()
    if kind_file == "profile":
        return hc.get_profile()
    raise ValueError(f"unknown kind of memory entry {kind_file!r}: use {', '.join(KINDS)}")


def path_of(hc: Hippocampus, kind_file: str) -> Path:
    return {"rules": hc.rules_path, "lessons": hc.lessons_path, "profile": hc.profile_path}[kind_file]


def turns_of(episodes: Iterable[Episode]) -> tuple[EpisodeTurn, ...]:
    """Each turn's first question and its last answer that says something, in turn order."""
    turns: dict[int, tuple[str, str]] = {}
    for episode in episodes:
        question, answer = turns.get(episode.turn, ("", ""))
        if episode.role == "user" and not question:
            question = episode.content
        elif episode.role == "assistant" and episode.content.strip():
            answer = episode.content
        if episode.role in ("user", "assistant"):
            turns[episode.turn] = (question, answer)
    return tuple(EpisodeTurn(turn, question, answer) for turn, (question, answer) in sorted(turns.items()))


def compaction_rule() -> str:
    """When compaction runs, in words (its module loads pydantic: not before the first frame)."""
    from anton_tui.memory.learners.compaction import RULE

    return RULE


class MemoryReads:
    """Snapshots of the memory stores for the UI, each read in a thread."""

    def __init__(self, stores: MemoryStores, settings: Callable[[], MemorySettings]) -> None:
        self._stores = stores
        self._settings = settings

    @property
    def episodic_enabled(self) -> bool:
        """Whether conversations are logged as episodes (and can be searched)."""
        return self._stores.episodic.enabled

    async def overview(self) -> MemoryOverview:
        """The `/memory` dashboard's figures."""
        from anton_tui.memory.engrams.cortex import COMPACTION_THRESHOLD

        settings, stores = self._settings(), self._stores

        def read() -> MemoryOverview:
            scopes = tuple(scope_overview(scope, hc) for scope, hc in stores.scoped())
            return MemoryOverview(
                mode=settings.effective_memory_mode,
                configured_mode=settings.memory_mode,
                scopes=scopes,
                compaction_threshold=COMPACTION_THRESHOLD,
                compaction_every_turns=settings.compaction_every_turns,
                compaction_rule=compaction_rule(),
                episodic_memory=bool(settings.episodic_memory),
                sessions=stores.episodic.session_count(),
            )

        return await asyncio.to_thread(read)

    async def entries(self, kind_file: str, *, managed: bool = False) -> EntryListing:
        """Every entry of `rules`, `lessons` or `profile`: global first, then the project's. With `managed`, the
        administrator's read-only tier comes first (it has rules and lessons, no profile)."""
        stores = self._stores

        def read() -> EntryListing:
            scopes = stores.scoped()
            if managed and kind_file != "profile" and stores.managed is not None:
                scopes.insert(0, ("managed", stores.managed))
            found = []
            for scope, hc in scopes:
                path = path_of(hc, kind_file)
                entries = entries_of(hc, kind_file)
                problems = hc.file_problems(kind_file)
                found.append(ScopeEntries(scope, path, entries, problems, hc.unwritable_reason(kind_file)))
            return EntryListing(kind_file, tuple(found))

        return await asyncio.to_thread(read)

    async def rule_figures(self) -> dict[tuple[str, str], RuleFigures]:
        """Each rule's use (prompts loaded into, last loaded, dormant) and, for the ACC's rules, its pattern before
        and since, by (scope, rule id) (see `memory.engrams.rule_figures`)."""
        from anton_tui.memory.engrams.rule_figures import rule_figures

        stores = self._stores

        def read() -> dict[tuple[str, str], RuleFigures]:
            return {(scope, rule): found for scope, hc in stores.scoped() for rule, found in rule_figures(hc).items()}

        return await asyncio.to_thread(read)

    async def search_episodes(self, query: str, max_results: int = 20) -> EpisodeSearch:
        """Past exchanges of this project whose lines match `query`, best first."""
        episodic = self._stores.episodic

        def search() -> EpisodeSearch:
            try:
                return EpisodeSearch(query, tuple(episodic.recall(query, max_results=max_results)))
            except (OSError, sqlite3.Error, ValueError) as exc:
                return EpisodeSearch(query, error=f"The search failed: {exc}")

        return await asyncio.to_thread(search)

    async def session_turns(self) -> SessionTurns:
        """The turns of the current session's episode log (or of the newest one when this session logged none)."""
        episodic = self._stores.episodic

        def read() -> SessionTurns:
            session = episodic.session_id
            if not session:
                sessions = episodic.sessions()
                session = sessions[0] if sessions else None
            return SessionTurns(session, turns_of(episodic.read_session(session)) if session else ())

        return await asyncio.to_thread(read)

    async def compaction_table(self) -> CompactionTable:
        """The entries compaction would offer the model in each file of both scopes."""
        stores = self._stores

        def read() -> CompactionTable:
            from anton_tui.memory.learners.compaction import MIN_FILE_ENTRIES, RULE, file_sizes

            files = tuple(
                CompactionFile(f"{scope} {file}.md", count)
                for scope, hc in stores.scoped()
                for file, count in file_sizes(hc).items()
            )
            return CompactionTable(files, MIN_FILE_ENTRIES, RULE)

        return await asyncio.to_thread(read)

    async def compaction_rule(self) -> str:
        return await asyncio.to_thread(compaction_rule)


def scope_overview(scope: str, hc: Hippocampus) -> ScopeOverview:
    if not hc.base_dir.is_dir():
        return ScopeOverview(scope, hc.base_dir, exists=False)
    return ScopeOverview(
        scope,
        hc.base_dir,
        exists=True,
        identity=tuple(hc.identity_facts()),
        rules=len(hc.get_rules()),
        lessons=len(hc.get_lessons()),
        topics=tuple(hc.topics()),
        entries=hc.entry_count(),
    )
