"""The slash commands the prompt's menu offers while typing `/…`, and how a typed line maps to one of them.

The commands themselves live in `anton_tui.tui.commands`; a menu entry may instead name a Textual action it runs
(for example `screen.retry`).
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


def default_menu() -> list[SlashCommand]:
    """The prompt's menu: every command of the command table, plus /retry (a key action of the main screen)."""
    from anton_tui.tui.commands.registry import COMMANDS as TABLE

    entries = [SlashCommand(spec.name, spec.help) for spec in TABLE]
    return [*entries, SlashCommand("retry", "Send the last message again", "screen.retry")]


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
