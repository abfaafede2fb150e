"""The chat transcript: user messages, streamed answers, tool calls, memory and self-check notices, errors.

The view stays anchored to the bottom while the user is there and leaves them alone once they scroll up. How an
answer streams in is `ChatStream`'s business (`tui/streaming.py`); which blocks are mounted, `ChatWindow`'s
(`widgets/chat_window.py`): every block of the conversation can be scrolled back to, though only a window of them is
in the widget tree at a time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from anton_tui.tui.css import stylesheet
from anton_tui.tui.streaming import ChatStream
from anton_tui.tui.widgets.chat_rest import Resting
from anton_tui.tui.widgets.chat_selection import SelectableChat
from anton_tui.tui.widgets.chat_window import FIRST_SHOWN, ChatBlock, ChatWindow, Slot
from anton_tui.tui.widgets.shell_block import ShellBlock
from anton_tui.tui.widgets.tool_block import ToolCallBlock, summarize_call

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

MAX_BLOCKS = 200  # blocks mounted at most (see `ChatWindow`)


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
        detector=event.lesson.detector,
        rule=event.lesson.rule,
    )


def secrets_notice(event: SecretsRemoved) -> Content:
    """What secrets were taken out, and of what: a memory being saved, or a cell's output before the model read it."""
    if event.pad is not None:
        head, tail = f"Hidden from the model in {event.where}:", " (the scratchpad pane shows the raw output)"
    else:
        head, tail = f"Removed before saving to {event.where}:", ""
    return Content.from_markup(
        "[b $text-warning]Secrets[/] $head $kinds [$text-muted]($producer)$tail[/]",
        head=head,
        kinds=event.described,
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
        return Content.from_markup("[$text-warning]$what:[/] $notice", what=trimmed_heading(event), notice=event.notice)
    return Content.from_markup("[$text-warning]Conversation not saved:[/] $reason", reason=event.reason)


def trimmed_heading(event: HistoryTrimmed) -> str:
    """The first words of a "made room" notice: the weightiest thing that went, as the user would name it."""
    if any(cut.kind == "message" for cut in event.cut):
        return "Message cut"
    if event.cut:
        return "Note cut"
    if event.dropped:
        return "Earlier turns dropped"
    return "Tool result cut down" if event.stubbed == 1 else "Tool results cut down"


class CommandReply(Vertical):
    """A slash command and its reply; the reply is a Rich renderable (a table, Markdown or plain text)."""

    def __init__(self, line: str, output: CommandOutput) -> None:
        super().__init__(classes=f"chat-block -{output.level}")
        self.line = line
        self.output = output

    def compose(self):
        yield Static(Content(self.line), classes="command-line")
        yield Static(self.output.renderable, classes="command-output")

    @property
    def words(self) -> str:
        return self.line

    def recipe(self) -> Callable[[], Widget]:
        return partial(CommandReply, self.line, self.output)


class UserMessage(Static):
    """What the user sent, shown verbatim."""

    def __init__(self, text: str) -> None:
        super().__init__(Content(text), classes="chat-block")
        self.text = text

    @property
    def words(self) -> str:
        return self.text

    def recipe(self) -> Callable[[], Widget]:
        return partial(UserMessage, self.text)


class Notice(Static):
    """A one-line event inside the conversation: memory written, a self-check nudge, a cancelled turn."""

    def __init__(self, content: Content, kind: str) -> None:
        super().__init__(content, classes=f"chat-block -{kind}")
        self.message = content
        self.kind = kind

    @property
    def words(self) -> str:
        return self.message.plain

    def recipe(self) -> Callable[[], Widget]:
        return partial(Notice, self.message, self.kind)


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

    @property
    def words(self) -> str:
        return self.message

    def recipe(self) -> Callable[[], Widget]:
        return partial(ErrorBlock, self.message, self.retryable)


def shell_notice(block: ShellBlock) -> Content:
    """What a `!` command's block showed, as text: it comes back as a notice once it has left the chat."""
    lines = block.output.rstrip("\n").split("\n")[-30:] if block.output else []
    return Content("\n").join([Content(f"$ {block.command}"), *map(Content, lines), Content(block.status_text)])


def entry_block(entry: Any, number: int, *, draft: bool = False) -> Widget:
    """The block for an entry of a saved conversation (`TranscriptEntry`), drawn as it was when it ran; a draft answer
    is plain text until rendered (`AssistantMessage.upgrade`)."""
    from anton_tui.tui.widgets.answer import AssistantMessage
    from anton_tui.tui.widgets.summary_block import SummaryBlock

    if entry.kind == "user" or entry.starts_goal:
        return UserMessage(entry.text)
    if entry.kind in ("goal", "cancelled"):
        return Notice(Content(entry.text), entry.kind)
    if entry.kind == "answer":
        return AssistantMessage(entry.text, draft=draft, ended=True)
    if entry.kind == "tool":
        data = entry.input if isinstance(entry.input, dict) else {}
        block = ToolCallBlock(f"resumed-{number}", entry.tool or "tool", data)
        if entry.cancelled:
            block.cancel()  # as it showed live: its saved result only says so
        else:
            block.finish(success=entry.success, duration=0.0, result=entry.text)
        return block
    return SummaryBlock(entry.text, "(the record that stands for them)", entry.ledgers)


def entry_slot(entry: Any, number: int) -> Slot | None:
    """The place of a saved conversation's entry in the chat, made when the view comes to it."""
    recipe = partial(entry_block, entry, number)
    if entry.kind == "user" or entry.starts_goal:
        return Slot("user", recipe=recipe, words=entry.text)
    if entry.kind in ("goal", "cancelled"):
        return Slot("other", recipe=recipe, words=entry.text)
    if entry.kind == "answer" and entry.text.strip():
        return Slot("answer", recipe=recipe, words=entry.text)
    if entry.kind == "tool":
        data = entry.input if isinstance(entry.input, dict) else {}
        return Slot("other", recipe=recipe, words=f"{entry.tool or 'tool'} {summarize_call(entry.tool or '', data)}")
    if entry.kind == "summary":
        return Slot("other", recipe=recipe, words=entry.text)
    return None


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
Scroll up as far as you like: earlier turns come back as you reach them (only some are kept on screen at a time).
**Home** goes to the first turn, **End** back to the last.

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
        self.stream = ChatStream(self)
        self.window = ChatWindow(self)
        self.resting = Resting(self)
        self.heading: Notice | None = None  # the line above a resumed conversation
        self._running_tools: dict[str, ToolCallBlock] = {}
        self._width = 0

    def on_mount(self) -> None:
        self.anchor()

    # --- the blocks ------------------------------------------------------------------------------------------------

    @property
    def blocks(self) -> list[Widget]:
        """The blocks mounted now, in order."""
        return self.window.mounted

    @property
    def pruned_count(self) -> int:
        """How many blocks before the mounted ones are not mounted."""
        return self.window.first

    @property
    def following(self) -> bool:
        """The view is at the end of the conversation (and follows what comes)."""
        return self.window.following

    async def add_block(self, block: Widget) -> None:
        from anton_tui.tui.widgets.answer import AssistantMessage

        if isinstance(block, AssistantMessage):
            await self.window.add(block, "answer", continued=block.continued)
        else:
            await self.window.add(block, "user" if isinstance(block, UserMessage) else "other")

    def live(self, block: Widget) -> bool:
        """Whether `block` is still being written to (it stays mounted meanwhile)."""
        if isinstance(block, ToolCallBlock):
            return block.state == "running"
        if isinstance(block, ShellBlock):
            return block.running
        return self.stream.writing(block)

    def recipe_of(self, block: Widget) -> Callable[[], Widget]:
        if isinstance(block, ChatBlock):
            return block.recipe()
        if isinstance(block, ShellBlock):
            return partial(Notice, shell_notice(block), "info")
        return partial(Notice, Content(self.words_of(block)), "info")

    def words_of(self, block: Widget) -> str:
        if isinstance(block, ChatBlock):
            return block.words
        if isinstance(block, ShellBlock):
            return f"{block.command}\n{block.output}"
        return ""

    def watch_virtual_size(self, size: Size) -> None:
        self.window.request()

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._width = self.size.width
            self.resting.wake_all()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.resting.settle()
        self.window.request()
        self.stream.view_moved()

    async def keep_view(self, change: Callable[..., Awaitable[object]], *args: Any) -> None:
        """Make `change(*args)` to the blocks without moving the lines in view, unless the view follows the end (the
        anchor keeps it there)."""
        if self.following or not self.is_attached:
            await change(*args)
            return
        top, places = round(self.scroll_y), self.places()
        reference = next((block for block in self.blocks if block in places and places[block].bottom > top), None)
        if reference is None:
            await change(*args)
            return
        offset = places[reference].y - top
        with self.app.batch_update():
            await change(*args)
            if reference.parent is not self:
                return
            y = self.places().get(reference)
            if y is not None:
                await self._scroll_at_once(y.y - offset)

    def places(self) -> dict[Widget, Region]:
        """Where the layout puts each child, from the top of the transcript: the arrangement the screen's layout asks
        the chat for (a public method, kept until the children change), so the same as it lays out next."""
        arrangement = self.arrange(self.scrollable_content_region.size)
        return {place.widget: place.region for place in arrangement.placements}

    async def _scroll_at_once(self, y: int) -> None:
        """Scroll to `y` for the next layout, which may make room for it (the limit of today's layout does not
        apply), stopping a scroll under way."""
        animator = self.app.animator
        if animator.is_being_animated(self, "scroll_y"):
            await animator.stop_animation(self, "scroll_y", complete=False)
        self.set_reactive(ChatView.scroll_y, float(y))
        self.set_reactive(ChatView.scroll_target_y, float(y))
        self.vertical_scrollbar.position = y

    # --- what the screen sends -------------------------------------------------------------------------------------

    async def show_entries(self, heading: str, entries: list) -> None:
        """Show a saved conversation's entries (typed messages, answers, tool calls, a summary) under `heading`: each
        has its place, and the last ones are mounted at once (one layout pass instead of one per block, which is most
        of what a resume waits for). Those answers are drafts, drawn as plain text in the first frame (no Markdown is
        parsed before it) and rendered after it, newest first, one per frame outside the user's typing
        (`_render_drafts`). The earlier ones are mounted as the view reaches them."""
        await self.clear()
        self.heading = Notice(Content(heading), "info")
        placed = [(number, slot) for number, entry in enumerate(entries) if (slot := entry_slot(entry, number))]
        slots = [slot for _, slot in placed]
        shown = [entry_block(entries[number], number, draft=True) for number, _ in placed[-FIRST_SHOWN:]]
        await self.window.start(self.heading, slots, shown)
        self.call_after_refresh(self._render_drafts)

    async def _render_drafts(self) -> None:
        """Render the newest answer still drawn as a draft, then ask for the next one after the next frame (later
        while the user types)."""
        from anton_tui.tui.widgets.answer import AssistantMessage

        if self.stream.typing:
            self.set_timer(0.2, self._render_drafts)
            return
        drafts = [block for block in self.blocks if isinstance(block, AssistantMessage) and block.draft]
        if not drafts:
            return
        part = drafts[-1]
        await self.keep_view(self._upgrade, part)
        if part.draft and part.is_attached:
            return  # it could not be rendered (and stays readable as text): no endless retry
        if len(drafts) > 1:
            self.call_after_refresh(self._render_drafts)

    async def _upgrade(self, part: AssistantMessage) -> None:
        await part.upgrade()

    async def add_user_message(self, text: str) -> None:
        await self.end_answer()
        self.stream.follow_again()  # the view held still for the typing of this very message
        if not self.following:
            await self.window.go_to_end()
        await self.add_block(UserMessage(text))

    async def append_answer(self, chunk: str) -> None:
        """Stream a piece of the answer (`ChatStream.write`)."""
        await self.stream.write(chunk)

    async def end_answer(self, full_text: str = "") -> None:
        """Finish the current assistant message; `full_text` fills it when nothing was streamed."""
        await self.stream.end(full_text)

    def note_keystroke(self) -> None:
        """An edit of the prompt has just been painted (the screen calls this; see `ChatStream.keystroke`)."""
        self.stream.keystroke()

    async def start_tool(self, event: ToolCallStarted) -> None:
        await self.end_answer()
        block = ToolCallBlock(event.id, event.name, event.input)
        self._running_tools[event.id] = block
        await self.add_block(block)

    async def finish_tool(self, event: ToolCallFinished) -> None:
        block = self._running_tools.pop(event.id, None)
        if block is None:
            block = ToolCallBlock(event.id, event.name, event.input)
            block.finish(success=event.success, duration=event.duration, result=event.result)
            await self.add_block(block)
            return
        block.finish(success=event.success, duration=event.duration, result=event.result)
        self.window.request()  # it may leave now

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
        self.heading = None
        await self.window.clear()

    async def cancel_running(self) -> None:
        """Close what the cancelled turn left open: the streaming answer and running tool calls."""
        await self.end_answer()
        for block in self._running_tools.values():
            block.cancel()
        self._running_tools.clear()
        self.window.request()

    async def reveal(self, slot: Slot) -> Widget | None:
        """Bring a block of the conversation into the chat (find does, for a match not mounted); its widget."""
        return await self.window.reveal(slot)

    # --- keys ------------------------------------------------------------------------------------------------------

    def action_copy_answer(self) -> None:
        parts: list[str] = []
        window = self.window
        for slot in reversed(window.slots):  # the last answer, with the parts a long one was split into
            if slot.kind != "answer":
                if parts:
                    break
                continue
            parts.append(window.words(slot))
            if not slot.continued:
                break
        if not parts:
            self.notify("There is no answer to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard("".join(reversed(parts)))
        self.notify("Copied the last answer to the clipboard.")

    def action_scroll_home(self) -> None:
        """Home: the first turn of the conversation."""
        if self.window.first:
            self.call_later(self.window.go_to_start)
        else:
            super().action_scroll_home()

    async def action_follow(self) -> None:
        """End: the last turn, followed from then on."""
        if self.window.joined:
            self.resting.wake_end()
            self.scroll_end(animate=False)
        else:
            await self.window.go_to_end()

    def user_texts(self, picked: Widget) -> tuple[list[str], int]:
        window = self.window
        users = [slot for slot in window.slots if slot.kind == "user"]
        return [window.words(slot) for slot in users], next(
            (n for n, slot in enumerate(users) if slot.widget is picked), -1
        )
