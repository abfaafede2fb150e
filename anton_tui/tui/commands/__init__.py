"""Slash commands typed in the prompt (`/memory`, `/skill …`, `/setup`, …) and the command palette's entries."""

from anton_tui.tui.commands.context import CommandContext, CommandOutput
from anton_tui.tui.commands.registry import COMMANDS, CommandSpec, complete, run

__all__ = ["COMMANDS", "CommandContext", "CommandOutput", "CommandSpec", "complete", "run"]
