"""One assistant answer (or one part of a long one) in the chat.

While it streams, a part is a Markdown widget, which is a tree of block widgets (paragraphs, list items, fences…).
Every layout pass of the screen visits every widget in it, however far above the view, so a long transcript of live
Markdown makes each new line of a streaming answer slower to lay out, and typing stutters. A finished part therefore
keeps the lines it rendered and lets its Markdown widgets go: it becomes a single widget that draws those lines.
When the lines no longer fit (the chat's width or the theme changed) the part turns back into Markdown for a moment,
re-renders, and keeps the new lines.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.style import Style
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from anton_tui.tui.widgets.markdown_lists import GROWING_LISTS

_QUICK_TRIES = 20  # refreshes to wait for the screen to lay the Markdown's last blocks out
_SLOW_RETRY_S = 0.5  # after those, how often to look again (while the chat is hidden, say)


def rendered_lines(widget: Widget) -> list[Strip]:
    """The lines `widget` and everything inside it draw in the place the screen's layout gave them (above the view
    too), as the screen would draw them."""
    from textual._compositor import Compositor

    compositor = Compositor()
    compositor.reflow(widget, widget.region.size)
    return compositor.render_strips()


def layout_settled(widget: Widget) -> bool:
    """Whether everything inside `widget` has the size that laying it out now would give it. The screen's last
    layout may predate the last change of text (a paragraph that gained a line and a block that lost its bottom
    margin leave the total height as it was)."""
    arrangement = widget.arrange(widget.content_region.size)  # as the screen arranges it
    if widget.outer_size.height != arrangement.total_region.height + widget.styles.gutter.height:
        return False
    for placement in arrangement.placements:
        child = placement.widget
        # `outer_size` is the size the screen last gave the widget, which it draws at. (`region`, its place in the
        # screen's map, can be newer: a scroll sizes only the widgets it brings into view.)
        if not child.is_mounted or child.outer_size != placement.region.size:
            return False
        if child.is_container and child.children and not layout_settled(child):
            return False
    return True


def _scrolls_sideways(widget: Widget) -> bool:
    """A code block wider than the chat scrolls sideways; kept lines could not, so such a part stays Markdown."""
    return any(
        child.styles.overflow_x in ("auto", "scroll") and child.max_scroll_x > 0 for child in widget.walk_children(Widget)
    )


class AnswerMarkdown(Markdown):
    """The live Markdown of a part. Its first block has the class `-first`, which chat.tcss uses to start an answer
    right under the message before it, whatever block it opens with. Its lists grow in place as they stream."""

    BLOCKS = {**Markdown.BLOCKS, **GROWING_LISTS}

    def mount(self, *widgets: Widget, before: int | str | Widget | None = None, after: int | str | Widget | None = None):
        if widgets and before is None and after is None and not self.children:
            widgets[0].add_class("-first")
        return super().mount(*widgets, before=before, after=after)


class AssistantMessage(Widget):
    """One assistant message (or a part of a long one): Markdown while it streams, its rendered lines once done."""

    def __init__(
        self, text: str = "", *, continued: bool = False, run_heavy: Callable[[Callable[[], Any]], None] | None = None
    ) -> None:
        """`run_heavy(job)` runs the costly step of keeping the lines (the chat fits it between keystrokes)."""
        super().__init__(classes="chat-block -continued" if continued else "chat-block")
        self._run_heavy = run_heavy or self.call_later
        self._source = text
        self._lines: list[Strip] | None = None  # the kept rendering, while frozen
        self._frozen_as: tuple[int, str] | None = None  # (width, theme) the kept lines were rendered for
        self._finished = False
        self._last = True
        self._freeze_tries = 0
        self._line_style = Style()
        self._trimmed: Widget | None = None  # the block whose bottom margin `_trim_last_margin` took away

    def compose(self):
        yield AnswerMarkdown(self._source)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    @property
    def markdown(self) -> Markdown | None:
        """The live Markdown widget; None while the part shows its kept lines."""
        return next(iter(self.query_children(Markdown)), None)

    def stream(self) -> MarkdownStream:
        """A stream that writes into the live Markdown, batching fast writes."""
        markdown = self.markdown
        assert markdown is not None, "a frozen part is finished"
        return Markdown.get_stream(markdown)

    @property
    def source(self) -> str:
        markdown = self.markdown
        return self._source if markdown is None else markdown.source

    @property
    def frozen(self) -> bool:
        """Showing its kept lines, its Markdown gone."""
        return self._lines is not None and not self.children

    def finish(self, *, last: bool = True) -> None:
        """Nothing more will be written to this part: keep its rendering once it is laid out. `last` is False for a
        part that the next one continues (its blank line under the last block stays, as between any two blocks)."""
        now_last = last and not self._last
        self._finished = True
        self._last = last
        self._freeze_tries = 0
        if now_last and self._frozen_as is not None:
            self.call_later(self._thaw)  # kept with the blank line under it: render again without
            return
        self._trim_last_margin()
        self.call_after_refresh(self._freeze)

    def _trim_last_margin(self) -> None:
        """No blank line under the last block of a finished message. Done by hand: a `:last-child` rule would
        restyle every block of a streaming answer each time a block is added. The last blocks of a stream may be
        mounted after `finish`: a block trimmed while it was last gets its margin back when another follows."""
        markdown = self.markdown
        if markdown is None or not markdown.children or not self._last:
            return
        last = markdown.children[-1]
        if self._trimmed is not None and self._trimmed is not last:
            self._trimmed.styles.clear_rule("margin")
        top, right, _bottom, left = last.styles.margin
        last.styles.margin = (top, right, 0, left)
        self._trimmed = last

    async def _freeze(self) -> None:
        if self._ready_to_freeze():
            self._run_heavy(self._keep_lines)

    def _ready_to_freeze(self) -> bool:
        """Whether the finished Markdown can be kept as lines now; when it is not laid out yet, look again soon."""
        markdown = self.markdown
        if markdown is None or not self._finished or not self.is_attached:
            return False
        if not self._laid_out(markdown):
            self._freeze_tries += 1
            self._trim_last_margin()  # in case the last block came after `finish`
            if self._freeze_tries < _QUICK_TRIES:
                self.call_after_refresh(self._freeze)
            else:
                self.set_timer(_SLOW_RETRY_S, self._freeze)
            return False
        return not _scrolls_sideways(markdown)

    async def _keep_lines(self) -> None:
        if not self._ready_to_freeze():  # things may have moved while this waited for its turn
            return
        markdown = self.markdown
        assert markdown is not None
        self._lines = rendered_lines(markdown)
        self._frozen_as = (markdown.region.width, self.app.theme)
        self._source = markdown.source
        await markdown.remove()
        self.refresh(layout=True)

    def _laid_out(self, markdown: Markdown) -> bool:
        """The Markdown has its blocks, and the screen's layout has given all of them their places at the part's
        current width (blocks mounted by the last write may still be waiting for it)."""
        width, height = markdown.region.size
        if not width or not self.display or width != self.content_region.width:
            return False
        if bool(markdown.children) != bool(markdown.source.strip()):
            return False
        return all(block.is_mounted for block in markdown.walk_children()) and layout_settled(markdown)

    async def _thaw(self) -> None:
        """Back to live Markdown, to be rendered again for the new width or theme (and kept again)."""
        if self._frozen_as is None:  # not frozen, or already thawing
            return
        self._frozen_as = None
        await self.mount(AnswerMarkdown(self._source))  # the old lines stay underneath until it has its blocks
        self._lines = None
        self.refresh(layout=True)
        if self._finished:
            self.finish(last=self._last)

    async def on_resize(self) -> None:
        if self._frozen_as is not None and self._frozen_as[0] != self.content_region.width:
            await self._thaw()

    async def _theme_changed(self) -> None:
        if self._frozen_as is not None:
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
            strip = Strip.join([strip.crop(0, start), strip.crop(start, end).apply_style(style), strip.crop(end, length)])
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
