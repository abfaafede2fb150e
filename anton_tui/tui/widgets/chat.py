"""The chat transcript: user messages, streamed answers, tool calls, memory and self-check notices, errors.

Each assistant message streams into a Markdown widget through a `MarkdownStream`, so fast token streams are batched
instead of re-rendering the whole answer per chunk; a long one is split into parts, and a finished part keeps only
its rendered lines (see `answer.py`). The view stays anchored to the bottom while the user is there and
leaves them alone once they scroll up. Past `max_blocks` the oldest blocks leave the widget tree (the conversation
itself stays in the session).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from anton_tui.tui.css import stylesheet
from anton_tui.tui.widgets.tool_block import ToolCallBlock
from anton_tui.tui.widgets.typing_gaps import TypingGaps

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widgets.markdown import MarkdownStream

    from anton_tui.agent.events import (
        AccNudge,
        HistoryNotSaved,
        HistoryRepaired,
        HistorySummarised,
        HistoryTrimmed,
        MemoryWritten,
        SecretsRemoved,
        ToolCallFinished,
        ToolCallStarted,
    )
    from anton_tui.tui.commands import CommandOutput
    from anton_tui.tui.widgets.answer import AssistantMessage

MAX_BLOCKS = 200
SPLIT_ANSWER_AT = 1500  # characters; past this a streaming answer continues in a fresh Markdown widget
FLUSH_EVERY = 0.3  # seconds; streamed text is handed to Markdown at most this often (each hand-off may lay out)
VIEW_HOLD = 1.5  # seconds the view may stay put while the user types (then it catches up, and holds again)
LINES_HIGH, LINES_LOW = 800, 500  # past HIGH lines of transcript, the oldest blocks go until LOW lines are left


def memory_notice(event: MemoryWritten) -> Content:
    """A "Remembered" heading naming who wrote, then one line per memory written."""
    lines = [
        Content.from_markup("[$text-muted]$where[/] $text", where=f"{engram.scope}·{engram.kind}", text=engram.text)
        for engram in event.engrams
    ] or [Content(action) for action in event.actions]
    head = Content.from_markup("[b $text-success]Remembered[/] [$text-muted]($producer)[/]", producer=event.producer)
    return Content("\n").join([head, *lines])


def acc_notice(event: AccNudge) -> Content:
    """A lesson the self-check (ACC) fired, as a nudge during the turn or as a new rule at its end."""
    return Content.from_markup(
        "[b $text-warning]$label[/] [$text-muted]($detector)[/] $rule",
        label="Self-check" if event.nudged else "New rule from self-check",
        detector=str(getattr(event.lesson, "detector", "acc")),
        rule=str(getattr(event.lesson, "rule", event.lesson)),
    )


def secrets_notice(event: SecretsRemoved) -> Content:
    """What secrets were taken out, and of what: a memory being saved, or a cell's output before the model read it."""
    from anton_tui.redact import describe

    if event.pad is not None:
        head, tail = f"Hidden from the model in {event.where}:", " (the scratchpad pane shows the raw output)"
    else:
        head, tail = f"Removed before saving to {event.where}:", ""
    return Content.from_markup(
        "[b $text-warning]Secrets[/] $head $kinds [$text-muted]($producer)$tail[/]",
        head=head,
        kinds=describe(event.kinds),
        producer=event.producer,
        tail=tail,
    )


def repair_notice(event: HistoryRepaired) -> Content:
    return Content.from_markup(
        "[$text-warning]History repaired:[/] $reason ($count unfinished tool calls closed)",
        reason=event.reason,
        count=str(event.sealed_count),
    )


def history_notice(event: "HistorySummarised | HistoryTrimmed | HistoryNotSaved") -> Content:
    """One line for a change to the conversation's history (the full summary is in `event.summary`)."""
    from anton_tui.agent.events import HistorySummarised, HistoryTrimmed

    if isinstance(event, HistorySummarised):
        return Content.from_markup(
            "[b $text-muted]Earlier turns summarised[/] [$text-muted]($folded messages, about $before → $after "
            "tokens)[/]",
            folded=str(event.folded),
            before=f"{event.tokens_before:,}",
            after=f"{event.tokens_after:,}",
        )
    if isinstance(event, HistoryTrimmed):
        return Content.from_markup("[$text-warning]Earlier turns dropped:[/] $notice", notice=event.notice)
    return Content.from_markup("[$text-warning]Conversation not saved:[/] $reason", reason=event.reason)


