"""The slash commands the prompt's menu offers while typing `/…`, and how a typed line maps to one of them.

The commands themselves live in `anton_tui.tui.commands`; a menu entry may instead name a Textual action it runs
(for example `screen.retry`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload


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


class SlashMenu(Sequence[SlashCommand]):
    """The prompt's menu, made from the command table when first looked at, or of the `entries` given (tests).

    Making it imports the module of every command, which would cost the first frame about 30 ms; the menu is first
    needed when `/` is typed or a command is run."""

    def __init__(self, entries: Iterable[SlashCommand] | None = None) -> None:
        self._entries = None if entries is None else list(entries)

    @property
    def entries(self) -> list[SlashCommand]:
        if self._entries is None:
            self._entries = default_menu()
        return self._entries

    @overload
    def __getitem__(self, index: int) -> SlashCommand: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SlashCommand]: ...
    def __getitem__(self, index: int | slice) -> SlashCommand | Sequence[SlashCommand]:
        return self.entries[index]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[SlashCommand]:
        return iter(self.entries)


def parse_command_line(text: str) -> tuple[str, str] | None:
    """Split `/name args` into (name, args); None when `text` is not a slash command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, args = stripped[1:].partition(" ")
    return (name, args.strip()) if name else None


def matching_commands(commands: Iterable[SlashCommand], typed: str) -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash in `typed` (only while no space has been typed)."""
    if not typed.startswith("/") or " " in typed or "\n" in typed:
        return []
    prefix = typed[1:].lower()
    return [command for command in commands if command.name.lower().startswith(prefix)]
