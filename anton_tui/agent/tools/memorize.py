"""The `memorize` tool: the model asks to remember a rule, a lesson or a fact about the user.

Entries become Engrams with high confidence and source "user" (an explicit request is trusted), and go through the
one encoding path, `Cortex.encode`. With memory off nothing is written and the model is told so.
"""

from __future__ import annotations

import asyncio
from typing import Any

from anton_tui.agent.events import memory_events
from anton_tui.agent.tools.context import ToolContext
from anton_tui.agent.tools.registry import ToolDef, ToolResult

KINDS = ("always", "never", "when", "lesson", "profile")
SCOPES = ("global", "project")

DESCRIPTION = (
    "Save something worth keeping beyond this conversation. Use it when the user states a preference or a fact "
    "about themselves, asks you to remember something, or when you learned something that will save time next "
    "time. Kinds: 'always' / 'never' (a behaviour rule), 'when' (a conditional rule, 'when X, do Y'), 'lesson' (a "
    "fact you discovered), 'profile' (a fact about the user, e.g. 'Timezone: CET'). Scope 'project' (default) keeps "
    "it to this workspace; 'global' applies everywhere. Profile facts are always global. Keep each entry to one "
    "short sentence."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "kind": {"type": "string", "enum": list(KINDS)},
                    "scope": {"type": "string", "enum": list(SCOPES)},
                    "topic": {"type": "string"},
                },
                "required": ["text", "kind", "scope"],
            },
        }
    },
    "required": ["entries"],
}


def entries_to_engrams(entries: list[Any]) -> list:
    from anton_tui.memory.engrams.engram import Engram

    engrams = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        text = str(entry.get("text", "")).strip()
        if not text:
            continue
        kind = str(entry.get("kind")) if entry.get("kind") in KINDS else "lesson"
        scope = str(entry.get("scope")) if entry.get("scope") in SCOPES else "project"
        if kind == "profile":
            scope = "global"
        topic = str(entry.get("topic") or "") or None
        engrams.append(Engram(text=text, kind=kind, scope=scope, confidence="high", topic=topic, source="user"))
    return engrams


async def handle_memorize(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolResult:
    if ctx.cortex is None:
        return ToolResult("ERROR: memory is not available in this session.", success=False)
    engrams = entries_to_engrams(tool_input.get("entries") or [])
    if not engrams:
        return ToolResult("ERROR: no entries to memorize (each entry needs a non-empty 'text').", success=False)
    from anton_tui.memory.history.origin import producing

    offered = engrams
    engrams = ctx.trust_filter(engrams, "memorize")
    held = [e for e in offered if e not in engrams]
    if not engrams:
        return ToolResult(f"Held for the user's review before saving ({len(held)} entries); nothing saved yet.")

    why = "; ".join(e.text for e in engrams)[:200]
    with producing("memorize", session=ctx.session_id, turn=ctx.turn, why=f"the model asked to remember: {why}"):
        encoded = await asyncio.to_thread(ctx.cortex.encode_all, engrams)
    if ctx.cortex.mode == "off":
        return ToolResult("Memory is switched off for this workspace; nothing was saved.", success=True)
    for event in memory_events(encoded, "memorize"):
        ctx.emit(event)
    note = f" ({len(held)} more held for the user's review)" if held else ""
    return ToolResult("Memory updated: " + "; ".join(encoded.actions) + note)


MEMORIZE_TOOL = ToolDef("memorize", DESCRIPTION, INPUT_SCHEMA, handle_memorize)