class CommandReply(Vertical):
    """A slash command and its reply; the reply is a Rich renderable (a table, Markdown or plain text)."""

    def __init__(self, line: str, output: "CommandOutput") -> None:
        super().__init__(classes=f"chat-block -{output.level}")
        self.line = line
        self.output = output

    def compose(self):
        yield Static(Content(self.line), classes="command-line")
        yield Static(self.output.renderable, classes="command-output")


class UserMessage(Static):
    """What the user sent, shown verbatim."""

    def __init__(self, text: str) -> None:
        super().__init__(Content(text), classes="chat-block")
        self.text = text


def paragraph_break(written: str, chunk: str, start: int = 0) -> int:
    """Where `chunk` may be cut so that a new Markdown widget can take over: after the first blank line at or after
    `start` that is not inside a code fence. -1 when there is none."""
    fences = written.count("```")
    cut = chunk.find("\n\n", max(start, 0))
    while cut >= 0:
        if (fences + chunk.count("```", 0, cut)) % 2 == 0:
            return cut + 2
        cut = chunk.find("\n\n", cut + 1)
    return -1


class Notice(Static):
    """A one-line event inside the conversation: memory written, a self-check nudge, a cancelled turn."""

    def __init__(self, content: Content, kind: str) -> None:
        super().__init__(content, classes=f"chat-block -{kind}")
        self.kind = kind


class ErrorBlock(Vertical):
    """An error the user should read, with a Retry button when sending the message again may help."""

    class RetryRequested(Message):
        """The user asked to send the last message again."""

    def __init__(self, message: str, retryable: bool) -> None:
        super().__init__(classes="chat-block")
        self.message = message
        self.retryable = retryable

    def compose(self):
        yield Static(Content.from_markup("[b]Error[/b]  $message", message=self.message), classes="error-text")
        if self.retryable:
            with Horizontal(classes="error-actions"):
                yield Button("Retry", variant="warning", compact=True, classes="retry")

    @on(Button.Pressed, ".retry")
    def _retry(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.RetryRequested())


