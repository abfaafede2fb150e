"""One assistant answer, or one part of a long one, in the chat: Markdown while it streams, its rendered lines once done.

A Markdown widget is a tree of block widgets (paragraphs, list items, fences…), and every layout pass of the screen
visits every widget on it, however far above the view. So once finished and laid out, a part keeps the lines it
rendered and lets its Markdown go (`keep_lines`): one widget per part. When those lines no longer fit (the chat's
width or the theme changed) the part turns back into Markdown for a moment (`Thawed`) and keeps the new lines.
When all this happens is decided in `tui/streaming.py`.

A resumed conversation's answers start as drafts (`draft=True`): their text in one plain widget, drawn in the first
frame without importing or parsing any Markdown, and turned into the rendered answer afterwards (`upgrade`), so they
end up as every other answer looks. Their text (`source`) is there from the start, for copy and find.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import MountError, Widget
from textual.widgets import Static

from anton_tui.tui.textual_internals import layout_settled, rendered_lines

if TYPE_CHECKING:
    from textual.widgets import Markdown


def _scrolls_sideways(widget: Widget) -> bool:
    """A code block wider than the chat scrolls sideways; kept lines could not, so such a part stays Markdown."""
    return any(
        child.styles.overflow_x in ("auto", "scroll") and child.max_scroll_x > 0
        for child in widget.walk_children(Widget)
    )


class AssistantMessage(Widget):
    """One assistant message (or a part of a long one): Markdown while it streams, its rendered lines once done."""

    class Thawed(Message):
        """A finished part is Markdown again (to be rendered for a new width or theme); its lines are to be kept."""

        def __init__(self, part: AssistantMessage) -> None:
            super().__init__()
            self.part = part

    def __init__(self, text: str = "", *, continued: bool = False, draft: bool = False) -> None:
        super().__init__(classes="chat-block -continued" if continued else "chat-block")
        self._source = text
        self._draft: Static | None = Static(Content(text), classes="answer-draft") if draft else None
        self._lines: list[Strip] | None = None  # the kept rendering
        self._kept_as: tuple[int, str] | None = None  # (width, theme) the kept lines were rendered for
        self.finished = False
        self._last = True
        self._line_style = Style()
        self._trimmed: Widget | None = None  # the block whose bottom margin `_trim_last_margin` took away

    def compose(self):
        if self._draft is not None:
            yield self._draft
        else:
            from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown

            yield AnswerMarkdown(self._source)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    @property
    def markdown(self) -> Markdown | None:
        """The live Markdown widget; None while the part is a draft or shows its kept lines (a hidden one may wait
        to go)."""
        if self._lines is not None or self._draft is not None:
            return None
        return next(iter(self.query_children("Markdown")), None)  # type: ignore[arg-type]

    @property
    def draft(self) -> bool:
        """Drawn as plain text, not rendered yet (see `upgrade`)."""
        return self._draft is not None

    async def upgrade(self) -> bool:
        """Render a draft as Markdown, as every answer is drawn. The Markdown gets its blocks hidden and takes the
        draft's place in one step, so no frame shows both or neither. False when there was nothing to do (not a
        draft, or no longer in the chat)."""
        draft = self._draft
        if draft is None or not self.is_attached:
            return False
        from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown

        markdown = AnswerMarkdown(self._source)
        markdown.display = False
        try:
            await self.mount(markdown)  # parsed, and its blocks mounted
        except MountError:  # the chat was cleared meanwhile
            return False
        if not self.is_attached or self._draft is not draft:
            return False
        self._draft = None
        draft.display, markdown.display = False, True
        await draft.remove()
        return True

    @property
    def source(self) -> str:
        markdown = self.markdown
        return self._source if markdown is None else markdown.source

    @property
    def frozen(self) -> bool:
        """Showing its kept lines, its Markdown gone."""
        return self._lines is not None and not self.children

    async def append(self, text: str) -> None:
        """Add streamed text to the live Markdown."""
        markdown = self.markdown
        assert markdown is not None, "a part is written to only while it streams"
        await markdown.append(text)

    def finish(self, *, last: bool = True) -> bool:
        """Nothing more will be written to this part. `last` is False for a part that the next one continues (its
        blank line under the last block stays, as between any two blocks). False when the part must first be
        rendered again (it kept its lines with that blank line under them)."""
        now_last = last and not self._last
        self.finished, self._last = True, last
        if now_last and self._kept_as is not None:
            self.call_later(self._thaw)
            return False
        self._trim_last_margin()
        return True

    def _trim_last_margin(self) -> None:
        """No blank line under the last block of a finished message. Done by hand: a `:last-child` rule would
        restyle every block of a streaming answer each time a block is added."""
        markdown = self.markdown
        if markdown is None or not markdown.children or not self._last:
            return
        last = markdown.children[-1]
        if self._trimmed is not None and self._trimmed is not last:
            self._trimmed.styles.clear_rule("margin")
        top, right, _bottom, left = last.styles.margin
        last.styles.margin = (top, right, 0, left)
        self._trimmed = last

    def ready_to_keep_lines(self) -> bool | None:
        """Whether the finished Markdown can be kept as lines now: it has its blocks, and the screen's layout has
        given all of them their places at the part's current width. None when it never will as it stands (gone,
        kept already, or a code block in it scrolls sideways)."""
        markdown = self.markdown
        if markdown is None or not self.finished or not self.is_attached:
            return None
        width = markdown.region.width
        if not width or not self.display or width != self.content_region.width:
            return False
        if bool(markdown.children) != bool(markdown.source.strip()):
            return False
        self._trim_last_margin()  # in case the last block came after `finish`
        if not (all(block.is_mounted for block in markdown.walk_children()) and layout_settled(markdown)):
            return False
        return None if _scrolls_sideways(markdown) else True

    async def keep_lines(self) -> None:
        """Keep the rendered lines and drop the Markdown (call when `ready_to_keep_lines()`)."""
        markdown = self.markdown
        assert markdown is not None
        self._lines = rendered_lines(markdown)
        self._kept_as = (markdown.region.width, self.app.theme)
        self._source = markdown.source
        # The part draws its kept lines once, the Markdown hidden, before the Markdown goes: removed at once, its
        # blocks go first and a frame shows the part blank. Not awaited here: a screen under a dialog is not
        # refreshed, and the chat must go on meanwhile.
        markdown.visible = False
        self.refresh(layout=True)
        self.call_after_refresh(self._drop, markdown)

    async def _drop(self, markdown: Markdown) -> None:
        if markdown.parent is self and self._lines is not None:
            await markdown.remove()

    async def _thaw(self) -> None:
        """Back to live Markdown, to be rendered again for the new width or theme (and kept again)."""
        if self._kept_as is None:  # not kept, or already thawing
            return
        self._kept_as = None
        from anton_tui.tui.widgets.answer_markdown import AnswerMarkdown

        await self.remove_children("Markdown")  # a hidden one still waiting to go
        await self.mount(AnswerMarkdown(self._source))  # the old lines stay underneath until it has its blocks
        self._lines = None
        self.refresh(layout=True)
        if self.finished and self.finish(last=self._last):
            self.post_message(self.Thawed(self))

    async def on_resize(self) -> None:
        if self._kept_as is not None and self._kept_as[0] != self.content_region.width:
            await self._thaw()

    async def _theme_changed(self) -> None:
        if self._kept_as is not None:
            await self._thaw()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._lines is not None:
            return len(self._lines)
        return super().get_content_height(container, viewport, width)

    def render_lines(self, crop: Region) -> list[Strip]:
        self._line_style = self.rich_style  # once per render, not per line: it looks at every ancestor
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self._lines is None or y >= len(self._lines):
            return Strip.blank(width, self._line_style)
        strip = self._lines[y]
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            length = strip.cell_length
            start, end = span
            end = length if end == -1 else min(end, length)
            start = min(start, end)
            style = self.screen.get_component_rich_style("screen--selection")
            strip = Strip.join(
                [strip.crop(0, start), strip.crop(start, end).apply_style(style), strip.crop(end, length)]
            )
        return strip if strip.cell_length == width else strip.crop_extend(0, width, self._line_style)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if self._lines is None:
            return None
        return selection.extract("\n".join(strip.text for strip in self._lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    async def action_link(self, href: str) -> None:
        """A link in the kept lines was clicked (the Markdown that drew it is gone)."""
        self.app.open_url(href)
