"""The Context tab: what the current turn's request carried of memory and skills, line by line, with sizes: the
memory files at its front, what was pinned, what was ranked in (with its score against the turn) and what was left
out (and why).

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
    ColumnSpec("status", "Given", 8),
    ColumnSpec("section", "Section", 10),
    ColumnSpec("scope", "Scope", 7, drop=2),
    ColumnSpec("score", "Score", 5, drop=3),
    ColumnSpec("chars", "Chars", 6, drop=1),
    ColumnSpec("tokens", "≈Tok", 5),
    ColumnSpec("text", "Line", None),
)


def describe(report: Any) -> str:
    if report is None:
        return "No request yet: after the first turn this shows the memory and skills the agent saw."
    parts = [f"{name} {lines} ({tokens} tok)" for name, (lines, _chars, tokens) in report.totals().items()]
    head = f"Turn {report.turn}: {report.chars:,} chars ≈ {report.tokens:,} tokens of memory and skills"
    text = head + (" · " + ", ".join(parts) if parts else " (none)")
    if report.budget_tokens is None:
        return text
    left = f"{report.count('left out'):,} left out"
    if report.left_out_more:
        left += f" (the {report.left_out_more:,} lowest not listed)"
    budget = (
        f"Turn {report.turn} · budget {report.budget_tokens:,} tokens, ranked in {report.ranked_tokens:,} · "
        f"{report.count('pinned')} pinned, {report.count('ranked')} ranked in, {left}"
    )
    return budget + "\n" + text.split(": ", 1)[1]


def cells_of(item: Any) -> tuple[object, ...]:
    """The cells of one report line, for `COLUMNS`."""
    score = f"{item.score:.2f}" if item.score is not None else ""
    text = f"{item.text}  — {item.why}" if item.status == "left out" and item.why else item.text
    status = "" if item.status == "sent" else item.status
    return (status, item.section, item.scope, score, item.chars, item.tokens, text)


class ContextTab(InspectorTab):
    """What the agent saw in the current turn (see the module docstring)."""

    TITLE = "Context"
    BINDINGS = [Binding("r", "reload", "Reload", id="inspector.reload")]
    HELP = """\
## Context

What the latest request to the model carried of Anton's memory: the memory files at its front (`AGENTS.md`,
`AGENTS.local.md`), each profile line, rule, lesson, skill and scratchpad hint, with its size in characters and
estimated tokens (characters divided by the ratio learned from the provider's own counts).

**Given** says why a line went in: *pinned* (the profile, the memory files, preloaded skills and rules you wrote or
confirmed always go), *ranked* (chosen for this turn by its **Score** against your message, the recent turns and
the skills in play, within `ANTON_MEMORY_BUDGET_TOKENS`), or *left out* (over the budget, or sharing no word with
the turn); left-out lines come last and the agent did not see them.
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
            table.add_row(*pick(cells_of(item), shown), key=str(number))
        self.post_message(self.Summary(self, len(self.report.items) if self.report is not None else 0))

    def action_reload(self) -> None:
        self.refresh_data()
