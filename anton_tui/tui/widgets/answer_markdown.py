"""The Markdown widget an answer is rendered with. In a module of its own because importing Textual's Markdown (and
its parser) costs start-up time: `answer.py` stays free of it, so a resumed conversation is drawn as text before it.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Markdown


class AnswerMarkdown(Markdown):
    """The live Markdown of a part. Its first block has the class `-first`, which chat.tcss uses to start an answer
    right under the message before it, whatever block it opens with."""

    def mount(
        self, *widgets: Widget, before: int | str | Widget | None = None, after: int | str | Widget | None = None
    ):
        if widgets and before is None and after is None and not self.children:
            widgets[0].add_class("-first")
        return super().mount(*widgets, before=before, after=after)
