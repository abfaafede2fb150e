"""How a streamed answer reaches the chat without slowing the keyboard: the one place that decides when text is shown.

Each part of an answer is a Markdown widget written through Textual's `Markdown.get_stream()`
(`AssistantMessage.write`), which merges the pieces that come faster than the Markdown can show them, so pieces may
come one by one or already merged, a thousand a second or ten. Around that, `ChatStream`:

- continues a long answer in a new part at a blank line outside code past `SPLIT_ANSWER_AT` characters, so that the
  chat can leave out the oldest parts of an answer however long it grows (`widgets/chat_window.py`);
- holds the text back while the user types in the prompt (the screen reports each painted edit of the prompt to
  `keystroke`), so that no layout runs under their keys, and holds the view still (what must be shown meanwhile, as
  the end of an answer before the next block, goes in below it). What waits is shown, and the view catches up, at the
  first pause in the typing (`QUIET`), and every `VIEW_HOLD` seconds of typing right after a keystroke is shown, in
  the gap before the next one;
- holds it back too while the user reads above the end of the chat, and shows it when they are back at the end.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

    from anton_tui.tui.widgets.answer import AssistantMessage
    from anton_tui.tui.widgets.chat import ChatView

SPLIT_ANSWER_AT = 1500  # characters; past this a streaming answer continues in a new part at a paragraph break
QUIET = 0.12  # seconds without a keystroke that count as a pause in the typing
QUIET_RECHECK_MIN = 0.005  # the shortest wait before looking again whether the typing has paused
VIEW_HOLD = 1.5  # seconds of typing the text may wait (then it is shown, right after a keystroke)


class ParagraphBreaks:
    """Where a part may end so that a new part can take over: just past a blank line outside a code fence.

    It is fed the text as it streams, in pieces of any size, and keeps of what came before only what it needs:
    whether a fence is open, and the first characters of the unfinished last line."""

    def __init__(self) -> None:
        self.fenced = False
        self._blank = True  # the unfinished last line is blank so far
        self._head = ""  # its first three characters past any indentation

    def feed(self, text: str, start: int = 0) -> int:
        """Take in `text`; returns the offset just past the first blank line outside a fence that ends at or after
        offset `start` of it, or -1. The text after a break is not taken in (it opens the next part: feed it again)."""
        at = 0
        while (newline := text.find("\n", at)) >= 0:
            self._take(text[at:newline])
            blank, head = self._blank, self._head
            self._blank, self._head = True, ""
            at = newline + 1
            if head.startswith(("```", "~~~")):
                self.fenced = not self.fenced
            elif blank and not self.fenced and at >= start:
                return at
        self._take(text[at:])
        return -1

    def _take(self, piece: str) -> None:
        if len(self._head) >= 3:
            return
        if self._blank:
            piece = piece.lstrip()
            if not piece:
                return
            self._blank = False
        self._head += piece[: 3 - len(self._head)]


class ChatStream:
    """Streams answers into `chat` (the transcript widget, which hosts its timers and callbacks)."""

    def __init__(self, chat: ChatView) -> None:
        self.chat = chat
        self.part: AssistantMessage | None = None  # the part being written
        self._cut_part: AssistantMessage | None = None  # the last part, cut at a paragraph break; the answer goes on
        self._length = 0  # characters written to the part
        self._breaks = ParagraphBreaks()
        self._held: list[str] = []  # text held back while the user types or reads above the end
        self._held_since = 0.0
        self._writing = asyncio.Lock()  # one writer at a time, so the text keeps its order
        self._last_keystroke = float("-inf")
        self._quiet_timer: Timer | None = None
        self._held_at: float | None = None  # the view holds still at this scroll position while the user types
        self._view_held_since = 0.0

    # --- text in ---------------------------------------------------------------------------------------------------

    async def write(self, text: str) -> None:
        """A piece of the answer: shown now, or held back while the user types or reads above the end."""
        if not text:
            return
        if not self._held:
            self._held_since = time.monotonic()
        self._held.append(text)  # in order behind whatever waits
        if self.holding:
            return
        async with self._writing:
            if len(self._held) > 1:  # more waited behind it: all at once
                await self._write_held()
            elif self._held:
                await self._write(self._held.pop())

    async def show_held(self) -> None:
        """Show the text held back, in one layout of the screen (see `_write_held`)."""
        async with self._writing:
            await self._write_held()

    async def end(self, full_text: str = "") -> None:
        """The answer is complete: show what is held back and end it; `full_text` fills it when nothing streamed."""
        async with self._writing:
            if self._held:
                await self._write_held()
            part = self.part or self._cut_part  # (the answer may have ended just where its last part was cut)
            self.part = self._cut_part = None
            self._length, self._breaks = 0, ParagraphBreaks()
            if part is not None:
                await part.stop()
                part.end()
            elif full_text.strip():
                from anton_tui.tui.widgets.answer import AssistantMessage

                await self.chat.add_block(AssistantMessage(full_text, ended=True))

    def writing(self, block: Widget) -> bool:
        """Whether `block` is a part of the answer being written (it must stay in the chat meanwhile)."""
        return block is self.part or block is self._cut_part

    async def _write_held(self) -> None:
        """Write what waited, maybe several parts' worth, straight into the Markdown (its stream would spread it over
        several frames, each laying out the screen while a key pressed meanwhile waits); the oldest blocks that then go
        over the budget leave at once."""
        text = "".join(self._held)
        self._held.clear()
        if not text:
            return
        await self._write(text, at_once=True)
        await self.chat.window.trim()

    async def _write(self, text: str, *, at_once: bool = False) -> None:
        while text:
            part = self.part or await self._start_part()
            cut = self._breaks.feed(text, SPLIT_ANSWER_AT - self._length)
            if cut < 0:
                self._length += len(text)
                await part.write(text, at_once=at_once)
                return
            await part.write(text[:cut], at_once=at_once)
            await part.stop()
            self.part, self._cut_part, self._length = None, part, 0
            text = text[cut:]

    async def _start_part(self) -> AssistantMessage:
        from anton_tui.tui.widgets.answer import AssistantMessage  # Markdown costs start-up time; the app preloads it

        part = AssistantMessage(continued=self._cut_part is not None)
        self.part, self._cut_part = part, None
        await self.chat.add_block(part)
        return part

    # --- the user types or reads -----------------------------------------------------------------------------------

    @property
    def typing(self) -> bool:
        return time.monotonic() - self._last_keystroke < QUIET

    @property
    def holding(self) -> bool:
        """Whether streamed text waits now: the user types, or reads above the end of the chat."""
        return self.typing or not self.chat.following

    def keystroke(self) -> None:
        """An edit of the prompt has just been painted. The view holds still while the user types (what must be
        shown meanwhile, as the end of an answer, goes below it); every `VIEW_HOLD` seconds of typing, what waits is
        shown and the view catches up, now, in the gap before the next key."""
        now = time.monotonic()
        self._last_keystroke = now
        chat = self.chat
        if self._held_at is None and chat.following and chat.max_scroll_y > 0:  # (a short chat has nothing to hold)
            self._hold_view(now)
        view_since = self._view_held_since if self._held_at is not None else now
        since = min(self._held_since if self._held else now, view_since)
        if now - since >= VIEW_HOLD and (self._held_at is not None or chat.following):
            self._held_since = self._view_held_since = now
            chat.call_later(self._catch_up)
        if self._quiet_timer is None:
            self._quiet_timer = self.chat.set_timer(QUIET, self._check_quiet)

    def view_moved(self) -> None:
        """The view moved: back at the end of the chat (and not typing), the user sees what was held back."""
        if self._held and not self.holding:
            self.chat.call_later(self.show_held)

    def follow_again(self) -> bool:
        """The view that held still for the typing follows the end again, unless the user scrolled away meanwhile."""
        held_at, self._held_at = self._held_at, None
        chat = self.chat
        if held_at is None or round(chat.scroll_y) != round(held_at):
            return False
        chat.resting.wake_end()
        chat.scroll_end(animate=False, immediate=True)
        return True

    def _hold_view(self, now: float) -> None:
        self._view_held_since, self._held_at = now, self.chat.scroll_y
        self.chat.release_anchor()

    async def _catch_up(self) -> None:
        await self.show_held()
        self.chat.call_after_refresh(self._follow_and_hold)  # once laid out, so that the end is where it goes

    def _follow_and_hold(self) -> None:
        if self.follow_again() and self.typing:
            self._hold_view(time.monotonic())

    def _check_quiet(self) -> None:
        self._quiet_timer = None
        if self.typing:
            # The rest of the pause, measured a moment after `typing` said yes, can be below zero, and a Textual
            # timer set below zero never fires (a hair below, it spins and the app freezes): wait a little at least.
            rest = self._last_keystroke + QUIET - time.monotonic()
            self._quiet_timer = self.chat.set_timer(max(rest, QUIET_RECHECK_MIN), self._check_quiet)
            return
        self.follow_again()
        self.view_moved()
