"""The tools the model can call: scratchpad, memorize, recall and recall_skill."""

from anton_tui.agent.tools.registry import ToolDef, ToolRegistry, ToolResult

__all__ = ["ToolDef", "ToolRegistry", "ToolResult"]
