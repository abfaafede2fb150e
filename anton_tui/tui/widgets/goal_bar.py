"""The line above the prompt while a `/goal` runs: which turn of how many, the objective, and how to stop it."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class GoalBar(Static):
    """Shown from the start of a goal run to its end (the main screen mounts and removes it)."""

    DEFAULT_CSS = """
    GoalBar {
        height: 1;
        padding: 0 1;
        background: $boost;
        color: $text-accent;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, objective: str, max_turns: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.objective = " ".join(objective.split())
        self.max_turns = max_turns
        self.turn = 0
        self.tooltip = f"Goal: {self.objective}"

    @property
    def counter(self) -> str:
        return f"goal: turn {self.turn} of {self.max_turns}"

    def show_turn(self, turn: int) -> None:
        self.turn = turn
        self.update(Content.assemble((self.counter, "bold"), " · Esc stops · ", (self.objective, "italic")))

    def on_mount(self) -> None:
        self.show_turn(self.turn)
