"""`/skill save`: the planning model drafts a reusable procedure from the recent conversation and scratchpad work.

The draft becomes a new skill (never written over an existing one) so the next similar request can recall it. Like
every self-change it goes through the review pipeline (`memory.review`): the SKILL.md it would write is checked
(structure, injection scan), reviewed as `ANTON_REVIEW_LEVEL` says (by the AI reviewer by default; a conversation
that read outside content follows `ANTON_REVIEW_TAINTED`), and saved, held for the user or rejected. In the brain
analogy this is deliberate practice turning an episode into a procedure the striatum can replay.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from anton_tui.agent.session import ChatSession
    from anton_tui.memory.skills.store import Skill

RECENT_MESSAGES = 16  # about the last 8 exchanges
MESSAGE_CHARS = 1000
CODE_CHARS, STDOUT_CHARS, ERROR_CHARS = 2000, 800, 400


class SkillDraft(BaseModel):
    """A reusable procedure distilled from work that just succeeded."""

    label: str = Field(
        description="A short lowercase identifier of 2 to 4 words joined by hyphens, naming what the skill does."
    )
    name: str = Field(description="A human-readable title, e.g. 'CSV Summary'.")
    description: str = Field(default="", description="One sentence on what the skill achieves.")
    when_to_use: str = Field(
        description="One sentence describing the requests this skill fits. It is the only line shown to you in "
        "future conversations, so make it specific enough to recognise a match."
    )
    declarative_md: str = Field(
        description="The procedure as numbered Markdown steps, written as instructions for a future run: the "
        "decisions to make, the pitfalls met this time and how to avoid them, the libraries and calls that worked. "
        "Not a story of what happened."
    )


SYSTEM = (
    "You turn a piece of work that just succeeded into a reusable skill: a procedure another run of yourself can "
    "follow next time the same kind of request comes in. Generalise from the specific data and names used here, "
    "keep what made it work, and record what went wrong on the way so it is avoided."
)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            parts.append(f"[called {block.get('name')}]")
    return "\n".join(p for p in parts if p)


def describe_recent_work(session: ChatSession) -> str:
    lines = ["## Conversation"]
    for message in session.history[-RECENT_MESSAGES:]:
        text = _message_text(message).strip()
        if text:
            lines.append(f"**{message['role']}**: {text[:MESSAGE_CHARS]}")
    pads = session.scratchpads
    for name, pad in [(name, pads.get(name)) for name in pads.names()] if pads is not None else []:
        lines.append(f"\n## Scratchpad `{name}`")
        for cell in pad.cells if pad is not None else []:
            lines.append(f"### Cell {cell.index}: {cell.description or '(no description)'}")
            lines.append("```python\n" + cell.code[:CODE_CHARS] + "\n```")
            if cell.stdout.strip():
                lines.append("Output:\n" + cell.stdout[:STDOUT_CHARS])
            if cell.error or cell.stderr.strip():
                lines.append("Error:\n" + (cell.error or cell.stderr)[:ERROR_CHARS])
    return "\n".join(lines)


@dataclass(frozen=True)
class DraftedSkill:
    """What `/skill save` made: the skill (as saved when `status` is applied, else as drafted), what the review
    decided (applied, held for the user, rejected) and why, and the proposal's id (the Reflections view lists it)."""

    skill: Skill
    status: str
    why: str
    proposal: str = ""


async def draft_skill(session: ChatSession, hint: str = "") -> DraftedSkill:
    """Ask the planning model for a draft and submit it for review under a fresh label. Raises ValueError when there
    is no work to draft from, LLMError when the model fails."""
    from anton_tui.memory.review.proposal import Proposal
    from anton_tui.memory.skills.store import Skill, make_unique_label

    if session.skills is None:
        raise ValueError("procedural memory is not available in this session")
    if not session.history:
        raise ValueError("there is no work in this conversation to turn into a skill yet")
    request = describe_recent_work(session)
    if hint.strip():
        request += f"\n\nThe user suggests calling it: {hint.strip()}"
    draft = await session.llm.generate_object(
        SkillDraft, system=SYSTEM, messages=[{"role": "user", "content": request}]
    )
    if not draft.declarative_md.strip():
        raise ValueError("the drafted skill has no procedure; nothing was saved")
    label = make_unique_label(draft.label or hint or draft.name, session.skills)
    skill = Skill(
        label=label,
        name=draft.name.strip() or label,
        description=draft.description.strip(),
        when_to_use=draft.when_to_use.strip(),
        declarative_md=draft.declarative_md.strip(),
        provenance="manual",
    )
    parts = session.reflection
    if parts is None:  # a session without the review (built by hand): saved as drafted, as before
        return DraftedSkill(session.skills.save(skill), "applied", "saved (this session has no review)")
    review = parts.pipeline
    proposal = Proposal(
        "skill",
        session.skills.new_skill_md(skill),
        "global",
        f"/skill save: {skill.when_to_use or skill.name}",
        "/skill save",
        tainted=tuple(session.trust.conversation_taint),
        label=label,
        created=datetime.now().astimezone().isoformat(timespec="seconds"),
    )
    proposal = dataclasses.replace(proposal, base=review.targets.base(proposal))
    entry = await review.submit(proposal)
    why = entry.last.why if entry.last is not None else ""
    if entry.status == "applied":
        skill = session.skills.load(label) or skill
    return DraftedSkill(skill, entry.status, why, proposal.id)
