"""The `recall_skill` tool: load a saved procedure (a skill) into the conversation.

A mistyped label is recovered with the closest existing one, and the recall is credited to the skill actually
loaded. As in anton-agent, a skill whose full recall is still in the conversation is not sent again: the model gets a
short reminder, and the counters are not bumped; once the full text has left the history (compaction, a new
conversation) the next recall sends it again. In the brain analogy this is the striatum handing a learned action sequence to working memory.
"""

from __future__ import annotations

import asyncio
from typing import Any

from anton_tui.agent.tools.context import ToolContext
from anton_tui.agent.tools.registry import ToolDef, ToolResult

DESCRIPTION = (
    "Load one of your saved skills (procedures listed under 'Procedural memory' in your instructions) by its "
    "label, and follow it for the rest of the task. Call it as soon as a listed skill matches what the user asks."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string", "description": "The skill's label, e.g. csv-summary."}},
    "required": ["label"],
}


PROCEDURE_HEADER = "## Procedure (Stage 1 — declarative)"


def already_in_history(history: list[Any] | None, label: str) -> bool:
    """Whether a full recall of `label` (its marker and the procedure heading in one message) is still in history."""
    if not history:
        return False
    import json

    marker = f"# Skill recalled: `{label}`"
    for message in history:
        text = message if isinstance(message, str) else json.dumps(message, default=str, ensure_ascii=False)
        if marker in text and PROCEDURE_HEADER in text:
            return True
    return False


def already_recalled_text(label: str, name: str) -> str:
    """anton-agent's reminder for a repeated recall (it carries neither the marker nor the procedure heading)."""
    return (
        f"Skill '{label}' was already recalled in this conversation — its full procedure is in your context above, "
        f"under the '# Skill: {name}' heading, and still applies. Not re-sending the body."
    )


def recall(store, requested: str, history: list[Any] | None = None, *, count: bool = True) -> ToolResult:
    """The recall of skill `requested` (or the closest label), as the tool gives it; `count`: credit the skill with
    the recall (`memory context`, which only shows what would be sent, does not)."""
    from anton_tui.memory.skills.store import BrokenSkillError, SkillNotFoundError, format_no_match, format_recall

    requested = requested.strip()
    if not requested:
        return ToolResult("ERROR: 'label' must not be empty.", success=False)
    try:
        skill = store.load(requested)
        problem = store.problem(requested) if skill is None else None
        if problem is not None:  # say why, rather than recall a neighbour or claim there is no such skill
            return ToolResult(
                f"ERROR: the skill `{problem.label}` cannot be read: {problem.reason}. Its files were left as they "
                "are; carry on without it.",
                success=False,
            )
        if skill is None:
            match = store.closest_match(requested)
            skill = store.load(match) if match is not None else None
    except ValueError as exc:
        return ToolResult(f"ERROR: {exc}.", success=False)
    if skill is None:
        labels = [summary["label"] for summary in store.list_summaries()]
        return ToolResult(format_no_match(requested, labels), success=False)
    if already_in_history(history, skill.label):
        return _limited(skill, already_recalled_text(skill.label, skill.name or skill.label))
    try:
        if count:
            store.increment_recommended(skill.label, stage=1)
    except (BrokenSkillError, SkillNotFoundError):  # changed on disk since it was read: leave it as it is
        pass
    from anton_tui.agent.tools.skill_resource import resources_note

    return _limited(skill, format_recall(skill, requested) + resources_note(skill.label, skill.path))


def _limited(skill, text: str) -> ToolResult:
    """The recall result, carrying the skill's `allowed-tools` limit (if any) for the rest of this turn. A repeated
    recall that only gets the short reminder limits its turn just the same."""
    allowed = skill.allowed_tools
    if allowed is None:
        return ToolResult(text)
    names = ", ".join(f"`{name}`" for name in allowed) or "none"
    text += f"\n\nWhile you follow this skill, only these tools may be used: {names}."
    return ToolResult(text, limits_tools=(skill.label, tuple(allowed)))


async def handle_recall_skill(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolResult:
    if ctx.skills is None:
        return ToolResult("ERROR: procedural memory is not available in this session.", success=False)
    history = list(ctx.history)
    return await asyncio.to_thread(recall, ctx.skills, str(tool_input.get("label") or ""), history)


RECALL_SKILL_TOOL = ToolDef("recall_skill", DESCRIPTION, INPUT_SCHEMA, handle_recall_skill)
