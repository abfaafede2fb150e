"""The command palette's Anton commands: every slash command that needs no argument, pane toggles, themes, and
commands about one skill where they apply.

Each entry runs an action on the app by name (`app.run_action(...)`). `PALETTE_ACTIONS` lists the actions the
entries use, so the app knows what it must provide; an entry is offered only when the screen it targets has the
action (pane toggles on the main screen, file and skill actions on the skills screen). The skills' labels are read
through the Runtime, off the event loop, once each time the palette opens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from anton_tui.tui.commands.registry import COMMANDS
from anton_tui.tui.holds_runtime import runtime_of

PALETTE_ACTIONS: dict[str, str] = {
    "app.slash_command(line)": "run one slash command line (e.g. '/memory rules') and show its reply in the chat",
    "app.help": "open the help screen",
    "screen.toggle_scratchpad": "main screen: show or hide the scratchpad pane",
    "screen.toggle_inspector": "main screen: show or hide the memory inspector",
    "screen.toggle_maximize": "main screen: maximise the focused pane or restore it",
    "screen.save": "skills screen: save the open file",
    "screen.new_skill": "skills screen: create a skill",
    "screen.rename_skill": "skills screen: rename the selected skill",
    "screen.delete_skill": "skills screen: delete the selected skill",
}
"""Action → what it does. `slash_command` and `help` are app actions; the `screen.` ones belong to the screens."""

_NEEDS_ARGUMENT = {"skill show", "skill remove", "theme"}
_PANES = [
    ("toggle_scratchpad", "Scratchpad pane", "Show or hide the scratchpad (F2)"),
    ("toggle_inspector", "Memory inspector pane", "Show or hide the memory inspector (F3)"),
    ("toggle_maximize", "Maximise pane", "Maximise the focused pane, or restore it (F5)"),
]
DUPLICATED_BUILT_INS = frozenset({"Quit", "Theme", "Maximize", "Minimize"})
"""Textual's own palette entries that an Anton entry already offers (/exit, Theme: …, Maximise pane)."""


@dataclass(frozen=True)
class PaletteCommand:
    title: str
    help: str
    action: str
    listed: bool = True
    """Shown before anything is typed; per-skill and theme entries only appear when they match a search."""


def slash(line: str) -> str:
    """The action string that runs slash command `line` through the app."""
    return f"app.slash_command({line!r})"


def _screen_has(screen: Screen[Any], action: str) -> bool:
    return callable(getattr(screen, f"action_{action}", None))  # Textual runs actions by name, as `run_action` does


def palette_commands(app: App[Any], screen: Screen[Any], skill_labels: Sequence[str] = ()) -> list[PaletteCommand]:
    """The commands that apply while `screen` is the active screen of `app` (`skill_labels`: the saved skills)."""
    from anton_tui.tui.screens.skills import SkillsScreen

    commands: list[PaletteCommand] = []
    if isinstance(screen, SkillsScreen):
        selected = screen.selected_label
        add = commands.append
        add(PaletteCommand("New skill", "Create a skill from a name and when to use it", "screen.new_skill"))
        if screen.has_open_file:
            add(PaletteCommand("Save the open skill file", "Write the editor's text to disk", "screen.save"))
        if selected:
            add(PaletteCommand(f"Rename skill {selected}", "Give the skill a new label", "screen.rename_skill"))
            add(PaletteCommand(f"Delete skill {selected}", "Remove the skill's folder", "screen.delete_skill"))
    for action, title, description in _PANES:
        if _screen_has(screen, action):
            commands.append(PaletteCommand(title, description, f"screen.{action}"))
    for spec in COMMANDS:
        if spec.name in _NEEDS_ARGUMENT:
            continue
        commands.append(PaletteCommand(f"/{spec.name}", spec.help, slash(f"/{spec.name}")))
    for label in skill_labels:
        show, remove = slash(f"/skill show {label}"), slash(f"/skill remove {label}")
        commands.append(PaletteCommand(f"Show skill {label}", "Its details and procedure in the chat", show, False))
        commands.append(PaletteCommand(f"Remove skill {label}", "Delete it (asks first)", remove, False))
    for name in sorted(app.available_themes):
        if name != app.theme:
            commands.append(PaletteCommand(f"Theme: {name}", "Switch the colour theme", slash(f"/theme {name}"), False))
    return commands


class AntonCommands(Provider):
    """Palette provider for Anton's commands; add it to `App.COMMANDS`."""

    _skill_labels: list[str] | None = None

    async def startup(self) -> None:
        await self._labels()

    async def _labels(self) -> list[str]:
        if self._skill_labels is None:
            app = self.app
            runtime = runtime_of(app)
            self._skill_labels = await runtime.skills.labels() if runtime is not None else []
        return self._skill_labels

    async def _commands(self) -> list[PaletteCommand]:
        return palette_commands(self.app, self.screen, await self._labels())

    def _runner(self, action: str):
        async def run() -> None:
            await self.app.run_action(action)

        return run

    async def discover(self) -> Hits:
        for command in await self._commands():
            if not command.listed:
                continue
            yield DiscoveryHit(command.title, self._runner(command.action), help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in await self._commands():
            score = matcher.match(command.title)
            if score > 0:
                shown = matcher.highlight(command.title)
                yield Hit(score, shown, self._runner(command.action), text=command.title, help=command.help)
