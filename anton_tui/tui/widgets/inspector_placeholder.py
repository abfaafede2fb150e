"""The frame the main screen shows on the right when no memory inspector is plugged in (tests, minimal setups)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static


class InspectorPlaceholder(Vertical):
    """An empty inspector: says where the memory views go, ignores session events."""

    HELP = """\
## Inspector

Anton's memory at a glance: rules, lessons, the user profile, skills, self-check (ACC) events and past episodes.
"""

    ALLOW_MAXIMIZE = True

    def compose(self) -> ComposeResult:
        yield Static(Content("Memory"), classes="pane-title")
        yield Static(Content("Rules, lessons, profile, skills and episodes are shown here."), classes="pane-empty")

    def apply_event(self, event: object) -> None:
        """Session events are not shown here."""
