"""One assistant answer, or one part of a long one, in the chat: its Markdown, written to as the answer streams.

A streaming part is written through Textual's `Markdown.get_stream()` (`write`), which merges the pieces that come
faster than the Markdown can show them. When the answer is split into parts, and when the user holds the text back,
is decided in `tui/streaming.py`.

A resumed conversation's answers start as drafts (`draft=True`): their text in one plain widget, drawn in the first
frame without importing or parsing any Markdown, and turned into the rendered answer afterwards (`upgrade`), so they
end up as every other answer looks. Their text (`source`) is there from the start, for copy and find.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widget import MountError, Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

    from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown


class AssistantMessage(Widget):
    """One assistant message (or a part of a long one). `continued`: it goes on from the part before it. `ended`: the
    answer is over and this is its last part (no blank line under it)."""

    def __init__(self, text: str = "", *, continued: bool = False, draft: bool = False, ended: bool = False) -> None:
        super().__init__(classes="chat-block -continued" if continued else "chat-block")
        self.continued = continued
        self.ended = ended
        self._source = text  # the text while no Markdown holds it (a draft, or a part not mounted yet)
        self._draft: Static | None = Static(Content(text), classes="answer-draft") if draft else None
        self._stream: MarkdownStream | None = None

    def compose(self):
        if self._draft is not None:
            yield self._draft
        else:
            from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown

            yield AnswerMarkdown(self._source, ended=self.ended)

    @property
    def markdown(self) -> AnswerMarkdown | None:
        """The Markdown widget; None while the part is a draft or is not mounted."""
        if self._draft is not None or not self.children:
            return None
        from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown

        return next((child for child in self.children if isinstance(child, AnswerMarkdown)), None)

    @property
    def draft(self) -> bool:
        """Drawn as plain text, not rendered yet (see `upgrade`)."""
        return self._draft is not None

    @property
    def source(self) -> str:
        markdown = self.markdown
        return self._source if markdown is None else markdown.source

    @property
    def words(self) -> str:
        return self.source

    async def write(self, text: str, *, at_once: bool = False) -> None:
        """Add streamed text: through the Markdown's stream, or `at_once` (what the stream still holds first), done
        when this returns. A part that is not mounted keeps it for when it is."""
        markdown = self.markdown
        if markdown is None or not markdown.is_mounted:
            self._source += text
        elif at_once:
            await self.stop()
            await markdown.append(text)
        else:
            if self._stream is None:
                self._stream = markdown.stream()
            await self._stream.write(text)

    async def stop(self) -> None:
        """Nothing more is written to this part (the stream shows what it still holds)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()

    def end(self) -> None:
        """The answer is over and this is its last part: no blank line under its last block."""
        self.ended = True
        if (markdown := self.markdown) is not None:
            markdown.end()

    @property
    def resting(self) -> bool:
        """Kept at its height with its blocks out of the screen's layout (see `rest`)."""
        markdown = self.markdown
        return markdown is not None and not markdown.display

    def rest(self) -> None:
        """Far from the view, the part keeps its place (its height now) while its Markdown leaves the screen's layout:
        each layout pass visits every widget displayed, and a part's Markdown is dozens of them. (`wake` when the view
        comes near; at another width its height would differ: the chat wakes every part then.)"""
        markdown, height = self.markdown, self.outer_size.height
        if markdown is None or not markdown.display or not height:
            return
        self.styles.height = height
        markdown.display = False

    def wake(self) -> None:
        markdown = self.markdown
        if markdown is not None and not markdown.display:
            markdown.display = True
            self.styles.clear_rule("height")

    def recipe(self) -> Callable[[], Widget]:
        """Makes this part again, rendered, once it has left the chat."""
        return partial(AssistantMessage, self.source, continued=self.continued, ended=self.ended)

    async def upgrade(self) -> bool:
        """Render a draft as Markdown, as every answer is drawn. The Markdown gets its blocks hidden and takes the
        draft's place in one step, so no frame shows both or neither. False when there was nothing to do (not a
        draft, or no longer in the chat)."""
        draft = self._draft
        if draft is None or not self.is_attached:
            return False
        from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown

        markdown = AnswerMarkdown(self._source, ended=self.ended)
        markdown.display = False
        try:
            await self.mount(markdown)  # parsed, and its blocks mounted
        except MountError:  # the chat was cleared meanwhile
            return False
        if self._draft is not draft or not self.is_attached:  # (may have changed while the Markdown mounted)
            return False
        self._draft = None
        draft.display, markdown.display = False, True
        await draft.remove()
        return True
