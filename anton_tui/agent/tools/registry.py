"""The tools the model can call: their definitions and a registry that runs them safely.

A handler that raises becomes a failed tool result carrying the error text; it never ends the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.agent.tools.context import ToolContext

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    success: bool = True
    limits_tools: tuple[str, tuple[str, ...]] | None = None
    """Set by a recall of a skill with `allowed-tools`: (label, the tools the rest of the turn may use)."""


Handler = Callable[["ToolContext", dict[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class ToolDef:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler = field(repr=False, compare=False)

    def definition(self, description: str | None = None) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": description if description is not None else self.description,
            "input_schema": self.input_schema,
        }


class ToolRegistry:
    def __init__(self, tools: list[ToolDef] | None = None) -> None:
        self._tools: dict[str, ToolDef] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: ToolDef) -> None:
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        """Stop offering `name` (a tool offered only for a while, such as the goal's); unknown names are ignored."""
        self._tools.pop(name, None)

    def get(self, name: str) -> ToolDef | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self, descriptions: dict[str, str] | None = None) -> list[dict[str, Any]]:
        descriptions = descriptions or {}
        return [tool.definition(descriptions.get(name)) for name, tool in self._tools.items()]

    async def call(self, name: str, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(f"ERROR: there is no tool named '{name}'. Available tools: {known}.", success=False)
        try:
            return await tool.handler(ctx, tool_input)
        except Exception as exc:  # a failing tool is reported to the model, never fatal to the turn
            log.warning("tool %s failed", name, exc_info=True)
            return ToolResult(f"Tool '{name}' failed: {type(exc).__name__}: {exc}", success=False)
