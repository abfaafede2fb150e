"""The tools the model can call: scratchpad, memorize, recall, recall_skill and read_skill_resource."""

from anton_tui.agent.tools.registry import ToolDef, ToolRegistry, ToolResult

__all__ = ["ToolDef", "ToolRegistry", "ToolResult"]
