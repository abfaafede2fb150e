"""The Context tab: what the current turn's request carried of memory and skills, line by line, with sizes.

It reads `Runtime.context_report()` (kept in memory by the session, nothing on disk) and is refreshed when a turn
finishes or memory changes.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

from anton_tui.tui.widgets.inspector.base import ColumnSpec, FixedColumnsTable, InspectorTab, pick, set_columns

COLUMNS = (
    ColumnSpec("section", "Section", 10),
    ColumnSpec("scope", "Scope", 7, drop=1),
    ColumnSpec("chars", "Chars", 6),
    ColumnSpec("tokens", "≈Tok", 5),
    ColumnSpec("text", "Line", None),
)


def describe(report: Any) -> str:
    if report is None:
        return "No request yet: after the first turn this shows the memory and skills the agent saw."
    parts = [f"{name} {lines} ({tokens} tok)" for name, (lines, _chars, tokens) in report.totals().items()]
    head = f"Turn {report.turn}: {report.chars:,} chars ≈ {report.tokens:,} tokens of memory and skills"
    return head + (" · " + ", ".join(parts) if parts else " (none)")


class ContextTab(InspectorTab):
    """What the agent saw in the current turn (see the module docstring)."""

    TITLE = "Context"
    BINDINGS = [Binding("r", "reload", "Reload", id="inspector.reload")]
    HELP = """\
## Context

What the latest request to the model carried of Anton's memory: each profile line, rule, lesson, skill and
scratchpad hint, with its size in characters and estimated tokens (characters divided by the ratio learned from
the provider's own counts). Lines that did not fit the memory budgets are not listed because the agent did not see
them.
"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.report: Any = None

    def compose(self) -> ComposeResult:
        yield Static(classes="status")
        yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, classes="context")

    def on_mount(self) -> None:
        if self.has_runtime:
            self.refresh_data()

    def runtime_attached(self) -> None:
        self.refresh_data()

    def refresh_data(self) -> None:
        if not self.has_runtime:
            return  # (read once the runtime is there)
        self.report = self.runtime.context_report()
        self.query_one(".status", Static).update(Content(describe(self.report)))
        table = self.query_one(FixedColumnsTable)
        shown = set_columns(table, COLUMNS)
        for number, item in enumerate(self.report.items if self.report is not None else ()):
            values = (item.section, item.scope, item.chars, item.tokens, item.text)
            table.add_row(*pick(values, shown), key=str(number))
        self.post_message(self.Summary(self, len(self.report.items) if self.report is not None else 0))

    def action_reload(self) -> None:
        self.refresh_data()