class ChatView(VerticalScroll):
    """The scrolling transcript; the screen feeds it engine events through the methods below."""

    DEFAULT_CSS = stylesheet(__file__, "chat.tcss")
    SCOPED_CSS = False  # the rules style the widgets inside it too, as written

    HELP = """\
## Chat

The conversation. Your messages, Anton's answers (streamed as they are written), and one compact line per tool call:
press **Enter** or click on a tool line to expand it and see the code it ran or what it found. Notices show memories
being written and self-check nudges where they happened. Errors carry a **Retry** button.

While you are at the bottom the view follows new text; scroll up to read and it stays put until you scroll back down.
While you type in the prompt it holds still too, and catches up when you pause (or every second and a half).
Only the latest blocks are kept on screen; the whole conversation stays in the session.
"""

    BINDINGS = [
        Binding("c", "copy_answer", "Copy answer", id="chat.copy-answer"),
        Binding("end", "follow", "Follow", id="chat.follow", show=False),
    ]

    ALLOW_MAXIMIZE = True

    def __init__(self, *, max_blocks: int = MAX_BLOCKS, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_blocks = max_blocks
        self.pruned_count = 0
        self._stream: MarkdownStream | None = None
        self._written = ""  # what the current Markdown widget of the streaming answer holds
        self._continue_answer = False  # the answer was cut exactly at a paragraph break; its next piece continues it
        self._pending = ""  # streamed text not yet handed to the Markdown widget
        self._flush_timer: Timer | None = None
        self._flush_queued = False  # a hand-off is due and waits for a gap between keystrokes
        self.gaps = TypingGaps(self, on_pause=self._typing_paused)
        self._view_held_since: float | None = None  # the view stopped following new text while the user types
        self._view_held_at = 0.0  # the scroll position it stopped at
        self._writing = asyncio.Lock()
        self._prune_scheduled = False
        self._answer: AssistantMessage | None = None
        self._running_tools: dict[str, ToolCallBlock] = {}

    def on_mount(self) -> None:
        self.anchor()

    @property
    def blocks(self) -> list[Widget]:
        return [child for child in self.children if child.has_class("chat-block")]

    async def _add(self, block: Widget) -> None:
        await self.mount(block)
        blocks = self.blocks
        excess = len(blocks) - self.max_blocks
        if excess > 0:
            await self._prune(blocks[:excess])

    def watch_virtual_size(self, size: Size) -> None:
        """The transcript grew past the line budget (heights are only known after layout): prune soon."""
        if size.height > LINES_HIGH and not self._prune_scheduled:
            self._prune_scheduled = True
            self.call_later(self._keep_to_line_budget)

    async def _keep_to_line_budget(self) -> None:
        self._prune_scheduled = False
        blocks = self.blocks
        excess = self._excess_lines(blocks)
        if excess > 0:
            await self._prune(blocks[:excess])

    def _excess_lines(self, blocks: list[Widget]) -> int:
        """How many of the oldest blocks to drop so the transcript is back under LINES_LOW once it passed
        LINES_HIGH: every mounted widget costs each layout pass, however far above the view it is."""
        heights = [block.outer_size.height for block in blocks]
        total = sum(heights)
        if total <= LINES_HIGH:
            return 0
        count = 0
        for height in heights[:-1]:  # the newest block always stays
            if total <= LINES_LOW:
                break
            total -= height
            count += 1
        return count

    async def _prune(self, oldest: list[Widget]) -> None:
        self.pruned_count += len(oldest)
        for block in oldest:
            if isinstance(block, ToolCallBlock):
                self._running_tools.pop(block.call_id, None)
        await self.remove_children(oldest)
        await self._show_pruned_note()

    async def _show_pruned_note(self) -> None:
        text = Content(f"{self.pruned_count:,} earlier blocks are hidden; the conversation is kept in the session.")
        notes = self.query_children(".pruned-note")
        if notes:
            notes.first(Static).update(text)
        else:
            await self.mount(Static(text, classes="pruned-note"), before=0)

    async def add_user_message(self, text: str) -> None:
        await self.end_answer()
        if self._view_held_since is not None:  # held for the typing of this very message
            self._follow_again()
        await self._add(UserMessage(text))

    async def append_answer(self, chunk: str) -> None:
        """Stream a piece of the answer. Pieces are gathered and handed on every FLUSH_EVERY seconds: each hand-off
        may mount new Markdown blocks, and every mount lays out the whole screen, which would otherwise starve the
        keyboard while a fast model streams. While the user types, hand-offs fit between keystrokes (`gaps`)."""
        if not chunk:
            return
        self._pending += chunk
        if self._flush_timer is not None or self._flush_queued:
            return
        if self._stream is None and not self._continue_answer:  # the first words of an answer show at once
            await self.flush_answer()
        else:
            self._flush_timer = self.set_timer(FLUSH_EVERY, self._queue_flush)

    def _queue_flush(self) -> None:
        self._flush_timer = None
        self._flush_queued = True
        self.gaps.run(self.flush_answer)

    def note_keystroke(self) -> None:
        """An edit of the prompt has just been painted (the screen calls this). While the user types, the view
        stops following new text (following re-renders the whole view) until the typing pauses, or for at most
        VIEW_HOLD seconds; chat updates fit between keystrokes (`TypingGaps`)."""
        now = time.monotonic()
        if self._view_held_since is None:
            if self.is_anchored and self.scroll_y >= self.max_scroll_y:
                self._hold_view(now)
        elif now - self._view_held_since >= VIEW_HOLD and self._follow_again():
            self._hold_view(now)
        self.gaps.keystroke()

    def _hold_view(self, now: float) -> None:
        self._view_held_since, self._view_held_at = now, self.scroll_y
        self.release_anchor()

    def _follow_again(self) -> bool:
        """Catch up with the answer and follow it again, unless the user scrolled away meanwhile."""
        held_at, self._view_held_since = self._view_held_at, None
        if round(self.scroll_y) != round(held_at):
            return False
        self.scroll_end(animate=False, immediate=True)
        self.call_after_refresh(self.vertical_scrollbar.refresh)  # the thumb follows the layout's scroll too
        return True

    def _typing_paused(self) -> None:
        if self._view_held_since is not None:
            self._follow_again()

    async def flush_answer(self) -> None:
        # The timer calls this on the chat's own message loop while the screen's handlers may be mid-append.
        async with self._writing:
            self._flush_queued = False
            if self._flush_timer is not None:
                self._flush_timer.stop()
                self._flush_timer = None
            chunk, self._pending = self._pending, ""
            if chunk:
                await self._append_now(chunk)

    async def _append_now(self, chunk: str) -> None:
        """A long answer is continued in a new Markdown widget at a paragraph break, so each update re-renders a
        bounded amount of text however long the answer grows. The new widget takes the rest at the next hand-off:
        one costly step at a time."""
        if self._stream is None:
            await self._start_stream(continued=self._continue_answer)
        cut = -1
        if len(self._written) + len(chunk) > SPLIT_ANSWER_AT:
            cut = paragraph_break(self._written, chunk, SPLIT_ANSWER_AT - len(self._written))
        if cut < 0:
            await self._write(chunk)
            return
        await self._write(chunk[:cut])
        # Set before the await below, while which more pieces may arrive: they belong to the new part.
        self._continue_answer = True
        self._pending = chunk[cut:] + self._pending
        self._flush_queued = bool(self._pending)
        await self._stop_stream(last=False)
        if self._flush_queued:
            self.gaps.run(self.flush_answer)

    async def _start_stream(self, *, continued: bool) -> None:
        from anton_tui.tui.widgets.answer import AssistantMessage  # Markdown costs start-up time; the app preloads it

        answer = AssistantMessage(continued=continued, run_heavy=self.gaps.run)
        await self._add(answer)
        self._answer = answer
        self._stream = answer.stream()
        self._written = ""
        self._continue_answer = False

    async def _write(self, text: str) -> None:
        self._written += text
        await self._stream.write(text)

    async def end_answer(self, full_text: str = "") -> None:
        """Finish the current assistant message; `full_text` fills it when nothing was streamed."""
        while self._pending:
            await self.flush_answer()
        if self._stream is not None:
            await self._stop_stream()
        elif self._continue_answer and self._answer is not None:
            self._answer.finish(last=True)  # the answer ended exactly where its last part was cut
        elif full_text.strip():
            from anton_tui.tui.widgets.answer import AssistantMessage

            answer = AssistantMessage(full_text, run_heavy=self.gaps.run)
            await self._add(answer)
            answer.finish()
        self._continue_answer = False

    async def _stop_stream(self, *, last: bool = True) -> None:
        stream, self._stream = self._stream, None
        answer = self._answer
        try:
            await stream.stop()
        except asyncio.CancelledError:
            # Stopping a stream whose task never ran re-raises its cancellation here; only a cancellation of
            # this handler itself may propagate (it would end the screen's message loop).
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
        if answer is not None:
            answer.finish(last=last)

    async def start_tool(self, event: ToolCallStarted) -> None:
        await self.end_answer()
        block = ToolCallBlock(event.id, event.name, event.input)
        self._running_tools[event.id] = block
        await self._add(block)

    async def finish_tool(self, event: ToolCallFinished) -> None:
        block = self._running_tools.pop(event.id, None)
        if block is None:
            block = ToolCallBlock(event.id, event.name, event.input)
            await self._add(block)
        block.finish(success=event.success, duration=event.duration, result=event.result)

    async def add_notice(self, content: Content, kind: str) -> None:
        await self.end_answer()
        await self._add(Notice(content, kind))

    async def add_error(self, message: str, *, retryable: bool) -> None:
        await self.end_answer()
        await self._add(ErrorBlock(message, retryable))

    async def add_command_output(self, line: str, output: "CommandOutput") -> None:
        """The reply to a slash command, under the command line the user typed."""
        await self.end_answer()
        await self._add(CommandReply(line, output))

    async def clear(self) -> None:
        """Empty the transcript (the session decides what it forgets)."""
        await self.end_answer()
        self._running_tools.clear()
        self.pruned_count = 0
        await self.remove_children()

    async def cancel_running(self) -> None:
        """Close what the cancelled turn left open: the streaming answer and running tool calls."""
        await self.end_answer()
        for block in self._running_tools.values():
            block.cancel()
        self._running_tools.clear()

    def action_copy_answer(self) -> None:
        from anton_tui.tui.widgets.answer import AssistantMessage

        parts: list[str] = []
        for block in reversed(self.blocks):  # the last answer, with the parts a long one was split into
            if not isinstance(block, AssistantMessage):
                if parts:
                    break
                continue
            parts.append(block.source)
            if not block.has_class("-continued"):
                break
        if not parts:
            self.notify("There is no answer to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard("".join(reversed(parts)))
        self.notify("Copied the last answer to the clipboard.")

    def action_follow(self) -> None:
        self.scroll_end(animate=False)
