"""`/goal <objective> [--turns N]`: Anton works on the objective on its own, turn after turn, until it marks the goal
complete or has used N turns (see `agent/goal.py`). The main screen runs it (the app's `start_goal`)."""

from __future__ import annotations

from anton_tui.agent.goal import GoalUsageError
from anton_tui.tui.commands.context import CommandContext, CommandOutput, error, info
from anton_tui.tui.commands.parse import ParsedCommand


async def goal(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    try:
        objective, turns = ctx.runtime.goals.parse(args.rest)
    except GoalUsageError as exc:
        if not args.rest.strip() and (fill := ctx.hook("fill_prompt")) is not None:
            await ctx.call(fill, "/goal ")  # from the palette: the objective is typed next
            return info(str(exc))
        return error(str(exc))
    start = ctx.hook("start_goal")
    if start is None:
        return error("Goals are not available here.")
    refused = await ctx.call(start, objective, turns)
    return error(refused) if refused else None
