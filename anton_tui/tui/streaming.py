"""How a streaming answer reaches the chat without slowing the keyboard: the one place that decides when text is shown.

A fast model sends hundreds of pieces of text a second. Handing text to Markdown costs a parse and, when new blocks
appear, a layout of the whole screen, during which a key pressed waits. So `ChatStream`:

- gathers the pieces (`write`; the only place streamed text is merged) and hands them to the answer's Markdown at
  most every `FLUSH_EVERY` seconds, the first words of an answer at once;
- continues a long answer in a new part (a new Markdown widget) at a paragraph break past `SPLIT_ANSWER_AT`
  characters, so a hand-off re-parses a bounded amount of text however long the answer grows;
- has each finished part keep its rendered lines and drop its Markdown once the screen has laid it out
  (`AssistantMessage.keep_lines`): each layout pass visits every widget on the screen, and a Markdown part is dozens;
- while the user types (the screen reports each painted edit of the prompt to `keystroke`), holds the view still
  instead of following new text (following re-renders the whole view), catching up at the first pause in the typing
  (`QUIET`) or every `VIEW_HOLD` seconds; and runs its costly steps (a hand-off, keeping a part's lines) one per
  keystroke, right after it is shown, in the gap before the next key, the rest at the pause;
- keeps the transcript to a budget: past `LINES_HIGH` lines (or the chat's block limit) the oldest blocks leave the
  widget tree until `LINES_LOW` lines are left (the conversation itself stays in the session).

The widgets stay plain: a part is Textual's Markdown written through its public `append` (`widgets/answer.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.geometry import Size
    from textual.timer import Timer
    from textual.widget import Widget

    from anton_tui.tui.widgets.answer import AssistantMessage
    from anton_tui.tui.widgets.chat import ChatView

FLUSH_EVERY = 0.3  # seconds; streamed text is handed to Markdown at most this often (each hand-off may lay out)
SPLIT_ANSWER_AT = 1500  # characters; past this a streaming answer continues in a new part at a paragraph break
QUIET = 0.12  # seconds without a keystroke that count as a pause in the typing
QUIET_RECHECK_MIN = 0.005  # the shortest wait before looking again whether the typing has paused
VIEW_HOLD = 1.5  # seconds the view may stay put while the user types (then it catches up, and holds again)
LINES_HIGH, LINES_LOW = 800, 500  # past HIGH lines of transcript, the oldest blocks go until LOW lines are left
KEEP_QUICK_TRIES = 20  # screen refreshes to wait for a finished part to be laid out before keeping its lines
KEEP_RETRY_S = 0.5  # after those, how often to look again (while the chat is hidden, say)

Job = Callable[[], Awaitable[Any] | Any]


def paragraph_break(written: str, text: str, start: int = 0) -> int:
    """Where `text` (to follow `written`) may be cut so that a new part can take over: after the first blank line at
    or after `start` that is not inside a code fence. -1 when there is none."""
    fences = written.count("```")
    cut = text.find("\n\n", max(start, 0))
    while cut >= 0:
        if (fences + text.count("```", 0, cut)) % 2 == 0:
            return cut + 2
        cut = text.find("\n\n", cut + 1)
    return -1


def excess_blocks(heights: list[int], *, max_blocks: int) -> int:
    """How many of the oldest blocks (of these heights, oldest first) to drop: past `max_blocks` blocks, or once the
    transcript passed LINES_HIGH lines, until LINES_LOW are left. Every mounted widget costs each layout pass,
    however far above the view it is. The newest block always stays."""
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


class ChatStream:
    """Streams answers into `chat` (the transcript widget, which hosts its timers and callbacks)."""

    def __init__(self, chat: ChatView) -> None:
        self.chat = chat
        self.pending = ""  # streamed text not yet handed to the answer's Markdown
        self.part: AssistantMessage | None = None  # the part being written
        self._cut_part: AssistantMessage | None = None  # the last part, cut at a paragraph break; the answer goes on
        self._writing = asyncio.Lock()  # one hand-off at a time: the timer's and the end of an answer's
        self._timer: Timer | None = None  # the next hand-off
        self._waiting: list[Job] = []  # costly steps waiting for a gap in the typing
        self._last_keystroke = float("-inf")
        self._quiet_timer: Timer | None = None
        self._held_since: float | None = None  # the view stopped following new text while the user types
        self._held_at = 0.0  # the scroll position it stopped at
        self._trim_scheduled = False

    # --- text in ---------------------------------------------------------------------------------------------------

    def write(self, text: str) -> None:
        """A piece of the answer. It is shown at the next hand-off (at once for the first words of an answer)."""
        if not text:
            return
        self.pending += text
        if self._timer is not None or self.hand_off in self._waiting:
            return
        if self.part is None and self._cut_part is None:
            self.chat.call_later(self.hand_off)
        else:
            self._timer = self.chat.set_timer(FLUSH_EVERY, self._hand_off_due)

    def _hand_off_due(self) -> None:
        self._timer = None
        self.run_in_gap(self.hand_off)

    def run_in_gap(self, job: Job) -> None:
        """Run the costly step `job` next, unless the user is typing: then right after a keystroke is shown, one
        per keystroke (or at the pause in the typing); once however often asked for."""
        if not self.typing and not self._waiting:
            self.chat.call_later(job)
        elif job not in self._waiting:
            self._waiting.append(job)

    async def hand_off(self) -> None:
        """Give the waiting text to the answer's Markdown. A long answer is cut at a paragraph break: the part is
        finished and the rest waits for the next hand-off, which starts the next part (one costly step at a time)."""
        async with self._writing:
            if self.hand_off in self._waiting:
                self._waiting.remove(self.hand_off)
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            text, self.pending = self.pending, ""
            if not text or not self.chat.is_attached:  # the app is closing
                return
            part = self.part or await self._start_part()
            if not part.is_attached:
                return
            written = part.source
            cut = -1
            if len(written) + len(text) > SPLIT_ANSWER_AT:
                cut = paragraph_break(written, text, SPLIT_ANSWER_AT - len(written))
            if cut < 0:
                await part.append(text)
                return
            await part.append(text[:cut])
            self.pending = text[cut:] + self.pending  # more may have come while this waited
            self.part, self._cut_part = None, part
            self._finish(part, last=False)
            if self.pending:
                self.run_in_gap(self.hand_off)

    async def _start_part(self) -> AssistantMessage:
        from anton_tui.tui.widgets.answer import AssistantMessage  # Markdown costs start-up time; the app preloads it

        part = AssistantMessage(continued=self._cut_part is not None)
        self.part, self._cut_part = part, None
        await self.chat.add_block(part)
        return part

    async def end(self, full_text: str = "") -> None:
        """The answer is complete: show what still waits and finish it; `full_text` fills it when nothing streamed."""
        while True:
            while self.pending:
                await self.hand_off()
            async with self._writing:
                if self.pending:  # a hand-off that ran while this waited cut a part and left the rest
                    continue
                await self._finish_answer(full_text)
                return

    async def _finish_answer(self, full_text: str) -> None:
        part, cut_part = self.part, self._cut_part
        self.part = self._cut_part = None
        if part is not None:
            self._finish(part)
        elif cut_part is not None:
            self._finish(cut_part)  # the answer ended exactly where its last part was cut
        elif full_text.strip():
            from anton_tui.tui.widgets.answer import AssistantMessage

            part = AssistantMessage(full_text)
            await self.chat.add_block(part)
            self._finish(part)

    # --- finished parts keep their lines ---------------------------------------------------------------------------

    def finished(self, part: AssistantMessage) -> None:
        """A whole answer was added at once (a resumed conversation): finish it, and keep its lines once drawn."""
        self._finish(part)

    def _finish(self, part: AssistantMessage, *, last: bool = True) -> None:
        if part.finish(last=last):
            self.keep_lines(part)
        # else: it turns back into Markdown first, and asks for this again (`AssistantMessage.Thawed`)

    def keep_lines(self, part: AssistantMessage, tries: int = 0) -> None:
        """Have the finished `part` keep its rendered lines once the screen has laid it all out (in a gap)."""

        def look() -> None:
            ready = part.ready_to_keep_lines()
            if ready:
                self.run_in_gap(keep)
            elif ready is False:
                if tries < KEEP_QUICK_TRIES:
                    self.keep_lines(part, tries + 1)
                else:
                    self.chat.set_timer(KEEP_RETRY_S, lambda: self.keep_lines(part, tries))

        async def keep() -> None:
            ready = part.ready_to_keep_lines()  # things may have moved while this waited for its turn
            if ready:
                await part.keep_lines()
            elif ready is False:
                self.keep_lines(part, tries)

        self.chat.call_after_refresh(look)

    # --- the user types --------------------------------------------------------------------------------------------

    @property
    def typing(self) -> bool:
        return time.monotonic() - self._last_keystroke < QUIET

    @property
    def view_held(self) -> bool:
        return self._held_since is not None

    def keystroke(self) -> None:
        """An edit of the prompt has just been painted. The view holds still while the user types; a hand-off that
        is due runs now, in the gap before the next key."""
        now = time.monotonic()
        self._last_keystroke = now
        chat = self.chat
        if self._held_since is None:
            if chat.is_anchored and chat.scroll_y >= chat.max_scroll_y:
                self._hold_view(now)
        elif now - self._held_since >= VIEW_HOLD and self.follow_again():
            self._hold_view(now)
        if self._waiting:
            chat.call_later(self._waiting.pop(0))
        if self._quiet_timer is None:
            self._quiet_timer = chat.set_timer(QUIET, self._check_quiet)

    def _hold_view(self, now: float) -> None:
        self._held_since, self._held_at = now, self.chat.scroll_y
        self.chat.release_anchor()

    def follow_again(self) -> bool:
        """Catch up with the answer and follow it again, unless the user scrolled away meanwhile."""
        if self._held_since is None:
            return False
        self._held_since = None
        chat = self.chat
        if round(chat.scroll_y) != round(self._held_at):
            return False
        chat.scroll_end(animate=False, immediate=True)
        chat.call_after_refresh(chat.vertical_scrollbar.refresh)  # the thumb follows the layout's scroll too
        return True

    def _check_quiet(self) -> None:
        self._quiet_timer = None
        if self.typing:
            # The rest of the pause, measured a moment after `typing` said yes, can be below zero, and a Textual
            # timer set below zero never fires (a hair below, it spins and the app freezes): wait a little at least.
            rest = self._last_keystroke + QUIET - time.monotonic()
            self._quiet_timer = self.chat.set_timer(max(rest, QUIET_RECHECK_MIN), self._check_quiet)
            return
        jobs, self._waiting = self._waiting, []
        for job in jobs:
            self.chat.call_later(job)
        self.follow_again()

    # --- the transcript's budget -----------------------------------------------------------------------------------

    def transcript_resized(self, size: Size) -> None:
        """The transcript's height changed (heights are only known after layout): past the budget, trim it soon."""
        if size.height > LINES_HIGH and not self._trim_scheduled:
            self._trim_scheduled = True
            self.chat.call_later(self._trim)

    async def _trim(self) -> None:
        self._trim_scheduled = False
        await self.chat.prune(self.oldest_to_drop())

    def oldest_to_drop(self) -> list[Widget]:
        """The oldest blocks that put the transcript over its budget (block count or lines)."""
        blocks = self.chat.blocks
        heights = [block.outer_size.height for block in blocks]
        return blocks[: excess_blocks(heights, max_blocks=self.chat.max_blocks)]
