"""The chat transcript: user messages, streamed answers, tool calls, memory and self-check notices, errors.

The view stays anchored to the bottom while the user is there and leaves them alone once they scroll up. How an
answer streams in (and when the oldest blocks leave the widget tree) is `ChatStream`'s business
(`tui/streaming.py`); the conversation itself stays in the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from anton_tui.tui.css import stylesheet
from anton_tui.tui.streaming import ChatStream
from anton_tui.tui.widgets.chat_selection import SelectableChat
from anton_tui.tui.widgets.tool_block import ToolCallBlock

if TYPE_CHECKING:
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

MAX_BLOCKS = 200  # blocks kept in the widget tree at most (see `ChatStream.oldest_to_drop`)


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


def history_notice(event: HistorySummarised | HistoryTrimmed | HistoryNotSaved) -> Content:
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

    def __init__(self, line: str, output: CommandOutput) -> None:
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


class ChatView(SelectableChat):
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

**Alt+Up** (from the prompt too) picks your latest message; **Up** / **Down** (or **Alt+Up** / **Alt+Down**) move to
the others. On a picked message, **i** shows what that turn's request carried of memory and skills (rules, lessons,
profile lines, skills, with their sizes), and **r** goes back to before it, as `/rewind` does: later turns leave the
conversation and the message returns to the prompt. **Escape** lets go of it.
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
        self.stream = ChatStream(self)
        self.heading: Notice | None = None  # the line above a resumed conversation
        self._running_tools: dict[str, ToolCallBlock] = {}

    def on_mount(self) -> None:
        self.anchor()

    @property
    def blocks(self) -> list[Widget]:
        return [child for child in self.children if child.has_class("chat-block")]

    async def add_block(self, block: Widget) -> None:
        await self.mount(block)
        await self.prune(self.stream.oldest_to_drop())

    def watch_virtual_size(self, size: Size) -> None:
        self.stream.transcript_resized(size)

    async def prune(self, oldest: list[Widget]) -> None:
        """Take `oldest` out of the widget tree, saying how many blocks are hidden."""
        if not oldest:
            return
        self.pruned_count += len(oldest)
        for block in oldest:
            if isinstance(block, ToolCallBlock):
                self._running_tools.pop(block.call_id, None)
        await self.remove_children(oldest)
        text = Content(f"{self.pruned_count:,} earlier blocks are hidden; the conversation is kept in the session.")
        notes = self.query_children(".pruned-note")
        if notes:
            notes.first(Static).update(text)
        else:
            await self.mount(Static(text, classes="pruned-note"), before=0)

    async def show_entries(self, heading: str, entries: list) -> None:
        """Show a saved conversation's entries (typed messages, answers, tool calls, a summary) under `heading`, all
        mounted at once: one layout pass instead of one per block, which is most of what a resume waits for. The
        answers are drafts, drawn as plain text in the first frame (no Markdown is parsed before it) and rendered
        after it, newest first, one at a time in the gaps of the user's typing (`_render_drafts`)."""
        from anton_tui.tui.widgets.answer import AssistantMessage
        from anton_tui.tui.widgets.summary_block import SummaryBlock

        await self.end_answer()
        self.heading = Notice(Content(heading), "info")
        blocks: list[Widget] = [self.heading]
        for number, entry in enumerate(entries):
            if entry.kind == "user":
                blocks.append(UserMessage(entry.text))
            elif entry.kind == "answer" and entry.text.strip():
                blocks.append(AssistantMessage(entry.text, draft=True))
            elif entry.kind == "tool":
                data = entry.input if isinstance(entry.input, dict) else {}
                block = ToolCallBlock(f"resumed-{number}", entry.tool or "tool", data)
                block.finish(success=entry.success, duration=0.0, result=entry.text)
                blocks.append(block)
            elif entry.kind == "summary":
                blocks.append(SummaryBlock(entry.text, "(the record that stands for them)", entry.ledgers))
        await self.mount_all(blocks)
        await self.prune(self.stream.oldest_to_drop())
        self.call_after_refresh(self.stream.run_in_gap, self._render_drafts)

    async def _render_drafts(self) -> None:
        """Render the newest answer still drawn as a draft, then ask for the next one after the next frame."""
        from anton_tui.tui.widgets.answer import AssistantMessage

        drafts = [block for block in self.blocks if isinstance(block, AssistantMessage) and block.draft]
        if not drafts:
            return
        part = drafts[-1]
        if await part.upgrade():
            self.stream.finished(part)
        elif part.draft and part.is_attached:
            return  # it could not be rendered (and stays readable as text): no endless retry
        if len(drafts) > 1:
            self.call_after_refresh(self.stream.run_in_gap, self._render_drafts)

    async def add_user_message(self, text: str) -> None:
        await self.end_answer()
        self.stream.follow_again()  # the view held still for the typing of this very message
        await self.add_block(UserMessage(text))

    async def append_answer(self, chunk: str) -> None:
        """Stream a piece of the answer (`ChatStream.write`)."""
        self.stream.write(chunk)

    async def end_answer(self, full_text: str = "") -> None:
        """Finish the current assistant message; `full_text` fills it when nothing was streamed."""
        await self.stream.end(full_text)

    def note_keystroke(self) -> None:
        """An edit of the prompt has just been painted (the screen calls this; see `ChatStream.keystroke`)."""
        self.stream.keystroke()

    def on_assistant_message_thawed(self, message: AssistantMessage.Thawed) -> None:
        message.stop()
        self.stream.keep_lines(message.part)

    async def start_tool(self, event: ToolCallStarted) -> None:
        await self.end_answer()
        block = ToolCallBlock(event.id, event.name, event.input)
        self._running_tools[event.id] = block
        await self.add_block(block)

    async def finish_tool(self, event: ToolCallFinished) -> None:
        block = self._running_tools.pop(event.id, None)
        if block is None:
            block = ToolCallBlock(event.id, event.name, event.input)
            await self.add_block(block)
        block.finish(success=event.success, duration=event.duration, result=event.result)

    async def add_notice(self, content: Content, kind: str) -> None:
        await self.end_answer()
        await self.add_block(Notice(content, kind))

    async def add_error(self, message: str, *, retryable: bool) -> None:
        await self.end_answer()
        await self.add_block(ErrorBlock(message, retryable))

    async def add_command_output(self, line: str, output: CommandOutput) -> None:
        """The reply to a slash command, under the command line the user typed."""
        await self.end_answer()
        await self.add_block(CommandReply(line, output))

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
