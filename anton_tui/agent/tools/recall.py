"""The `recall` tool: search past conversations in this workspace (episodic memory)."""

from __future__ import annotations

import asyncio
from typing import Any

from anton_tui.agent.tools.context import ToolContext
from anton_tui.agent.tools.registry import ToolDef, ToolResult

DESCRIPTION = (
    "Search the record of past conversations in this workspace: what the user asked, what you answered, the code "
    "you ran and what it printed. Use it when the user refers to earlier work ('like last time', 'what did we find "
    "about X') or when details from a previous session would help. The summaries of finished conversations and your "
    "own daily, weekly and monthly reflections are searched too, and come first, marked (summary) and (reflection). "
    "Returns the matching exchanges, best first."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words to look for."},
        "max_results": {"type": "integer", "description": "How many exchanges at most (default 20)."},
        "days_back": {"type": "integer", "description": "Only sessions from the last N days."},
    },
    "required": ["query"],
}


async def handle_recall(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolResult:
    if ctx.episodic is None:
        return ToolResult("ERROR: episodic memory is switched off.", success=False)
    query = str(tool_input.get("query") or "").strip()
    if not query:
        return ToolResult("ERROR: 'query' must not be empty.", success=False)
    max_results = int(tool_input.get("max_results") or 20)
    days_back = tool_input.get("days_back")
    days_back = int(days_back) if days_back not in (None, "") else None
    from anton_tui.memory.episodes.record import format_recall

    episodes = await asyncio.to_thread(ctx.episodic.recall, query, max_results=max_results, days_back=days_back)
    untrusted = sorted({ep.session for ep in episodes if (ep.meta or {}).get("trust") == "untrusted"})
    if untrusted:  # what an untrusted turn left in the log is outside content again
        ctx.taint(f"recalled episodes of untrusted turns (session {', '.join(untrusted[:3])})")
    return ToolResult(format_recall(episodes, query))


RECALL_TOOL = ToolDef("recall", DESCRIPTION, INPUT_SCHEMA, handle_recall)
