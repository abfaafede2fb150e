"""The "earlier turns summarised" block: one line in the chat that expands to the summary standing for those turns.

A long conversation's older turns are replaced by a summary the model keeps reading; this block shows that it
happened (how many messages, about how many tokens before and after) and, opened with **Enter** or a click, the
summary itself as the model sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static


class SummaryBlock(Collapsible):
    """Collapsed: the title line. Expanded: the summary's text."""

    DEFAULT_CSS = """
    SummaryBlock { padding: 0 1; border-left: outer $secondary; background: transparent; }
    SummaryBlock > Contents { padding: 0 0 0 2; }
    SummaryBlock .summary-text { color: $text-muted; }
    """
    HELP = __doc__

    def __init__(self, summary: str, detail: str = "") -> None:
        title = Content.from_markup("[b]Earlier turns summarised[/b] [$text-muted]$detail[/]", detail=detail)
        super().__init__(
            Static(Content(summary.strip() or "(empty summary)"), classes="summary-text"),
            title=title,  # type: ignore[arg-type]  # Content is accepted
            collapsed=True,
            classes="chat-block",
        )
        self.summary = summary
        self.detail = detail

    @property
    def words(self) -> str:
        return self.summary

    def recipe(self) -> Callable[[], Widget]:
        return partial(SummaryBlock, self.summary, self.detail)
