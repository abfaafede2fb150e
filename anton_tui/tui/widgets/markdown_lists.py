"""Markdown lists that grow in place while an answer streams.

On every streamed write, Textual's Markdown parses its last block again and, when that block is a list, removes the
whole list and mounts it anew: every item's widgets, however many, for one more word in the last item. These lists
keep the items that did not change, update the text of a changed last item where it stands, and mount only the
new items, so a long list costs about as much to stream as its last item. They draw exactly what Textual's lists
draw (the same widgets, in the same tree, under the same CSS).

They build on what Textual's Markdown uses inside (its list classes, `_update_from_block`, a block's `_blocks` and
`_content`), none of it public: Textual is pinned, and tests compare every streamed answer with Textual's drawing.
"""

from __future__ import annotations

from typing import Any, Iterable, cast

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownFence,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
)


def block_key(block: MarkdownBlock) -> tuple[Any, ...]:
    """What a block shows: its kind, text, styles and code, and those of the blocks inside it."""
    content = block._content
    return (
        type(block),
        content.plain,
        tuple(content.spans),
        getattr(block, "code", None),
        tuple(block_key(child) for child in block._blocks),
    )


class ItemRow(Horizontal):
    """One list item as Textual's lists draw it, `Horizontal(bullet, Vertical(blocks))`, which remembers what the
    item showed when it was built (its blocks leave their `_blocks` lists once mounted)."""

    def __init__(self, item: MarkdownListItem, symbol: str) -> None:
        self.key = block_key(item)
        self.bullet = MarkdownBullet()
        self.bullet.symbol = symbol
        self.body = Vertical(*item._blocks)
        super().__init__(self.bullet, self.body)

    async def update_in_place(self, item: MarkdownListItem) -> bool:
        """Take `item`'s text without rebuilding, when its blocks are of the same kinds as this row's and each
        kind can be updated where it stands; False (nothing changed) otherwise."""
        olds, news = list(self.body.children), item._blocks
        if len(olds) != len(news) or any(type(old) is not type(new) for old, new in zip(olds, news)):
            return False
        if not all(isinstance(old, (MarkdownParagraph, MarkdownFence, GrowingList)) for old in olds):
            return False
        for old, new in zip(olds, news):
            assert isinstance(old, MarkdownBlock) and isinstance(new, MarkdownBlock)
            if isinstance(old, GrowingList) or block_key(old) != block_key(new):
                await old._update_from_block(new)
        self.key = block_key(item)
        return True


class GrowingList:
    """The in-place update shared by the bullet and the numbered list below. A plain mixin, not a widget: Textual
    takes a widget's CSS type names from the first widget class among its bases, which must stay Textual's list."""

    _blocks: list[MarkdownBlock]

    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        raise NotImplementedError

    def _items(self, blocks: Iterable[MarkdownBlock]) -> list[MarkdownListItem]:
        return [block for block in blocks if isinstance(block, MarkdownListItem)]

    def compose(self) -> ComposeResult:
        items = self._items(self._blocks)
        for item, symbol in zip(items, self._symbols(items)):
            yield ItemRow(item, symbol)
        self._blocks.clear()

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        widget = cast(MarkdownBlock, self)
        if type(block) is not type(self):
            await super()._update_from_block(block)  # type: ignore[misc]  (Textual's: replace the whole list)
            return
        widget._copy_context(block)
        items = self._items(block._blocks)
        symbols = self._symbols(items)
        rows = list(widget.query_children(ItemRow))
        kept = 0
        while kept < min(len(rows), len(items)) and rows[kept].key == block_key(items[kept]):
            kept += 1
        if kept < min(len(rows), len(items)) and await rows[kept].update_in_place(items[kept]):
            kept += 1
        if rows[kept:]:
            await widget.remove_children(rows[kept:])
        for row, symbol in zip(rows[:kept], symbols):
            if row.bullet.symbol != symbol:  # numbers got wider (item 10 came): the bullets are wider too
                row.bullet.symbol = symbol
                row.bullet.refresh(layout=True)
        new_rows = [ItemRow(item, symbol) for item, symbol in zip(items[kept:], symbols[kept:])]
        if new_rows:
            await widget.mount_all(new_rows)
        block._blocks.clear()


class GrowingBulletList(GrowingList, MarkdownBulletList):
    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        return [item.bullet for item in items]


class GrowingOrderedList(GrowingList, MarkdownOrderedList):
    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        """Numbers from the first item's, right-aligned to the widest, as Textual numbers them."""
        start = 1
        if items and isinstance(items[0], MarkdownOrderedListItem):
            try:
                start = int(items[0].bullet)
            except ValueError:
                pass
        labels = [f"{number}. " for number in range(start, start + len(items))]
        width = max((len(label) for label in labels), default=0) + 1
        return [label.rjust(width) for label in labels]


GROWING_LISTS = {"bullet_list_open": GrowingBulletList, "ordered_list_open": GrowingOrderedList}
