"""The `scratchpad` tool: run Python in a named, persistent process and manage those processes.

This is the orchestration layer around the runtime: it validates the call, tells the ACC what happened, and fires
the pre/post-execute observers (the cerebellum) around each cell. The runtime itself knows nothing of observers.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from anton_tui.agent.events import OutsideAccess, ScratchpadActivity, SecretsRemoved
from anton_tui.agent.tools.context import ToolContext
from anton_tui.agent.tools.registry import ToolDef, ToolResult
from anton_tui.scratchpad.cell import Cell
from anton_tui.scratchpad.events import CellOutside

if TYPE_CHECKING:
    from anton_tui.scratchpad.runtime import ScratchpadManager

ACTIONS = ("exec", "view", "reset", "remove", "dump", "install")
KILL_PREFIXES = ("Cancelled", "Cell timed out", "Cell killed")

DESCRIPTION = (
    "Run Python code in a scratchpad: a named Python process whose variables persist from one cell to the next. "
    "Keep using the same name for one task (each name is a separate process; variables do not cross between them). "
    "Actions: 'exec' runs `code` (give a `one_line_description` of what the cell should do, and "
    "`estimated_execution_time_seconds` for anything slow); 'view' lists the cells run so far; 'dump' returns them "
    "as a notebook; 'reset' restarts the process and clears its variables; 'remove' ends it; 'install' installs "
    "`packages` into this scratchpad only. Print what you need to see. Inside a cell, call progress('message') "
    "during long work, and get_llm().complete(prompt) to ask a language model. Keep cells small; write large "
    "outputs to files instead of printing them."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "name": {"type": "string", "description": "Scratchpad name, e.g. 'main'."},
        "code": {"type": "string", "description": "Python code to run (action exec)."},
        "packages": {"type": "array", "items": {"type": "string"}, "description": "Requirements (action install)."},
        "one_line_description": {"type": "string", "description": "What this cell is meant to do."},
        "estimated_execution_time_seconds": {"type": "integer"},
    },
    "required": ["action", "name"],
}


def _fire(ctx: ToolContext, hook: str, cell: Cell) -> None:
    for observer in list(ctx.scratchpad_observers):
        try:
            getattr(observer, hook)(cell)
        except Exception:  # an observer must never break the tool
            pass


async def _exec(ctx: ToolContext, pads: ScratchpadManager, name: str, tool_input: dict[str, Any]) -> ToolResult:
    from anton_tui.scratchpad.formatting import format_cell_result

    code = tool_input.get("code")
    code = code if isinstance(code, str) else ""
    description = str(tool_input.get("one_line_description") or "")
    if not code.strip():
        ctx.acc_observe("scratchpad_empty_code", {"name": name}, severity=7)
        return ToolResult(
            "ERROR: no code was provided, so nothing ran. If you sent a large cell, it may have been cut off on "
            "the way: split it into smaller cells, and write big strings to a file in steps.",
            success=False,
        )
    estimate = tool_input.get("estimated_execution_time_seconds")
    estimate = int(estimate) if isinstance(estimate, (int, float)) and estimate > 0 else None
    ctx.acc_observe(
        "scratchpad_call", {"name": name, "code_len": len(code), "one_line_description": description}, severity=1
    )
    pad = await pads.get_or_create(name)
    prelim = Cell(code=code, description=description, estimated_seconds=estimate)
    _fire(ctx, "on_pre_execute", prelim)
    cell = await pad.execute(
        code,
        description=description,
        estimated_seconds=estimate,
        on_event=lambda event: _on_event(ctx, name, event),
    )
    if ctx.redactor is not None:  # the model, the learners and the episode log read the cell scrubbed
        from anton_tui.redact import scrub_cell

        cell, hidden = scrub_cell(cell, ctx.redactor)
        if hidden:
            where = f"scratchpad {name}, cell {cell.index}"
            ctx.emit(SecretsRemoved(kinds=hidden, where=where, producer="scratchpad", pad=name, cell=cell.index))
    _fire(ctx, "on_post_execute", cell)
    error = cell.error or ""
    if error.startswith(KILL_PREFIXES):
        ctx.acc_observe("scratchpad_killed", {"name": name, "reason": error[:120]}, severity=6)
    else:
        ok = cell.succeeded
        ctx.acc_observe(
            "scratchpad_result",
            {"name": name, "success": ok, "stdout_len": len(cell.stdout), "error": error[:300]},
            severity=1 if ok else 5,
        )
    ctx.log_episode("scratchpad", cell.stdout, description=description)
    return ToolResult(format_cell_result(cell), success=cell.error is None)


async def handle_scratchpad(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolResult:
    if ctx.scratchpads is None:
        return ToolResult("ERROR: scratchpads are not available in this session.", success=False)
    action = tool_input.get("action") or ("exec" if tool_input.get("code") else "")
    name = str(tool_input.get("name") or "").strip()
    if action not in ACTIONS:
        return ToolResult(f"ERROR: unknown action '{action}'. Use one of: {', '.join(ACTIONS)}.", success=False)
    from anton_tui.scratchpad.names import validate_pad_name

    try:
        validate_pad_name(name)
    except ValueError as exc:
        return ToolResult(f"ERROR: {exc}", success=False)

    if action == "exec":
        return await _exec(ctx, ctx.scratchpads, name, tool_input)
    if action == "remove":
        removed = await ctx.scratchpads.remove(name)
        return ToolResult(f"Scratchpad '{name}' removed." if removed else f"No scratchpad named '{name}'.")
    pad = ctx.scratchpads.get(name)
    if action == "install":
        packages = [str(p) for p in tool_input.get("packages") or [] if str(p).strip()]
        if not packages:
            return ToolResult("ERROR: 'packages' must list at least one requirement.", success=False)
        from anton_tui.scratchpad.runtime import InstallError, InvalidRequirementError

        pad = pad or await ctx.scratchpads.get_or_create(name)
        try:
            return ToolResult(await pad.install(packages))
        except (InvalidRequirementError, InstallError) as exc:
            return ToolResult(f"ERROR: {exc}", success=False)
    if pad is None:
        return ToolResult(f"No scratchpad named '{name}' is running; nothing to {action}.", success=False)
    if action == "reset":
        await pad.reset()
        ctx.acc_observe("scratchpad_reset", {"name": name, "reason": "manual"}, severity=5)
        return ToolResult(f"Scratchpad '{name}' was reset: its variables are gone.")
    if action == "view":
        return ToolResult(await asyncio.to_thread(pad.view))
    return ToolResult(await asyncio.to_thread(pad.dump))


SCRATCHPAD_TOOL = ToolDef("scratchpad", DESCRIPTION, INPUT_SCHEMA, handle_scratchpad)


def _on_event(ctx: ToolContext, name: str, event: Any) -> None:
    """Pass a cell's events on; outside access also marks the turn untrusted and is shown in the ACC feed."""
    ctx.emit(ScratchpadActivity(event))
    if isinstance(event, CellOutside):
        what = "connected to" if event.kind == "network" else "read"
        ctx.taint(f"cell {event.index} of {name} {what} {event.target}")
        ctx.emit(OutsideAccess(pad=name, cell=event.index, kind=event.kind, target=event.target))
