"""Notices lasting facts about the user (name, role, timezone, tools they work with) in what they write.

Every few turns the session hands the user's recent messages to the coding model, which answers with short
``Key: value`` facts. Facts the profile already holds are dropped; the rest become profile engrams, which the cortex
merges into ``profile.md`` by key, so a new ``Timezone:`` replaces the old one instead of piling up.

Brain analogy: the default mode network, which keeps a running model of the self in the background.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from anton_tui.memory.engrams.engram import Engram, sanitize_text

MAX_TOKENS = 2048  # room for a model that explains itself before the forced tool call
MAX_FACTS = 8
MAX_FACT_CHARS = 200
RECENT_MESSAGES = 5


class IdentityFacts(BaseModel):
    """Lasting facts about the user found in their messages."""

    facts: list[str] = Field(
        default_factory=list,
        description=(
            'Short facts about the user, each as "Key: value" (for example "Name: Jorge", "Timezone: PST", '
            '"Role: data engineer"). Empty when the messages reveal nothing lasting about the user.'
        ),
    )


SYSTEM_PROMPT = """\
You maintain a short profile of the person using an assistant. Read their recent messages and list lasting facts \
about them: name, role or job, employer or team, location or timezone, languages, the tools, data and systems they \
work with. Write each fact as "Key: value", a few words long, with a short capitalised key.

Leave out:
- how they want answers written (length, tone, format): those are not facts about the person;
- the task at hand, one-off requests, and facts about data, code or other people;
- anything you would have to guess.

Return an empty list when there is nothing lasting to record."""


def recent_user_messages(history: list[dict[str, Any]], count: int = RECENT_MESSAGES) -> str:
    """The user's last `count` typed messages (not tool results), oldest first, joined by blank lines."""
    typed = [m["content"] for m in history if m.get("role") == "user" and isinstance(m.get("content"), str)]
    return "\n\n".join(text for text in typed[-count:] if text.strip())


def _usable(fact: Any) -> str | None:
    if not isinstance(fact, str):
        return None
    text = sanitize_text(fact).strip(" -")
    if not text or len(text) > MAX_FACT_CHARS:
        return None
    return text


async def extract_identity(llm: Any, text: str, known: list[str]) -> list[Engram]:
    """Profile engrams for the new facts the model finds in `text` (facts in `known` are left out)."""
    if not text.strip():
        return []
    result = await llm.generate_object_code(
        IdentityFacts,
        system=SYSTEM_PROMPT,
        messages=[{"role": "user", "content": f"The user's recent messages:\n\n{text}"}],
        max_tokens=MAX_TOKENS,
    )
    facts: list[str] = []
    for fact in result.facts:
        usable = _usable(fact)
        if usable and usable not in known and usable not in facts:
            facts.append(usable)
    return [
        Engram(fact, "profile", scope="global", confidence="medium", source="consolidation")
        for fact in facts[:MAX_FACTS]
    ]
