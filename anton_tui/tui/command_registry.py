"""The slash commands the prompt offers while typing `/…`, and how a typed line maps to one of them.

Each command names the Textual action it runs (for example `app.help`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str  # without the leading slash
    description: str
    action: str | None = None  # a Textual action string such as "app.help"

    @property
    def label(self) -> str:
        return f"/{self.name}"


COMMANDS: list[SlashCommand] = [
    SlashCommand("help", "Show the help screen", "app.help"),
    SlashCommand("retry", "Send the last message again", "screen.retry"),
    SlashCommand("quit", "Leave anton-tui", "app.quit"),
]
"""The built-in commands; the app's `commands` argument replaces or extends this list."""


def parse_command_line(text: str) -> tuple[str, str] | None:
    """Split `/name args` into (name, args); None when `text` is not a slash command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, args = stripped[1:].partition(" ")
    return (name, args.strip()) if name else None


def matching_commands(commands: list[SlashCommand], typed: str) -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash in `typed` (only while no space has been typed)."""
    if not typed.startswith("/") or " " in typed or "\n" in typed:
        return []
    prefix = typed[1:].lower()
    return [command for command in commands if command.name.lower().startswith(prefix)]
