"""The Markdown widget an answer is rendered with. In a module of its own because importing Textual's Markdown (and
its parser) costs start-up time: `answer.py` stays free of it, so a resumed conversation is drawn as text before it.
"""

from __future__ import annotations

from textual.widget import AwaitMount, Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AnswerMarkdown(Markdown):
    """The Markdown of an answer part. Its first block has the class `-first`, which chat.tcss uses to start an answer
    right under the message before it, whatever block it opens with. Once the answer is over (`end`), its last block
    has no blank line under it; that is done by hand, since a `:last-child` rule would restyle every block of a
    streaming answer each time a block is added."""

    def __init__(self, markdown: str = "", *, ended: bool = False) -> None:
        super().__init__(markdown)
        self.ended = ended
        self._trimmed: Widget | None = None  # the block whose bottom margin `end` took away

    def stream(self) -> MarkdownStream:
        """Textual's stream into this Markdown: it merges the pieces written faster than it can show them."""
        return Markdown.get_stream(self)

    def end(self) -> None:
        """Nothing more will be written: no blank line under the last block (nor under one that comes later, from a
        write still under way)."""
        self.ended = True
        self._trim_last()

    def _trim_last(self) -> None:
        last = self.children[-1] if self.children else None
        if last is self._trimmed:
            return
        if self._trimmed is not None:
            self._trimmed.styles.clear_rule("margin")
        self._trimmed = last
        if last is not None:
            top, right, _bottom, left = last.styles.margin
            last.styles.margin = (top, right, 0, left)

    def mount(
        self, *widgets: Widget, before: int | str | Widget | None = None, after: int | str | Widget | None = None
    ) -> AwaitMount:
        if widgets and before is None and after is None and not self.children:
            widgets[0].add_class("-first")
        mounted = super().mount(*widgets, before=before, after=after)
        if self.ended:
            self._trim_last()
        return mounted
