"""The system prompt and the tool definitions a turn's requests carry, and the record of what they carry.

`build` writes the system prompt afresh for each turn: the agent's instructions with the memory chosen for the turn
(`turn_memory`), the list of skills, the earlier conversations (`conversation_summary`) and, after a resume, the
scratchpads that are gone. It records what the request carries of memory and skills in the session's context
reports (`context_report`), which the inspector's Context tab shows. A skills folder that cannot be listed leaves
the skills out of the prompt, said once per session. `sized` is the prompt with the messages at the front of every
request, for sizing the request; `tool_definitions` gives the scratchpad tool the cortex's lessons on code.

A `ChatSession` holds one `SystemPrompt`; what it needs of the session is `PromptHost`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent import conversations, prompts
from anton_tui.agent.context_report import context_report, report_from_selection
from anton_tui.agent.events import ErrorOccurred
from anton_tui.agent.turn_parts import TurnParts

if TYPE_CHECKING:
    from anton_tui.agent.context_fit import ContextKeeper
    from anton_tui.agent.context_report import ContextReports
    from anton_tui.agent.conversation_summary import ConversationSummaries
    from anton_tui.agent.conversations import SavedConversation
    from anton_tui.memory.engrams.selection import MemorySelection


class PromptHost(TurnParts, Protocol):
    """What the system prompt is made of, from its session, besides its tools, stores and history."""

    @property
    def project_dir(self) -> Path: ...

    @property
    def context(self) -> ContextKeeper: ...

    @property
    def context_reports(self) -> ContextReports: ...

    @property
    def conversation(self) -> SavedConversation: ...

    @property
    def summaries(self) -> ConversationSummaries | None: ...


class SystemPrompt:
    """The instructions of one session's requests (see the module docstring)."""

    def __init__(self, host: PromptHost) -> None:
        self._host = host
        self._skills_warned = False  # the skills folder could not be listed, and the user was told

    def build(self) -> str:
        """The system prompt for the current turn; reads the memory files and chooses the turn's memory."""
        host = self._host
        host.turn_memory.front()
        cortex = host.cortex
        selection = host.turn_memory.choose(cortex, host.history, host.skills) if cortex is not None else None
        memory = selection.text if selection is not None else ""
        skills_section = self._skills_section()
        prompt = prompts.build_system_prompt(
            project_dir=host.project_dir, memory_context=memory, skills_section=skills_section
        )
        self._report(selection, skills_section, len(prompt))
        live = host.scratchpads.names() if host.scratchpads is not None else []
        note = host.conversation.pads_note(live)
        earlier = host.summaries.prompt_section(host.session_id) if host.summaries is not None else ""
        return "\n\n".join(part for part in (prompt, earlier, note) if part)

    def sized(self, system: str) -> str:
        """The system prompt with the messages at the front of every request, for sizing the request."""
        return "\n".join([system, *(str(m["content"]) for m in self._host.turn_memory.front_messages)])

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools as the model is told of them; the scratchpad's description ends with the lessons on code."""
        host = self._host
        descriptions = {}
        scratchpad = host.tools.get("scratchpad")
        if scratchpad is not None and host.cortex is not None:
            wisdom = host.cortex.get_scratchpad_context()
            if wisdom:
                descriptions["scratchpad"] = scratchpad.description + wisdom
        return host.tools.definitions(descriptions)

    def _skills_section(self) -> str:
        skills = self._host.skills
        if skills is None:
            return ""
        from anton_tui.memory.skills.store import procedural_memory_section

        try:
            return procedural_memory_section(skills.list_summaries())
        except OSError as exc:  # the turn goes on without the skill list; said once per session
            if not self._skills_warned:
                self._skills_warned = True
                reason = skills.listing_warning or f"the skills folder cannot be listed ({exc})"
                self._host.emit(ErrorOccurred(f"{reason}; skills are left out of the prompt.", retryable=False))
            return ""

    def _report(self, selection: MemorySelection | None, skills_section: str, system_chars: int) -> None:
        """Record what this request carries of memory and skills (see `context_report`)."""
        host = self._host
        wisdom = host.cortex.get_scratchpad_context() if host.cortex is not None else ""
        ratio = host.context.sizer.chars_per_token
        user_text = conversations.last_user_text(host.history)
        if selection is None:
            report = context_report(host.turn_count, "", skills_section, wisdom, system_chars, ratio, user_text)
        else:
            given = host.turn_memory
            report = report_from_selection(
                host.turn_count, selection, files=[(f.level, f.path.name, f.text) for f in given.files],
                preloaded=[str(m["content"]) for m in given.preloaded.values()], skills=skills_section, wisdom=wisdom,
                system_chars=system_chars, ratio=ratio, user_text=user_text,
            )  # fmt: skip
        host.context_reports.record(report)
