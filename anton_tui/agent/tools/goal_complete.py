"""The `mark_goal_complete` tool: during a `/goal` run the model calls it, with a short summary of what it achieved,
once the goal is met; the run then starts no further turn.

It is offered only while a goal runs (`agent/goal.py` registers it for the run and removes it after). The handler
only reports: it emits `GoalMarkedComplete`, which the goal run sees in the turn's events.
"""

from __future__ import annotations

from typing import Any

from anton_tui.agent.events import GoalMarkedComplete
from anton_tui.agent.tools.context import ToolContext
from anton_tui.agent.tools.registry import ToolDef, ToolResult

NAME = "mark_goal_complete"

DESCRIPTION = (
    "You are working on a goal on your own, over several turns. Call this once the goal is fully achieved and you "
    "have checked it (run the code, read the result): every requirement the goal implies is met. Give a short "
    "summary of what was achieved. Do not call it on a hunch; if anything is still open, keep working instead."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "description": "One or two sentences: what was achieved, and how you know the goal is met.",
        }
    },
    "required": ["summary"],
}


async def handle_mark_goal_complete(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolResult:
    summary = " ".join(str(tool_input.get("summary") or "").split())
    if not summary:
        return ToolResult("ERROR: give a short summary of what was achieved.", success=False)
    ctx.emit(GoalMarkedComplete(summary))
    return ToolResult(f"Goal marked complete: {summary} No further turn will start; end this turn with a short "
                      "answer for the user.")  # fmt: skip


MARK_GOAL_COMPLETE_TOOL = ToolDef(NAME, DESCRIPTION, INPUT_SCHEMA, handle_mark_goal_complete)
