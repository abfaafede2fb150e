"""Brings the global and the project memory together: what goes into the prompt, and where new memories are saved.

`build_memory_context()` assembles the memory sections of the system prompt, `get_scratchpad_context()` the lessons
shown with the scratchpad tool, `encode()` routes new engrams to the right scope and file (secrets taken out first;
`encode_all()` also says which), and `encoding_gate()` decides (per memory mode) whether the user must confirm first.
`compact_all()` / `compact_now()` (which scopes are due, then `compaction` file by file) and
`maybe_update_identity()` (see `identity`) use the coding model.

Brain analogy: the cortex is where consolidated knowledge is organised and put to use; the hippocampi store it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from anton_tui.memory.engrams.engram import RULE_KINDS, Engram, split_entry
from anton_tui.memory.engrams.hippocampus import Hippocampus, MemoryFileError
from anton_tui.memory.engrams.managed import learned_memory_notice, operator_precedence
from anton_tui.memory.engrams.ranking import TurnQuery
from anton_tui.memory.engrams.selection import DEFAULT_BUDGET_TOKENS, MemorySelection, MemorySelector
from anton_tui.memory.files.backups import keep_backup
from anton_tui.settings_sources import InvalidSetting, MemoryMode, setting_value

if TYPE_CHECKING:
    from anton_tui.memory.learners.compaction import CompactionOutcome
    from anton_tui.redact import Redactor

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
IDENTITY_TOKENS = 300
RULES_TOKENS = 1500
LESSONS_TOKENS = 1000
COMPACTION_THRESHOLD = 20
DISABLED_MESSAGE = "Memory encoding is disabled."


@dataclasses.dataclass(frozen=True, slots=True)
class Encoded:
    """What `Cortex.encode_all` did: one action line per engram, the engrams with their secrets taken out, and for
    each file that would have received a secret, the kinds taken out (``("project lessons.md", ("GitHub token",))``).
    """

    actions: tuple[str, ...] = ()
    engrams: tuple[Engram, ...] = ()
    removed: tuple[tuple[str, tuple[str, ...]], ...] = ()


class Cortex:
    """Both scopes of declarative memory, behind one memory mode (autopilot, copilot or off)."""

    def __init__(
        self,
        global_hc: Hippocampus,
        project_hc: Hippocampus,
        mode: str = "autopilot",
        llm: Any = None,
        episodic: Any = None,
        managed_hc: Hippocampus | None = None,
        shared: Callable[[], bool] | None = None,
    ) -> None:
        self.global_hc = global_hc
        self.project_hc = project_hc
        self.managed_hc = managed_hc  # the read-only managed tier, read first, never written (see `managed`)
        self.shared = shared  # whether a scope is shared through a remote (asked at every prompt build)
        self.mode = mode
        self.llm = llm
        self.episodic = episodic
        global_hc.scope = "global"
        self.selector = MemorySelector()  # the ranking index of the rules and lessons, kept between prompts
        self.profile_conflicts: list[str] = []
        from anton_tui.memory.history.origin import producing

        with producing("identity", why="a project profile.md folded into the global profile, as Anton does"):
            self._merge_project_profile()

    def close(self) -> None:
        """Let go of what the scopes hold open (their counters' databases)."""
        for hc in (self.global_hc, self.project_hc, self.managed_hc):
            if hc is not None:
                hc.close()

    @property
    def mode(self) -> MemoryMode:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        """Raises ValueError for a value that is not a memory mode (the setting's own rule, `setting_value`)."""
        try:
            setting_value("memory_mode", value)
        except InvalidSetting as exc:
            raise ValueError(f"memory mode must be {exc.allowed}, not {value!r}") from None
        self._mode = cast("MemoryMode", value)

    @property
    def redactor(self) -> Redactor:
        return self.project_hc.redactor

    @redactor.setter
    def redactor(self, value: Redactor) -> None:
        """The redactor both scopes write through (the session's, which knows the configured keys)."""
        self.global_hc.redactor = self.project_hc.redactor = value

    def _same_store(self) -> bool:
        return self.global_hc.base_dir.resolve() == self.project_hc.base_dir.resolve()

    def scopes(self) -> list[tuple[str, Hippocampus]]:
        """("Global", hc) and ("Project", hc); just the global one when both point at the same folder."""
        scopes = [("Global", self.global_hc)]
        if not self._same_store():
            scopes.append(("Project", self.project_hc))
        return scopes

    _scopes = scopes

    # ---- reading ----------------------------------------------------------------------------------------------

    def build_memory_context(self) -> str:
        """The memory sections of the system prompt: ``""`` or ``"\\n\\n"`` + non-empty sections joined by blank lines.

        Scratchpad-related When rules and lessons are left out here; `get_scratchpad_context()` carries them.
        """
        sections = []
        shared = self.is_shared()
        name = "Shared Memory" if shared else "Your Memory"
        if shared:
            sections.append(learned_memory_notice(self._presence()))
        if self.managed_hc is not None:  # the operator's tier first, as Anton orders it; its profile is never read
            precedence = operator_precedence(name)
            rules = self.managed_hc.recall_rules(char_budget=RULES_TOKENS * CHARS_PER_TOKEN, exclude_scratchpad=True)
            if rules:
                sections.append(f"## Operator Memory — Rules\n{precedence}\n{rules}")
            lessons = self.managed_hc.recall_lessons(LESSONS_TOKENS, exclude_scratchpad=True)
            if lessons:
                sections.append(f"## Operator Memory — Lessons\n{'' if rules else precedence + chr(10)}{lessons}")
        identity = self.global_hc.recall_identity(char_budget=IDENTITY_TOKENS * CHARS_PER_TOKEN)
        if identity:
            sections.append(f"## {name} — Identity\n{identity}")
        for label, hc in self._scopes():
            rules = hc.recall_rules(char_budget=RULES_TOKENS * CHARS_PER_TOKEN, exclude_scratchpad=True)
            if rules:
                sections.append(f"## {name} — {label} Rules\n{rules}")
        for label, hc in self._scopes():
            lessons = hc.recall_lessons(LESSONS_TOKENS, exclude_scratchpad=True)
            if lessons:
                sections.append(f"## {name} — {label} Lessons\n{lessons}")
        return "\n\n" + "\n\n".join(sections) if sections else ""

    def select_memory(self, query: TurnQuery, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> MemorySelection:
        """The memory sections for a prompt about `query`: pinned entries, the best of the rest within
        `budget_tokens`, and what was left out (see `selection`)."""
        head: list[str] = []
        operator: list[tuple[str, str]] = []
        shared = self.is_shared()
        name = "Shared Memory" if shared else "Your Memory"
        if shared:
            head.append(learned_memory_notice(self._presence()))
        if self.managed_hc is not None:
            precedence = operator_precedence(name)
            rules = self.managed_hc.recall_rules(char_budget=RULES_TOKENS * CHARS_PER_TOKEN, exclude_scratchpad=True)
            if rules:
                head.append(f"## Operator Memory — Rules\n{precedence}\n{rules}")
                operator += _listed_lines(rules)
            lessons = self.managed_hc.recall_lessons(LESSONS_TOKENS, exclude_scratchpad=True)
            if lessons:
                head.append(f"## Operator Memory — Lessons\n{'' if rules else precedence + chr(10)}{lessons}")
                operator += _listed_lines(lessons)
        identity = self.global_hc.recall_identity(char_budget=IDENTITY_TOKENS * CHARS_PER_TOKEN)
        return self.selector.select(
            self._scopes(), query, budget_tokens, identity=identity, operator=operator, head=head, name=name
        )

    def record_prompt(self, selection: MemorySelection) -> None:
        """Count what a prompt the agent sent did with each scope's entries (see `counters`)."""
        for label, hc in self._scopes():
            hc.counters.record(selection.prompt_record(label.lower()))

    def is_shared(self) -> bool:
        """Memory read here is shared across people: a scope has a remote, or a managed tier is in use."""
        if self.managed_hc is not None:
            return True
        try:
            return bool(self.shared and self.shared())
        except OSError:
            return False

    def _presence(self) -> str:
        try:
            found = any(hc.entry_count() or hc.identity_facts() for _label, hc in self._scopes())
        except (OSError, MemoryFileError):
            return "unavailable"
        return "present" if found else "empty"

    def get_scratchpad_context(self) -> str:
        """Scratchpad wisdom of both scopes for the scratchpad tool description, or ``""``."""
        parts = [wisdom for _, hc in self._scopes() if (wisdom := hc.recall_scratchpad_wisdom())]
        managed = self.managed_hc.recall_scratchpad_wisdom() if self.managed_hc is not None else ""
        if managed:
            label = "Shared learned memory" if self.shared and self.shared() else "Your own"
            person = f"\n{label}:\n" + "\n".join(parts) if parts else ""
            operator = f"Operator (applies to everyone, wins on conflict):\n{managed}"
            return f"\n\nLessons from past sessions:\n{operator}{person}"
        return "\n\nLessons from past sessions:\n" + "\n".join(parts) if parts else ""

    def needs_compaction(self) -> bool:
        return any(hc.entry_count() > COMPACTION_THRESHOLD for _, hc in self._scopes())

    # ---- writing ----------------------------------------------------------------------------------------------

    def encoding_gate(self, engram: Engram) -> bool:
        """True when the user must confirm this engram first: only in copilot mode, for anything not high-confidence."""
        return self.mode == "copilot" and engram.confidence != "high"

    def encode(self, engrams: Iterable[Engram]) -> list[str]:
        """Save engrams (profile always global; rules and lessons by scope) and say what happened to each."""
        return list(self.encode_all(engrams).actions)

    def encode_all(self, engrams: Iterable[Engram]) -> Encoded:
        """`encode`, also telling the engrams as saved and the secrets taken out of them before they were written."""
        if self.mode == "off":
            return Encoded(actions=(DISABLED_MESSAGE,))
        actions, saved, removed = [], [], []
        for engram in engrams:
            hc = self.global_hc if engram.kind == "profile" or engram.scope == "global" else self.project_hc
            scrubbed = hc.redactor.scrub(engram.text)
            if scrubbed.found:
                scope = "global" if hc is self.global_hc else "project"
                file = {"profile": "profile", "lesson": "lessons"}.get(engram.kind, "rules")
                removed.append((f"{scope} {file}.md", scrubbed.found))
            engram = dataclasses.replace(engram, text=hc.clean_text(scrubbed.text))
            saved.append(engram)
            try:
                actions.append(self._encode_one(engram))
            except (MemoryFileError, OSError, ValueError) as exc:
                log.warning("memory not saved: %s", exc)
                actions.append(f"Not saved ({engram.kind}): {exc}")
        return Encoded(tuple(actions), tuple(saved), tuple(removed))

    def encode_passing(self, engrams: Iterable[Engram]) -> list[Engram]:
        """Encode the engrams the gate lets through and return the ones it holds back for the user."""
        engrams = list(engrams)
        held = [e for e in engrams if self.encoding_gate(e)]
        passed = [e for e in engrams if not self.encoding_gate(e)]
        if passed:
            self.encode(passed)
        return held

    # ---- maintenance with the coding model ----------------------------------------------------------------------

    async def compact_all(self, *, force: bool = False) -> list[CompactionOutcome]:
        """Compact each scope holding more than 20 entries (every scope with `force`), file by file (see
        `compaction`); one outcome per file looked at. Raises RuntimeError without a language model."""
        if self.llm is None:
            raise RuntimeError("compaction needs a language model, and this memory has none")
        from anton_tui.memory.learners.compaction import FILES, compact_file  # uses pydantic: loaded on first use

        outcomes = []
        for label, hc in self.scopes():
            if not force and hc.entry_count() <= COMPACTION_THRESHOLD:
                continue
            for file in FILES:
                outcome = await compact_file(hc, file, self.llm, label.lower())
                if outcome is not None:
                    outcomes.append(outcome)
        return outcomes

    async def compact_now(self) -> list[CompactionOutcome]:
        """``/memory vacuum``: compact both scopes whatever their size (files under 8 entries are still skipped)."""
        return await self.compact_all(force=True)

    async def maybe_update_identity(self, text: str, sink: Callable[[list[Engram]], Any] | None = None) -> list[Engram]:
        """Look for facts about the user in `text` and hand new ones to `sink` (default: encode through the gate).

        Does nothing in memory mode off or without a model. Returns the profile engrams found.
        """
        if self.mode == "off" or self.llm is None:
            return []
        from anton_tui.memory.learners.identity import extract_identity

        engrams = await extract_identity(self.llm, text, self.global_hc.identity_facts())
        if engrams:
            (sink or self.encode_passing)(engrams)
        return engrams

    def _encode_one(self, engram: Engram) -> str:
        text = engram.text
        if not text:
            raise ValueError("nothing to save: the text is empty or only punctuation")
        if engram.kind == "profile":
            changed = self.global_hc.rewrite_identity([text])
            return f"Encoded profile (global): {text}" if changed else f"Already known (profile): {text}"
        is_global = engram.scope == "global"
        hc = self.global_hc if is_global else self.project_hc
        if engram.kind in RULE_KINDS:
            written = hc.encode_rule(text, engram.kind, engram.confidence or "medium", engram.source or "llm")
        elif engram.kind == "lesson":
            written = hc.encode_lesson(text, engram.topic or "", engram.source or "llm", engram.confidence)
        else:
            raise ValueError(f"unknown memory kind {engram.kind!r}")
        scope = "global" if is_global else "project"
        if not written:
            return f"Already known ({engram.kind}, {scope}): {text}"
        if not is_global:
            self._log_write(engram, text)
        return f"Encoded {engram.kind} ({scope}): {text}"

    def _log_write(self, engram: Engram, text: str) -> None:
        if self.episodic is None:
            return
        try:
            self.episodic.log_turn(0, "memory_write", text, kind=engram.kind, topic=engram.topic or "")
        except Exception:  # the episode log must never cost a memory
            log.exception("could not log a memory_write episode")

    def _merge_project_profile(self) -> None:
        """Move a project profile.md into the global profile (identity is global), as Anton does at start.

        A fact whose ``Key:`` the global profile already holds stays out (the global one wins); every other fact
        moves over, merged by key. The project file is then removed. Facts the global profile overruled are listed
        in `profile_conflicts`, and the project file is first copied to ``memory/backups/``, so nothing is lost.
        """
        project_file = self.project_hc.profile_path
        if self._same_store() or not project_file.exists():
            return
        if any(problem.path == project_file for problem in self.project_hc.problems()):
            log.warning("project profile not merged: %s cannot be read cleanly", project_file)
            return
        try:
            project = self.project_hc.get_profile()
            known = self.global_hc.identity_facts()
            global_keys = {fact.split(":", 1)[0].strip().lower() for fact in known if ":" in fact}
            moving, overruled = [], []
            for fact in project:
                key = fact.text.split(":", 1)[0].strip().lower() if ":" in fact.text else None
                if key is None or key not in global_keys:
                    moving.append(fact)
                elif fact.text not in known:
                    overruled.append(fact)
            if overruled:
                backup = keep_backup(project_file.parent / "backups", project_file.name, project_file.read_bytes())
                log.warning(
                    "project profile: the global profile overrules %s (the project file is saved as %s)",
                    ", ".join(fact.text for fact in overruled),
                    backup,
                )
            self.global_hc.rewrite_identity([fact.text for fact in moving])
            self.project_hc.remove_profile_lines({fact.id for fact in project})
            self.profile_conflicts = [fact.text for fact in overruled]
        except (MemoryFileError, OSError) as exc:
            log.warning("project profile not merged: %s", exc)


def _listed_lines(section: str) -> list[tuple[str, str]]:
    """(kind, text) of the ``- `` lines of a rendered rules or lessons section (kind from its ``## `` headings)."""
    found, kind = [], "lesson"
    for line in section.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            kind = stripped[3:].strip().lower()
        elif stripped.startswith("- "):
            found.append((kind, split_entry(stripped[2:])[0]))
    return found
