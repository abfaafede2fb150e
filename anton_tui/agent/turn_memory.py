"""What the agent is given for a turn besides the conversation itself, held by the session as `turn_memory`.

- The memory chosen for the turn (`choose`): the cortex ranks the learned rules and lessons against what the turn is
  about (`turn_query`: the user's message, the recent turns, the skills in play) and loads the best within the budget
  (``ANTON_MEMORY_BUDGET_TOKENS``); `selection` keeps the last choice for the context report, the counters and the
  ACC's outcome figures (`note_patterns`).
- The front of every request (`front`): the memory files (`prompts.memory_files`), then the skills preloaded for
  this conversation (``--skill NAME``, ``/skill load NAME``), each its own user message. They are never part of the
  history, so no summary drops them.
- Skills the model asks for in its text with ``[skill: label]`` (`sentinel_results`): the skill's recall for its next
  step, once; a skill already in the conversation gets the recall tool's "already recalled" reminder.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.agent.messages import is_user_turn, message_text
from anton_tui.agent.prompts import MemoryFile, memory_files
from anton_tui.memory.engrams.ranking import TurnQuery
from anton_tui.memory.engrams.selection import DEFAULT_BUDGET_TOKENS, MemorySelection

if TYPE_CHECKING:
    from anton_tui.agent.tools.registry import ToolResult
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.skills.store import SkillStore

SKILL_SENTINEL = re.compile(r"\[skill:\s*([A-Za-z0-9][\w.-]*)\s*\]")
RECALLED = re.compile(r"# Skill recalled: `([^`]+)`")
RECENT_MESSAGES = 4  # messages before the user's own that count as "the recent turns"
RECENT_CHARS = 1000  # of each of them


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return message_text(message)


def recalled_skills(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Labels of the skills whose full recall is in `messages`, in order of first recall."""
    found: dict[str, None] = {}
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        for block in blocks:
            if isinstance(block, dict):
                for label in RECALLED.findall(str(block.get("text") or block.get("content") or "")):
                    found[label] = None
    return list(found)


def turn_query(history: Sequence[dict[str, Any]], skills: Sequence[str] = ()) -> TurnQuery:
    """What the current turn is about: its user message, the few messages before it, and the skills in play."""
    for at in range(len(history) - 1, -1, -1):
        if is_user_turn(history[at]):
            recent = [_text(m)[:RECENT_CHARS] for m in history[max(0, at - RECENT_MESSAGES) : at]]
            return TurnQuery(_text(history[at]), tuple(text for text in recent if text), tuple(skills))
    return TurnQuery("", (), tuple(skills))


class TurnMemory:
    """The memory and skills a session gives the model besides the history (see the module docstring)."""

    def __init__(self, *, home: Path | None, project_dir: Path, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> None:
        self.home = home
        self.project_dir = project_dir
        self.budget_tokens = budget_tokens
        self.selection: MemorySelection | None = None
        self.files: list[MemoryFile] = []  # the memory files of the last request
        self.front_messages: list[dict[str, Any]] = []  # what the last request carried at its front
        self.preloaded: dict[str, dict[str, Any]] = {}  # label -> its message at the front

    # ---- the memory of a turn --------------------------------------------------------------------------------

    def skills_in_play(self, history: Sequence[dict[str, Any]], store: SkillStore | None) -> list[str]:
        """Label and description of each skill preloaded or recalled in this conversation."""
        labels = list(dict.fromkeys([*self.preloaded, *recalled_skills(history)]))
        if not labels or store is None:
            return labels
        try:
            cues = {s["label"]: s.get("description") or "" for s in store.list_summaries()}
        except OSError:
            cues = {}
        return [f"{label} {cues.get(label, '')}".strip() for label in labels]

    def choose(self, cortex: Cortex, history: Sequence[dict[str, Any]], store: SkillStore | None) -> MemorySelection:
        """The memory for the current turn's request (kept as `selection`)."""
        query = turn_query(history, self.skills_in_play(history, store))
        self.selection = cortex.select_memory(query, self.budget_tokens)
        return self.selection

    def warm_up(self, cortex: Cortex) -> None:
        """Read the memory and build its ranking index once, so the first turn does not wait for it."""
        cortex.select_memory(TurnQuery(""), self.budget_tokens)

    def note_patterns(self, cortex: Cortex, patterns: Collection[str]) -> None:
        """One turn's ACC pass saw `patterns` (detector names): count them against the rules the turn carried."""
        loaded = self.selection.loaded_ids("global") if self.selection is not None else set()
        cortex.global_hc.outcomes.pattern_seen(patterns, loaded)

    # ---- the front of every request --------------------------------------------------------------------------

    def front(self) -> list[dict[str, Any]]:
        """The memory files, then the preloaded skills, each its own user message (read afresh for each turn)."""
        self.files = memory_files(self.home, self.project_dir)
        self.front_messages = [file.message() for file in self.files] + list(self.preloaded.values())
        return self.front_messages

    def preload(self, store: SkillStore, label: str, *, count: bool = True) -> str:
        """Give skill `label` to every request of this conversation, at the front; returns its label as loaded.
        Raises ValueError with the reason when it cannot be loaded. `count`: credit the skill with a recall."""
        from anton_tui.agent.tools.recall_skill import recall

        result = recall(store, label, list(self.preloaded.values()), count=count)
        if not result.success:
            raise ValueError(result.text.removeprefix("ERROR: "))
        loaded = RECALLED.search(result.text)
        name = loaded.group(1) if loaded else label
        if name not in self.preloaded:
            self.preloaded[name] = {"role": "user", "content": result.text}
        return name

    def forget_conversation(self) -> None:
        """A new conversation: the preloaded skills and the last choice belong to the old one."""
        self.preloaded.clear()
        self.selection = None

    # ---- the sentinel --------------------------------------------------------------------------------------

    @staticmethod
    def sentinel_results(text: str, store: SkillStore | None, messages: list[dict[str, Any]]) -> list[ToolResult]:
        """The recall of each skill named by ``[skill: label]`` in `text` (once each), as the recall tool gives it:
        the procedure, or the "already recalled" reminder when `messages` still hold it."""
        labels = list(dict.fromkeys(SKILL_SENTINEL.findall(text or "")))
        if not labels or store is None:
            return []
        from anton_tui.agent.tools.recall_skill import recall

        results = []
        for label in labels:
            result = recall(store, label, messages)
            results.append(result)
            if result.success:
                messages = [*messages, {"role": "user", "content": result.text}]
        return results
