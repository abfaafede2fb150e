"""Which of the conversation's blocks the chat has mounted: a window over all of them that moves with the view.

Every mounted widget costs each layout pass of the screen however far from the view it is, and a key pressed during
a layout waits for it. So the chat mounts only a window of the conversation's blocks, within a budget of lines
(past `LINES_HIGH`, down to `LINES_LOW`) and of blocks (the chat's `max_blocks`). Every block keeps its place in
`ChatWindow.slots`, mounted or not; one that leaves keeps a recipe to make it again and its words (for find).

- While the user follows the end of the chat, the oldest blocks leave as new ones come.
- When the view comes within a screen of the top of the window, earlier blocks are mounted above it, the view staying
  on the lines it showed (`ChatView.keep_view`); near its bottom, later ones come back. Once past the budget, blocks
  far from the view leave at the end farther from it. `Home` goes to the first block, `End` to the last, and find
  brings a match into the window.
- A block still being written (the streaming answer, a running tool call or command) never leaves: when the window
  moves up the conversation, such blocks and what came after them stay mounted as its tail, and blocks added
  meanwhile join the tail when they are still being written (the others wait, unmounted, for the view).

So the mounted blocks are `slots[first:end]` (the head, around the view) and `slots[tail:]`, with `end <= tail`;
while `end == tail` they are one run down to the end of the conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.content import Content
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.geometry import Region
    from textual.widget import Widget

    from anton_tui.tui.widgets.chat import ChatView

LINES_HIGH, LINES_LOW = 400, 250  # past HIGH lines of mounted blocks, blocks leave until LOW lines are left
FIRST_SHOWN = 12  # blocks mounted at first (a resumed conversation, or a jump to either end)
STEP = 8  # blocks around a block that find brings into the window


@runtime_checkable
class ChatBlock(Protocol):
    """A block of the chat that can leave the widget tree and be made again."""

    @property
    def words(self) -> str:
        """What it says, for find and copy."""
        ...

    def recipe(self) -> Callable[[], Widget]:
        """Makes a new block that shows the same."""
        ...


class Slot:
    """A block's place in the conversation: its widget while it is mounted, else a recipe to make it and its words.
    `kind` is "user", "answer" or "other"; `continued` marks an answer part that goes on from the one before."""

    __slots__ = ("continued", "kind", "recipe", "widget", "words")

    def __init__(
        self,
        kind: str,
        *,
        widget: Widget | None = None,
        recipe: Callable[[], Widget] | None = None,
        words: str = "",
        continued: bool = False,
    ) -> None:
        self.widget, self.recipe, self.words = widget, recipe, words
        self.kind, self.continued = kind, continued


def excess_blocks(heights: list[int], *, max_blocks: int) -> int:
    """How many of the oldest blocks (of these heights, oldest first) to drop: past `max_blocks` blocks, or once the
    transcript passed LINES_HIGH lines, until LINES_LOW are left. The newest block always stays."""
    count = max(len(heights) - max_blocks, 0)
    total = sum(heights[count:])
    if total <= LINES_HIGH:
        return count
    for height in heights[count:-1]:
        if total <= LINES_LOW:
            break
        total -= height
        count += 1
    return count


class ChatWindow:
    """The mounted window over the chat's blocks (see the module docstring); `chat` hosts the widgets."""

    def __init__(self, chat: ChatView) -> None:
        self.chat = chat
        self.slots: list[Slot] = []
        self.first = self.end = self.tail = 0
        self._above: Static | None = None  # "N earlier blocks…", above the head
        self._below: Static | None = None  # "N later blocks…", under the head
        self._scheduled = False
        self._moving = asyncio.Lock()  # one change of the window at a time (each waits on mounts and removals)
        self._asked_again = False

    # --- what is mounted -------------------------------------------------------------------------------------------

    @property
    def joined(self) -> bool:
        """The mounted blocks run down to the end of the conversation."""
        return self.end == self.tail

    @property
    def following(self) -> bool:
        """The view is at the end of the conversation. (Anchored over blocks shorter than the view, Textual scrolls
        to below zero, to show them at its bottom.)"""
        chat = self.chat
        return self.joined and (chat.max_scroll_y <= 0 or round(chat.scroll_y) >= chat.max_scroll_y)

    @property
    def head(self) -> list[Widget]:
        return [widget for slot in self.slots[self.first : self.end] if (widget := slot.widget) is not None]

    @property
    def mounted(self) -> list[Widget]:
        """The mounted blocks, in order."""
        tail = self.slots[self.tail :] if not self.joined else []
        return self.head + [widget for slot in tail if (widget := slot.widget) is not None]

    def words(self, slot: Slot) -> str:
        return self.chat.words_of(slot.widget) if slot.widget is not None else slot.words

    # --- blocks in -------------------------------------------------------------------------------------------------

    async def add(self, widget: Widget, kind: str, *, continued: bool = False) -> None:
        """A new block at the end of the conversation (`kind` and `continued` as a `Slot` has them): mounted when the
        window reaches the end or the block is still being written, else kept for when the view comes to it."""
        chat = self.chat
        async with self._moving:
            slot, index = Slot(kind, widget=widget, continued=continued), len(self.slots)
            self.slots.append(slot)
            if self.joined:
                self.end = self.tail = index + 1
            elif self.tail == index and not chat.live(widget):  # no tail: it waits for the view to come
                self.tail = index + 1
                slot.widget, slot.recipe, slot.words = None, _given(widget), chat.words_of(widget)
                await self._update_notes()
                return
            await chat.mount(widget)
        self.request()

    async def start(self, heading: Widget, slots: list[Slot], shown: Sequence[Widget]) -> None:
        """Show a conversation anew: `heading` on top, and of `slots` the last ones, made as `shown`; all mounted at
        once (one layout pass)."""
        async with self._moving:
            self._reset()
            self.slots = slots
            self.first, self.end = len(slots) - len(shown), len(slots)
            self.tail = self.end
            for slot, widget in zip(slots[self.first :], shown, strict=True):
                slot.widget, slot.recipe = widget, None
            above = self._note_above()
            await self.chat.mount_all([heading, *([above] if above is not None else []), *shown])

    async def clear(self) -> None:
        """Forget every block and take every widget out of the chat."""
        async with self._moving:
            self._reset()
            await self.chat.remove_children()

    def _reset(self) -> None:
        self.slots = []
        self.first = self.end = self.tail = 0
        self._above = self._below = None

    # --- moving the window -----------------------------------------------------------------------------------------

    def request(self) -> None:
        """Look, once the screen is laid out (sizes and places are known then), whether the window should move: the
        view moved, or the blocks changed."""
        if not self._scheduled:
            self._scheduled = True
            self.chat.call_after_refresh(self._rebalance)

    async def _rebalance(self) -> None:
        self._scheduled = False
        chat = self.chat
        if self._moving.locked():
            self._asked_again = True  # looked at again once the move under way is done
            return
        if not chat.is_attached or not chat.scrollable_content_region.height:
            return  # (not displayed: sizes and places mean nothing now; its next layout asks again)
        async with self._moving:
            self._asked_again = False
            moved = await self._step()
        if moved or self._asked_again:
            self.request()

    async def _step(self) -> bool:
        """One move of the window, if one is due; whether one was made."""
        moved = await self._move_step()
        self.chat.resting.settle()
        return moved

    async def _move_step(self) -> bool:
        chat = self.chat
        mounted = self.mounted
        heights = [widget.outer_size.height + 1 for widget in mounted]  # (+ the blank line between blocks)
        lines, count = sum(heights), len(mounted)
        view = max(chat.scrollable_content_region.height, 1)
        top = round(chat.scroll_y)
        if self.following:
            if count > chat.max_blocks or lines > LINES_HIGH:
                drop = min(excess_blocks(heights, max_blocks=chat.max_blocks), self._settled_run(mounted))
                if drop:
                    await self._move(self.first + drop, self.end)
                    return True
            elif self.first and top < view and count < chat.max_blocks and lines < LINES_LOW:
                await chat.keep_view(self._move, self._earlier(2 * view), self.end)  # the window is short
                return True
            return False
        places = chat.places()
        head = [widget for widget in self.head if widget in places]
        if len(head) != self.end - self.first:
            return False  # not laid out yet
        bottom = places[head[-1]].bottom if head else 0
        if not self.joined and head and top >= bottom:  # the view is past the head, on the tail: join them there
            await chat.keep_view(self._move, max(self.tail - FIRST_SHOWN, 0), len(self.slots))
            return True
        start, stop = self.first, self.end
        if self.first and top < view:
            start = self._earlier(2 * view)
        elif not self.joined and bottom - (top + view) < view:
            stop = self._later(2 * view)
        lines += sum(self._estimate(slot) for slot in (*self.slots[start : self.first], *self.slots[self.end : stop]))
        count += (self.first - start) + (stop - self.end)
        if lines > LINES_HIGH or count > chat.max_blocks:
            start, stop = self._drop_far(head, places, start, stop, top, view, lines, count)
        if (start, stop) == (self.first, self.end):
            if not self.joined and self.tail < len(self.slots) and not any(map(chat.live, mounted[len(head) :])):
                await self._move(start, stop)  # the tail is written: it leaves
                return True
            return False
        await chat.keep_view(self._move, start, stop)
        return True

    def _drop_far(
        self, head: list[Widget], places: dict[Widget, Region], start: int, stop: int, top: int, view: int, lines: int,
        count: int,
    ) -> tuple[int, int]:  # fmt: skip
        """Past the budget while the user reads: blocks more than two screens from the view leave, at the end away
        from the one the window grows at (else the end farther from the view)."""
        chat, margin = self.chat, 2 * view
        bottom = places[head[-1]].bottom if head else 0
        above = start == self.first and (stop > self.end or top > bottom - (top + view))
        order = head if above else list(reversed(head))
        for widget in order:
            if lines <= LINES_LOW and count <= chat.max_blocks:
                break
            place = places[widget]
            if (place.bottom >= top - margin) if above else (place.y <= top + view + margin):
                break
            lines -= widget.outer_size.height + 1
            count -= 1
            if above:
                start += 1
            else:
                stop -= 1
        return start, stop

    def _estimate(self, slot: Slot) -> int:
        """About how many lines a block takes: as laid out, or (more, when it has more words than were laid out) its
        words wrapped to the chat's width."""
        width = max(self.chat.scrollable_content_region.width - 4, 20)
        estimate = 2 + sum(1 + len(line) // width for line in self.words(slot).split("\n"))
        laid_out = slot.widget.outer_size.height + 1 if slot.widget is not None else 0
        return max(laid_out, estimate)

    def _earlier(self, lines: int) -> int:
        """Where the head starts to take about `lines` more lines before its first block."""
        start, total = self.first, 0
        while start > 0 and total < lines:
            start -= 1
            total += self._estimate(self.slots[start])
        return start

    def _later(self, lines: int) -> int:
        """Where the head stops to take about `lines` more lines after its last block (at most up to the tail)."""
        stop, total = self.end, 0
        while stop < self.tail and total < lines:
            total += self._estimate(self.slots[stop])
            stop += 1
        return stop

    async def trim(self) -> None:
        """Following the end, past the budget: the oldest blocks leave now, the newest counted as they will be laid
        out (for text written with no layout since)."""
        async with self._moving:
            if not self.following:
                return
            heights = [self._estimate(slot) for slot in self.slots[self.first : self.end]]
            drop = min(excess_blocks(heights, max_blocks=self.chat.max_blocks), self._settled_run(self.mounted))
            if drop:
                await self._move(self.first + drop, self.end)

    def _settled_run(self, mounted: list[Widget]) -> int:
        """How many of the oldest mounted blocks are not being written."""
        return next((n for n, widget in enumerate(mounted) if self.chat.live(widget)), len(mounted))

    async def go_to_start(self) -> None:
        """Show the first blocks of the conversation, from the top."""
        chat = self.chat
        async with self._moving:
            chat.release_anchor()
            with chat.app.batch_update():
                if self.first:
                    await self._move(0, min(FIRST_SHOWN, self.end))
                chat.scroll_home(animate=False, immediate=True)
        self.request()

    async def go_to_end(self) -> None:
        """Show the last blocks of the conversation, at the end (which the view then follows)."""
        chat = self.chat
        async with self._moving:
            with chat.app.batch_update():
                if not self.joined:
                    await self._move(max(self.tail - FIRST_SHOWN, 0), len(self.slots))
                chat.resting.wake_end()
                chat.scroll_end(animate=False, immediate=True)
        self.request()

    async def reveal(self, slot: Slot) -> Widget | None:
        """Mount `slot` (with blocks around it) if it is not; its widget."""
        async with self._moving:
            if slot.widget is None and slot in self.slots:
                index = self.slots.index(slot)
                self.chat.release_anchor()
                await self._move(max(index - STEP // 2, 0), index + STEP)
        self.request()
        return slot.widget

    async def _move(self, start: int, stop: int) -> None:
        """Make `slots[start:stop]` the head. Blocks still being written stay mounted, with what follows them, as the
        tail; when that reaches into the head, head and tail join down to the end."""
        chat, slots = self.chat, self.slots
        was = [n for n in (*range(self.first, self.end), *range(self.tail, len(slots))) if slots[n].widget is not None]
        live = next((n for n in was if chat.live(slots[n].widget)), len(slots))
        stop = min(stop, len(slots))
        if live <= stop:
            stop = live = len(slots)
        keep = set(range(start, stop)) | set(range(live, len(slots)))
        leaving: list[Widget] = []
        for n in was:
            if n not in keep and (widget := slots[n].widget) is not None:
                slots[n].recipe, slots[n].words, slots[n].widget = chat.recipe_of(widget), chat.words_of(widget), None
                leaving.append(widget)
        if leaving:
            await chat.remove_children(leaving)
        self.first, self.end, self.tail = start, stop, live
        for run in _runs([n for n in sorted(keep) if slots[n].widget is None]):
            await self._mount_run(run)
        await self._update_notes()

    async def _mount_run(self, run: range) -> None:
        """Make and mount `slots[run]` next to a mounted neighbour in the head or the tail."""
        chat, slots = self.chat, self.slots
        part = range(self.first, self.end) if run.start < self.end else range(self.tail, len(slots))
        widgets = [self._make(slots[n]) for n in run]
        before_run = slots[run.start - 1].widget if run.start - 1 in part else None
        after_run = slots[run.stop].widget if run.stop in part else None
        if before_run is not None:
            await chat.mount_all(widgets, after=before_run)
        elif after_run is not None:
            await chat.mount_all(widgets, before=after_run)
        elif part.start == self.first and self._below is not None and self._below.parent is chat:
            await chat.mount_all(widgets, before=self._below)
        elif part.start == self.first and self.tail < len(slots) and (next_block := slots[self.tail].widget):
            await chat.mount_all(widgets, before=next_block)
        else:
            await chat.mount_all(widgets)

    def _make(self, slot: Slot) -> Widget:
        recipe = slot.recipe
        assert recipe is not None
        slot.widget, slot.recipe = recipe(), None
        return slot.widget

    # --- the notes at the window's edges ---------------------------------------------------------------------------

    def _note_above(self) -> Static | None:
        if not self.first:
            return None
        text = Content(f"{self.first:,} earlier blocks are hidden: scroll up or press Home to see them again.")
        if self._above is None:
            self._above = Static(text, classes="pruned-note")
        else:
            self._above.update(text)
        return self._above

    async def _update_notes(self) -> None:
        chat = self.chat
        above, had_above = self._note_above(), self._above
        if above is None and had_above is not None:
            self._above = None
            await had_above.remove()
        elif above is not None and above.parent is not chat:
            after = chat.heading if chat.heading is not None and chat.heading.parent is chat else None
            await (chat.mount(above, after=after) if after is not None else chat.mount(above, before=0))
        hidden = self.tail - self.end
        if not hidden:
            if self._below is not None:
                below, self._below = self._below, None
                await below.remove()
            return
        text = Content(f"{hidden:,} later blocks are hidden: scroll down or press End to see them again.")
        if self._below is None:
            self._below = Static(text, classes="pruned-note")
        else:
            self._below.update(text)
        head = self.head
        if self._below.parent is chat:
            if head and chat.children.index(self._below) == chat.children.index(head[-1]) + 1:
                return
            await self._below.remove()
            self._below = Static(text, classes="pruned-note")
        if head:
            await chat.mount(self._below, after=head[-1])
        elif self.tail < len(self.slots) and (first_tail := self.slots[self.tail].widget) is not None:
            await chat.mount(self._below, before=first_tail)
        else:
            await chat.mount(self._below)


def _given(widget: Widget) -> Callable[[], Widget]:
    """The recipe of a block made but never mounted: the block itself."""
    return lambda: widget


def _runs(numbers: list[int]) -> list[range]:
    """Ascending `numbers` as runs of consecutive ones."""
    runs: list[range] = []
    for n in numbers:
        if runs and runs[-1].stop == n:
            runs[-1] = range(runs[-1].start, n + 1)
        else:
            runs.append(range(n, n + 1))
    return runs
