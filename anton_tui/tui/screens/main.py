"""The main screen: chat and prompt on the left, scratchpad and inspector on the right, header and footer.

It runs each turn in a worker that only forwards engine events as messages; the handlers here route each event to
the pane that shows it. The screen is composed of parts that keep their own state: `PaneLayout` (which panes show and
how wide), the two columns (`Conversation`: chat and prompt; `SideColumn`: scratchpad and inspector), the
`ShellRunner` of `!` commands, the `CommandRunner` of slash commands, and a `GoalRunner` while a `/goal` runs (its
worker stands for the running turn). They report back in messages; a failed worker, the screen's own or theirs, is
shown in one place (`show_failure`).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.types import NoActiveAppError
from textual.widget import Widget
from textual.widgets import Footer, TextArea
from textual.worker import Worker, WorkerState

from anton_tui.agent.events import (
    AccNudge,
    AssistantMessageDone,
    AssistantTextDelta,
    ErrorOccurred,
    HistoryNotSaved,
    HistoryRepaired,
    HistorySummarised,
    HistoryTrimmed,
    MemoryConfirmationNeeded,
    MemoryHistoryBroken,
    MemorySynced,
    MemoryWritten,
    ScratchpadActivity,
    SecretsRemoved,
    SummaryAhead,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageUpdated,
)
from anton_tui.agent.goal import GoalFinished, GoalTurnStarted
from anton_tui.settings_sources import FirstFrame
from anton_tui.tui.command_registry import SlashCommand, parse_command_line
from anton_tui.tui.css import stylesheet
from anton_tui.tui.messages import (
    ChatCleared,
    CommandReplied,
    MemoryConfirmationAnswered,
    SessionEventMessage,
    WorkerFailed,
)
from anton_tui.tui.screens.pane_layout import SIDE_WIDTH_DEFAULT, SIDE_WIDTH_STEP, PaneLayout
from anton_tui.tui.textual_internals import PaintFirstScreen
from anton_tui.tui.widgets.chat import (
    ChatView,
    ErrorBlock,
    acc_notice,
    history_notice,
    memory_notice,
    repair_notice,
    secrets_notice,
)
from anton_tui.tui.widgets.command_runner import CommandRunner
from anton_tui.tui.widgets.conversation import Conversation
from anton_tui.tui.widgets.find_bar import FindBar
from anton_tui.tui.widgets.goal_runner import GoalRunner
from anton_tui.tui.widgets.header import AntonHeader
from anton_tui.tui.widgets.pane_bar import PaneBar
from anton_tui.tui.widgets.prompt import Prompt, PromptBar
from anton_tui.tui.widgets.review_bar import ReviewBar
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane
from anton_tui.tui.widgets.shell_block import ShellBlock
from anton_tui.tui.widgets.shell_runner import ShellRunner
from anton_tui.tui.widgets.side_column import SideColumn
from anton_tui.tui.widgets.summary_block import SummaryBlock, summary_ahead_notice

if TYPE_CHECKING:
    from anton_tui.agent.events import SessionEvent
    from anton_tui.runtime import FirstLook, Runtime
    from anton_tui.tui.commands.context import CommandUI

__all__ = ["SIDE_WIDTH_DEFAULT", "SIDE_WIDTH_STEP", "MainScreen"]

_TURN = "turn"
QUIT_AGAIN_WITHIN = 2.0  # seconds: Ctrl+C on an idle, empty prompt quits when pressed again within them


class MainScreen(PaintFirstScreen):
    """Where the conversation happens."""

    DEFAULT_CSS = stylesheet(__file__, "main.tcss")
    SCOPED_CSS = False  # the rules style the widgets inside it too, as written

    class ConversationShown(Message):
        """A resumed or rewound conversation is in the chat."""

    class TurnEnded(Message):
        """The UI closed a turn (finished, failed or cancelled); the app applies what waited for it."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    class AttentionWanted(Message):
        """Something the user should know of while the terminal is in the background (see `tui/attention.py`)."""

        def __init__(self, title: str, body: str) -> None:
            super().__init__()
            self.title = title
            self.body = body

    AUTO_FOCUS = "#prompt"

    HELP = """\
## Layout and keys

The chat and the prompt fill the left; the scratchpad (top) and the memory inspector (bottom) share the right.
Below 100 columns one pane at a time fills the screen: **F4** switches between the chat, the scratchpad and the
memory inspector (the bar above names them), and **F2** / **F3** jump to the scratchpad / the inspector and back.
**Tab** moves the focus between panes. **F2** and **F3** show or hide the scratchpad and the inspector,
**Alt+Left** / **Alt+Right** make the right-hand column wider or narrower, **F5** maximises the focused pane (again,
or **Escape**, to restore). **Escape** cancels a running turn; **Ctrl+R** sends the last message again after an error
or a cancelled turn (during a `/goal`, Escape also keeps the next turn from starting; a line above the prompt counts
the turns). **Ctrl+F** finds text in the whole conversation. **Ctrl+L** puts the cursor back in the prompt.
**Alt+Up** picks your latest message in the chat: **i** shows what its turn saw, **r** goes back to before it.
**Ctrl+C** stops what runs (a turn, its cell, a goal, a `!` command); with nothing running it empties the prompt
(**Up** brings the text back), and on an empty prompt pressed twice it quits. **F1** shows this help, **Ctrl+Q**
quits.

Memories waiting for your review (copilot mode, or held by the trust gate) open in a dialog at once only while you
are not writing in the prompt. Otherwise a line above the prompt counts them: **Ctrl+Y** or a click opens the review,
and sending your next message opens it first (the message goes once you have answered).
"""

    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel", id="main.cancel-turn"),
        Binding("ctrl+r", "retry", "Retry", id="main.retry"),
        Binding("f2", "toggle_scratchpad", "Scratchpad", id="main.toggle-scratchpad"),
        Binding("f3", "toggle_inspector", "Inspector", id="main.toggle-inspector"),
        Binding("f4", "next_pane", "Next pane", id="main.next-pane"),
        Binding("f5", "toggle_maximize", "Maximise", id="main.maximize"),
        Binding("alt+left", f"resize_side({SIDE_WIDTH_STEP})", "Wider side panes", id="main.widen-side", show=False),
        Binding(
            "alt+right", f"resize_side({-SIDE_WIDTH_STEP})", "Narrower side panes", id="main.narrow-side", show=False
        ),
        Binding("ctrl+l", "focus_prompt", "Focus prompt", id="main.focus-prompt", show=False),
        Binding("ctrl+f", "find", "Find", id="main.find", show=False),
        Binding("alt+up", "pick_message", "Pick a message", id="main.pick-message", show=False),
        Binding("ctrl+c", "interrupt", "Stop", id="main.interrupt", show=False),
        # priority: while memories wait it wins over the prompt's Ctrl+Y (redo, which keeps super+y)
        Binding("ctrl+y", "review_memories", "Review memories", id="main.review-memories", priority=True),
    ]

    def __init__(
        self,
        runtime: Runtime | None,
        *,
        frame: FirstFrame,
        version: str,
        commands: list[SlashCommand],
        command_ui: CommandUI | None = None,
        cursor_blink: bool = True,
        max_blocks: int | None = None,
        inspector: bool = True,
        first_look: FirstLook | None = None,
    ) -> None:
        """`runtime` may come later, through `attach_runtime` (a message sent before then waits for it); until then
        the header shows `frame`, read from the raw settings, and the inspector the rows of `first_look`. Slash
        commands ask `command_ui` (the app) to open screens and ask the user."""
        super().__init__()
        self.runtime = runtime
        self._runtime_attached = asyncio.Event()
        if runtime is not None:
            self._runtime_attached.set()
        self.commands = commands
        self.command_ui = command_ui
        self.frame = frame
        self.version = version
        self._cursor_blink = cursor_blink
        self._max_blocks = max_blocks
        self._show_inspector = inspector
        self._first_look = first_look
        self.last_prompt: str | None = None
        self._turn_worker: Worker[Any] | None = None  # the running turn's, or the running goal's
        self._goal: GoalRunner | None = None
        self._prompt: Prompt | None = None
        self._edits_shown = 0  # the prompt's edit count when it was last painted
        self._turn_closed = True
        self._retry_offered = False
        self._reviewing = False  # a review dialog is open
        self._after_review: str | None = None  # a message sent while a review waited: it goes once answered
        self._quit_asked_at: float | None = None  # when Ctrl+C on an idle, empty prompt said how to quit
        self.panes = PaneLayout(
            self, focus_prompt=self.action_focus_prompt, next_pane_key=frame.keymap.get("main.next-pane", "f4")
        )
        try:  # the layout for the terminal's width from the start: a class that changes restyles the whole screen
            self.panes.fit(self.app.size.width, update=False)
        except NoActiveAppError:
            pass

    def compose(self) -> ComposeResult:
        frame = self.frame
        yield AntonHeader(
            version=self.version,
            workspace=Path(frame.project_dir),
            provider=frame.planning_provider,
            model=frame.planning_model,
            memory_mode=frame.effective_memory_mode,
            id="header",
        )
        yield PaneBar(self.panes.next_pane_key, id="pane-bar")
        with Horizontal(id="body"):
            yield Conversation(
                self.commands,
                max_blocks=self._max_blocks,
                cursor_blink=self._cursor_blink,
                review_key=self.app.get_key_display(Binding(frame.keymap.get("main.review-memories", "ctrl+y"), "")),
                id="conversation",
            )
            yield SideColumn(self.runtime, show_inspector=self._show_inspector, first_look=self._first_look, id="side")
        yield ShellRunner(id="shell-runner")
        yield CommandRunner(self.commands, self.ready_runtime, self.command_ui, id="command-runner")
        yield Footer(compact=self.panes.compact_footer)  # so that every key fits

    # Keystrokes first: the prompt is painted as soon as it asks to be (`PaintFirstScreen`). Once an edit of the
    # prompt is on screen, the chat may use the gap before the next key (`ChatStream.keystroke`).

    def first_painted(self) -> None:
        prompt = self._prompt
        if prompt is not None and prompt.edits != self._edits_shown:
            self._edits_shown = prompt.edits
            self.chat.note_keystroke()

    @property
    def side(self) -> SideColumn:
        return self.query_one(SideColumn)

    @property
    def inspector(self) -> Widget:
        return self.side.inspector

    def on_mount(self) -> None:
        self.call_after_refresh(self.panes.fit_side_to_tabs)
        self._prompt = self.paint_first = self.query_one(Prompt)
        self._prompt.focus()
        if self.runtime is not None:
            self._runtime_arrived(self.runtime)

    def on_resize(self, event: events.Resize) -> None:
        self.panes.fit(event.size.width)

    def attach_runtime(self, runtime: Runtime, *, inspector_later: bool = False) -> None:
        """Hand over the runtime of an app that painted its first frame before building it. With `inspector_later`
        (a conversation is being resumed) the inspector waits for `mount_inspector_if_waiting`: the resumed
        conversation is what the user waits to see, and both at once take longer than one after the other."""
        if self.runtime is runtime and self._runtime_attached.is_set():
            return
        self.runtime = runtime
        self._runtime_attached.set()
        self.side.attach(runtime, inspector_later=inspector_later)
        self._runtime_arrived(runtime)

    def mount_inspector_if_waiting(self) -> None:
        self.side.mount_inspector_if_waiting()

    def _runtime_arrived(self, runtime: Runtime) -> None:
        if runtime.banner:
            self.call_later(self.chat.add_notice, Content(runtime.banner), "info")
        self.query_one(PromptBar).attach(runtime)
        self.show_model(runtime)
        self._offer_next_prompt()
        if runtime.background_events is not None:
            self.follow_background_events(runtime.background_events)

    def on_side_column_inspector_mounted(self) -> None:
        self.call_after_refresh(self.panes.fit_side_to_tabs)

    def on_inspector_pane_loaded(self) -> None:
        self.panes.fit_side_to_tabs()

    def show_model(self, runtime: Runtime) -> None:
        """The header follows the runtime's provider, model and memory mode."""
        shown = runtime.first_frame  # the settings as the header shows them
        try:
            header = self.query_one(AntonHeader)
        except NoMatches:
            return  # the app is closing: the screen's widgets are already gone
        header.set_model(runtime.provider_label, shown.planning_model, shown.effective_memory_mode)

    async def show_conversation(self, entries: list[Any], heading: str) -> None:
        """Show a resumed or rewound conversation under `heading` (see `Conversation.show_entries`)."""
        await self.conversation.show_entries(entries, heading)
        self.post_message(self.ConversationShown())

    def retitle_conversation(self, heading: str) -> None:
        self.conversation.retitle(heading)

    async def clear_conversation(self) -> None:
        await self.chat.clear()

    def fill_prompt(self, text: str) -> None:
        """Put `text` in the prompt to edit and send (after a rewind), the cursor at its end."""
        self.conversation.fill_prompt(text)

    def _offer_next_prompt(self) -> None:
        suggest = self.runtime.suggest_prompt if self.runtime is not None else None
        if suggest is not None:
            self.conversation.offer_prompt(suggest())

    @work(group="background-events", exit_on_error=False)
    async def follow_background_events(self, queue: asyncio.Queue[SessionEvent]) -> None:
        """Forward events from engine work that outlives a turn (memory written or to confirm after it ended)."""
        while True:
            self.post_message(SessionEventMessage(await queue.get()))

    @property
    def reviews(self) -> ReviewBar:
        return self.query_one(ReviewBar)

    @property
    def conversation(self) -> Conversation:
        return self.query_one(Conversation)

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def scratchpad(self) -> ScratchpadPane:
        return self.side.scratchpad

    @property
    def shell(self) -> ShellRunner:
        return self.query_one(ShellRunner)

    @property
    def command_runner(self) -> CommandRunner:
        return self.query_one(CommandRunner)

    @property
    def turn_worker(self) -> Worker[Any] | None:
        """The worker of the running turn, or of the running goal."""
        return self._turn_worker

    @property
    def busy(self) -> bool:
        return (self._turn_worker is not None and not self._turn_worker.is_finished) or self.shell.running

    async def ready_runtime(self) -> Runtime:
        """The runtime, once the app has built it."""
        await self._runtime_attached.wait()
        assert self.runtime is not None
        return self.runtime

    # --- sending -------------------------------------------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _typing(self) -> None:
        """The user is writing a message: have the model SDK imported meanwhile (runtime/model_warm_up.py)."""
        if self.runtime is not None:
            self.runtime.warm_up_model()

    @on(Prompt.Submitted)
    async def _prompt_submitted(self, event: Prompt.Submitted) -> None:
        await self.accept_message(event.text)

    async def accept_message(self, text: str) -> None:
        """What the user sent from the prompt (`text`, still in it): a slash command runs, a `!` command or a message
        goes, or the reason it cannot shows and it stays in the prompt. A message or `!` command sent while memories
        wait for a review opens the review first and goes once it is answered."""
        prompt = self.query_one(Prompt)
        shell = text.strip().startswith("!")
        if not shell and parse_command_line(text) is not None:
            if not self.command_runner.knows(text) and not await prompt.names_skill_command(text):
                self.notify(self.command_runner.unknown(text), severity="warning")
                return  # the text stays in the prompt, to be corrected
            prompt.commit(text)
            await self.run_command(text)
            return
        if self.reviews.waiting:
            self._after_review = text
            self.notify("Your message goes once you have answered the review.", timeout=4)
            self.open_review()
            return
        if shell:
            await self.run_shell(text.strip()[1:].strip(), typed=text)
            return
        if self.busy:
            self.notify("Anton is still working on the last message. Press Escape to cancel it.", severity="warning")
            return
        prompt.commit(text)
        await self.send(text)

    async def run_command(self, text: str) -> None:
        """Run a slash command line (typed, or picked in the palette); its reply comes as `CommandReplied`."""
        await self.command_runner.run(text)

    async def on_command_replied(self, message: CommandReplied) -> None:
        await self.chat.add_command_output(message.line, message.output)

    async def on_chat_cleared(self, message: ChatCleared) -> None:
        await self.chat.clear()
        self.notify("Started a new conversation (memory, skills and past episodes stay).")

    async def send(self, text: str) -> None:
        """Show the message and start a turn with it."""
        self.last_prompt = text
        await self._open_turn(text)
        self._turn_worker = self.run_turn(text)
        self.refresh_bindings()

    async def _open_turn(self, shown: str) -> None:
        self._turn_closed = False
        self._retry_offered = False
        await self.chat.add_user_message(shown)
        self.query_one(AntonHeader).set_status("working…", busy=True)

    @work(group=_TURN, exclusive=True, exit_on_error=False)
    async def run_turn(self, text: str) -> None:
        runtime = await self.ready_runtime()
        async for event in runtime.turn(text):
            self.post_message(SessionEventMessage(event))

    # --- `!` commands and `/goal` runs -----------------------------------------------------------------------------

    async def run_shell(self, command: str, *, typed: str | None = None) -> None:
        """Run `command` (typed after a `!`) in the workspace folder, shown live in the chat; or say why not (the
        text then stays in the prompt). While it runs no message is sent, so the next turn sees all of its output."""
        if not command:
            refusal = "Type a command after ! to run it in the workspace folder."
        elif self.shell.running:
            refusal = "A command is still running. Press Escape to stop it."
        elif self.busy:
            refusal = "Anton is still working on the last message. Press Escape to cancel it."
        elif self.runtime is None:
            refusal = "Anton is still starting; try again in a moment."
        else:
            self.query_one(Prompt).commit(typed)
            block = ShellBlock(command)
            await self.chat.end_answer()
            await self.chat.add_block(block)
            self.shell.start(self.runtime, command, block)
            self.refresh_bindings()
            return
        self.notify(refusal, severity="warning")

    def on_shell_runner_ended(self) -> None:
        self.refresh_bindings()

    def start_goal(self, objective: str, max_turns: int) -> str | None:
        """Start working on `objective` over up to `max_turns` turns; the reason when it cannot start now."""
        if self.runtime is None:
            return "Still starting; try again in a moment."
        if self.busy:
            return "Anton is still working. Press Escape to cancel first, then start the goal."
        self.call_later(self._begin_goal, self.runtime, objective, max_turns)
        return None

    async def _begin_goal(self, runtime: Runtime, objective: str, max_turns: int) -> None:
        self.last_prompt = None  # Ctrl+R sends a message again, not a goal
        await self._open_turn(f"Goal: {objective}")
        await self.chat.add_notice(
            Content(f"Anton works on this on its own, up to {max_turns} turns, until it marks the goal complete. "
                    "Escape stops it."), "goal")  # fmt: skip
        goal = self._goal = GoalRunner(objective, max_turns, id="goal-bar")
        await self.query_one("#conversation").mount(goal, before="#prompt-bar")
        self._turn_worker = goal.start(runtime, self)
        self.refresh_bindings()

    async def show_goal_event(self, event: GoalTurnStarted | GoalFinished) -> None:
        """A `GoalTurnStarted` or `GoalFinished` from the run: a line in the chat, and a turn after the first opens
        again in the header."""
        note = self._goal.note(event) if self._goal is not None else None
        if isinstance(event, GoalTurnStarted) and event.turn > 1:
            self._turn_closed = False  # the previous turn closed in the UI; this one is open again
            self.query_one(AntonHeader).set_status("working…", busy=True)
        if note is not None:
            await self.chat.add_notice(Content(note), "goal")

    async def on_goal_runner_ended(self, message: GoalRunner.Ended) -> None:
        if (untold := message.runner.untold_end) is not None:
            await self.chat.add_notice(Content(untold), "goal")
        if message.runner is self._goal:
            self._goal = None
        await message.runner.remove()
        if message.error is not None:
            await self.show_failure(message.error, in_turn=True)
        await self._close_turn(message.reason)

    # --- engine events -------------------------------------------------------------------------------------------

    async def on_session_event_message(self, message: SessionEventMessage) -> None:
        event = message.event
        chat = self.chat
        if await self.workspace_event(event):
            return
        match event:
            case AssistantTextDelta(text=text):
                await chat.append_answer(text)
                return  # nothing else follows streamed text
            case AssistantMessageDone(text=text):
                await chat.end_answer(text)
            case ToolCallStarted():
                await chat.start_tool(event)
            case ToolCallFinished():
                await chat.finish_tool(event)
            case ScratchpadActivity(event=activity):
                await self.scratchpad.apply(activity)
                self.panes.mark_news("scratchpad")
            case MemoryWritten(producer="acc"):
                pass  # the AccNudge that comes with it already shows the new rule, with its detector
            case MemoryWritten():
                await chat.add_notice(memory_notice(event), "memory")
            case SecretsRemoved():
                await chat.add_notice(secrets_notice(event), "secrets")
                if event.pad is not None and event.cell is not None:
                    self.scratchpad.mark_hidden(event.pad, event.cell, event.kinds)
            case MemoryConfirmationNeeded():
                self.query_one(AntonHeader).set_held(self.attached_runtime.held_count)
                self._alert("Anton is waiting", "Memories to confirm.")
                self.reviews.add(event)
                self._open_review_if_left_alone()
            case AccNudge():
                await chat.add_notice(acc_notice(event), "acc")
            case HistoryRepaired():
                await chat.add_notice(repair_notice(event), "info")
            case HistorySummarised():
                detail = f"({event.folded} messages, about {event.tokens_before:,} → {event.tokens_after:,} tokens)"
                await chat.add_block(SummaryBlock(event.summary, detail, (event.ledger,) if event.ledger else ()))
            case SummaryAhead(tokens=tokens, at_tokens=at):
                await chat.add_notice(summary_ahead_notice(tokens, at), "info")
            case HistoryTrimmed() | HistoryNotSaved():
                await chat.add_notice(history_notice(event), "info")
            case MemoryHistoryBroken(message=text):
                await chat.add_notice(Content(text), "info")
            case MemorySynced(line=line, ok=ok, waiting=waiting, detail=detail):
                self.query_one(AntonHeader).set_sync(line, ok, waiting)
                if detail:
                    await chat.add_notice(Content(detail), "info")
            case UsageUpdated():
                self.query_one(AntonHeader).show_usage(self.attached_runtime.note_usage(event))  # tokens, cost, context
            case ErrorOccurred(message=text, retryable=retryable):
                self._alert("Anton: error", text)
                self._retry_offered = retryable
                await chat.add_error(text, retryable=retryable)
            case TurnFinished(stop_reason=reason):
                await self._close_turn(reason)
            case GoalTurnStarted() | GoalFinished():
                await self.show_goal_event(event)
        self.side.apply_event(event)

    async def workspace_event(self, event: SessionEvent) -> bool:
        """Show a turn event about the workspace (a mention that could not be passed on); False for any other."""
        from anton_tui.agent.mentions import MentionRefused

        if isinstance(event, MentionRefused):
            await self.chat.add_notice(Content(event.line), "mention")
            return True
        return False

    @property
    def attached_runtime(self) -> Runtime:
        """The runtime, for what happens only once it is there (its events)."""
        assert self.runtime is not None, "an engine event came before the runtime"
        return self.runtime

    def _alert(self, title: str, body: str) -> None:
        """Bell and desktop notification, while the terminal is in the background (the app decides)."""
        self.post_message(self.AttentionWanted(title, body))

    async def _close_turn(self, reason: str) -> None:
        """End the turn in the UI once, whichever of TurnFinished or the worker ending comes first."""
        if self._turn_closed:
            return
        self._turn_closed = True
        cancelled = reason == "cancelled"
        if cancelled:
            await self.chat.cancel_running()
            self.scratchpad.stop_running("cancelled")
            await self.chat.add_notice(Content("Turn cancelled."), "cancelled")
            self._retry_offered = True
        else:
            await self.chat.end_answer()
            self.scratchpad.stop_running("killed" if reason == "error" else "cancelled")
        if reason == "cap_exhausted":
            await self.chat.add_notice(Content("Stopped at the tool-round limit; the answer so far is above."), "info")
        self.query_one(AntonHeader).set_status("cancelled" if cancelled else "ready", busy=False)
        self.refresh_bindings()
        self._offer_next_prompt()
        self.post_message(self.TurnEnded(reason))

    # --- memories waiting for a review ------------------------------------------------------------------------

    def _open_review_if_left_alone(self) -> None:
        """Open the oldest waiting review now, unless the user is writing in the prompt (or something else has the
        keyboard): a dialog that opened then would take the keys meant for the prompt, and its one-letter keys would
        decide the review unseen. It then waits in the line above the prompt (`ReviewBar`)."""
        prompt = self.query_one(Prompt)
        if self._reviewing or self.app.screen is not self or self.focused not in (None, prompt) or prompt.composing:
            return
        self.open_review()

    def open_review(self) -> None:
        """Show the oldest question waiting for a review, if no review is open."""
        if self._reviewing:
            return
        question = self.reviews.take()
        if question is None:
            return
        self._reviewing = True
        self.confirm_memories(question)

    def action_review_memories(self) -> None:
        if self.reviews.waiting:
            self.open_review()
        else:
            self.notify("No memories wait for a review.")

    def on_review_bar_open_requested(self) -> None:
        self.open_review()

    @work(group="memory-confirmation", exit_on_error=False)
    async def confirm_memories(self, event: MemoryConfirmationNeeded) -> None:
        """Ask the user which held-back memories to keep; the engine waits on the event's future."""
        from anton_tui.tui.screens.confirm_memory import answer_confirmation

        try:
            keep = await answer_confirmation(self.app, event)
        finally:
            self._reviewing = False
        if self.runtime is not None and not event.future.cancelled():  # those asked about no longer wait
            self.query_one(AntonHeader).set_held(self.runtime.held_count_without(event.engrams))
        self.post_message(MemoryConfirmationAnswered(len(keep), len(event.engrams) + len(event.changes)))

    async def on_memory_confirmation_answered(self, message: MemoryConfirmationAnswered) -> None:
        await self.chat.add_notice(
            Content(f"Kept {message.kept} of {message.offered} memories waiting for confirmation."), "memory"
        )
        if self._after_review is not None and self.reviews.waiting:
            self.open_review()  # the message waits for every review
            return
        await self._send_after_review()
        self._open_review_if_left_alone()

    async def _send_after_review(self) -> None:
        """Send the message that waited for the review, once the turn that asked has ended."""
        text = self._after_review
        if text is None or self.busy or self._reviewing:
            return
        self._after_review = None
        if self.query_one(Prompt).text.startswith(text):  # still in the prompt, as it was sent
            await self.accept_message(text)

    # --- workers -------------------------------------------------------------------------------------------------

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR and worker.error is not None:
            await self.show_failure(worker.error, in_turn=worker.group == _TURN)
        if worker.group == _TURN and worker is self._turn_worker and worker.is_finished:
            reason = {WorkerState.CANCELLED: "cancelled", WorkerState.ERROR: "error"}.get(event.state, "end_turn")
            await self._close_turn(reason)
            self.refresh_bindings()  # the turn may have been closed by its TurnFinished while the worker still ran
            await self._send_after_review()

    async def on_worker_failed(self, message: WorkerFailed) -> None:
        await self.show_failure(message.error)

    async def show_failure(self, error: BaseException, *, in_turn: bool = False) -> None:
        """A worker failed: a turn's failure goes in the chat, to be retried; any other is a toast."""
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        if in_turn:
            self._retry_offered = True
            self._alert("Anton: error", text)
            await self.chat.add_error(text, retryable=True)
        else:
            self.notify(text, title="Something went wrong", severity="error", timeout=10)

    # --- actions -------------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy
        if action == "review_memories":
            return self.reviews.waiting > 0
        if action == "retry":
            return not self.busy and self._retry_offered and self.last_prompt is not None
        if action == "next_pane":
            return self.panes.narrow
        if action == "toggle_maximize":
            return not self.panes.narrow  # one pane already fills a narrow screen
        return True

    async def action_cancel_turn(self) -> None:
        if self.shell.stop() or not self.busy:
            return
        if self.runtime is not None:
            await self.runtime.cancel()
        if self._turn_worker is not None:
            self._turn_worker.cancel()

    @on(Prompt.Interrupted)
    async def _prompt_interrupted(self, message: Prompt.Interrupted) -> None:
        await self.interrupt(message.text)

    async def action_interrupt(self) -> None:
        await self.interrupt("")

    async def interrupt(self, typed: str) -> None:
        """Ctrl+C, as in other agent CLIs: stop what runs (the turn with its cell, a goal, a `!` command); with
        nothing running, empty the prompt of `typed` (kept in its history: Up brings it back); on an empty prompt
        say how to quit, and quit when it comes again within `QUIT_AGAIN_WITHIN` seconds."""
        if self.busy:
            self._quit_asked_at = None
            await self.action_cancel_turn()
            return
        if typed.strip():
            self._quit_asked_at = None
            self.query_one(Prompt).commit(typed)
            return
        now = time.monotonic()
        if self._quit_asked_at is not None and now - self._quit_asked_at < QUIT_AGAIN_WITHIN:
            self.app.exit()
            return
        self._quit_asked_at = now
        self.notify("Press Ctrl+C again to quit (or Ctrl+Q).", timeout=QUIT_AGAIN_WITHIN)

    @on(SummaryBlock.UnfoldRequested)
    async def _unfold(self, message: SummaryBlock.UnfoldRequested) -> None:
        """A ledger's message picked: that folded turn goes back into the next message (as `/unfold N`)."""
        if self.runtime is None:
            return
        try:
            turn = self.runtime.conversations.unfold(message.number)
        except LookupError as exc:
            self.notify(str(exc), severity="warning")
            return
        await self.chat.add_notice(Content(f"Turn {turn.number} goes back into your next message, word for word."),
                                   "info")  # fmt: skip

    @on(ErrorBlock.RetryRequested)
    async def _retry_clicked(self) -> None:
        await self.action_retry()

    async def action_retry(self) -> None:
        if self.busy:
            self.notify("Anton is still working. Press Escape to cancel first.", severity="warning")
        elif self.last_prompt is None:
            self.notify("There is no message to send again.", severity="warning")
        else:
            await self.send(self.last_prompt)

    # --- panes -------------------------------------------------------------------------------------------------------

    def action_toggle_scratchpad(self) -> None:
        self.panes.toggle("scratchpad")

    def action_toggle_inspector(self) -> None:
        self.panes.toggle("inspector")

    def action_next_pane(self) -> None:
        self.panes.next_pane()

    def on_pane_bar_chosen(self, message: PaneBar.Chosen) -> None:
        self.panes.show(message.pane)

    def action_resize_side(self, delta: int) -> None:
        self.panes.resize_side(delta)

    def action_toggle_maximize(self) -> None:
        self.panes.toggle_maximize()

    def action_find(self) -> None:
        """Find in the whole conversation, the parts no longer on screen included."""
        self.query_one(FindBar).open(self.runtime.transcript() if self.runtime is not None else [])

    def on_find_bar_closed(self) -> None:
        self.action_focus_prompt()

    def action_pick_message(self) -> None:
        """Highlight the latest message you sent, in the chat (see `widgets/chat_selection.py`)."""
        self.chat.action_select_message(-1)

    def action_focus_prompt(self) -> None:
        self.query_one(Prompt).focus()
