"""The F1 help screen: what each pane is for and the keys that work in it, with the user's key map applied.

It reads the `HELP` text and the bindings of every pane on the main screen, so a pane added later appears here by
carrying a `HELP` string. The pane that had the focus comes first; the page scrolls from the keyboard.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown, Static

_INTRO = """\
# anton-tui

Anton answers in the chat, runs Python in scratchpads, and remembers what it learns in plain files under
`~/.anton` (and the project's `.anton` folder).
"""


def _own_bindings(node: DOMNode) -> list[Binding]:
    """Bindings declared by the project's own classes of `node` (Textual's built-in keys are left out)."""
    found: list[Binding] = []
    for cls in type(node).__mro__:
        if not cls.__module__.startswith("anton_tui."):
            continue
        found.extend(b for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding))
    return found


def _bindings_table(node: DOMNode, keymap: dict[str, str]) -> str:
    bindings = _own_bindings(node)
    if not bindings:
        return ""
    rows = ["| Key | Does |", "| --- | --- |"]
    for binding in bindings:
        keys = keymap.get(binding.id or "", binding.key).split(",")
        shown = ", ".join(node.app.get_key_display(binding.with_key(key.strip())) for key in keys)
        rows.append(f"| `{shown}` | {binding.description} |")
    return "\n".join(rows)


def help_markdown(main: Screen[Any], keymap: dict[str, str], focused: DOMNode | None = None) -> str:
    """The help text for `main` and its panes: first the pane holding `focused` (innermost first), then the others
    in screen order, then the keys that work everywhere."""
    sections = [_INTRO]
    seen: set[type] = set()
    first = [node for node in (focused.ancestors_with_self if focused is not None else ()) if node is not main]
    nodes = [node for node in first if not isinstance(node, Screen)]
    for node in [*nodes, main, *main.query("*")]:
        help_text = type(node).HELP
        if not help_text or type(node) in seen:
            continue
        seen.add(type(node))
        sections.append(help_text.strip())
        if table := _bindings_table(node, keymap):
            sections.append(table)
    sections.append("## Everywhere")
    sections.append(_bindings_table(main.app, keymap))
    return "\n\n".join(sections)


class HelpScreen(ModalScreen[None]):
    """A scrollable page of help over the main screen."""

    CSS_PATH = Path(__file__).with_name("help.tcss")

    BINDINGS = [Binding("escape,f1", "close", "Close help", id="help.close")]

    def __init__(self, about: Screen[Any], keymap: Mapping[str, str]) -> None:
        """Help for the screen `about`, its keys as `keymap` (binding id → keys) remaps them."""
        super().__init__()
        self.about = about
        self.keymap = dict(keymap)
        self.focused_before = about.focused

    def compose(self) -> ComposeResult:
        with Vertical(id="help-frame"):
            with VerticalScroll(id="help-text"):
                yield Markdown(help_markdown(self.about, self.keymap, self.focused_before))
            yield Static("Up/Down, Page Up/Down, Home/End scroll · Escape or F1 closes this page", id="help-hint")

    def on_mount(self) -> None:
        self.query_one("#help-text").focus()

    def action_close(self) -> None:
        self.dismiss()
