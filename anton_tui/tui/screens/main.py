"""The main screen: chat and prompt on the left, scratchpad and inspector on the right, header and footer.

The screen lays its widgets out and hands each job to a part it holds, each keeping its own state: `PaneLayout`
(which panes show and how wide), the two columns (`Conversation`: chat and prompt; `SideColumn`: scratchpad and
inspector), `RuntimeHandover` (the runtime, which may come after the first frame), `PromptLines` (what a line sent
from the prompt does), `Turns` (the running turn or `/goal` run, whose worker only forwards the engine's events as
messages), `SessionEventRouter` (which part shows each of those events), `WaitingReviews` (when a review of held
memories opens, and the message that waits for it), `QuitPresses` (Ctrl+C twice quits), and the `ShellRunner` of `!`
commands and `CommandRunner` of slash commands. Its message handlers and key actions, which Textual looks for on the
screen, only hand over to them. A failed worker, the screen's own or a part's, is shown in one place (`show_failure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.types import NoActiveAppError
from textual.widget import Widget
from textual.widgets import Footer, TextArea
from textual.worker import Worker, WorkerState

from anton_tui.settings_sources import FirstFrame
from anton_tui.tui.command_registry import SlashCommand
from anton_tui.tui.css import stylesheet
from anton_tui.tui.messages import (
    ChatCleared,
    CommandReplied,
    MemoryConfirmationAnswered,
    SessionEventMessage,
    WorkerFailed,
)
from anton_tui.tui.screens.pane_layout import SIDE_WIDTH_DEFAULT, SIDE_WIDTH_STEP, PaneLayout
from anton_tui.tui.screens.prompt_lines import PromptLines
from anton_tui.tui.screens.quit_presses import QuitPresses
from anton_tui.tui.screens.runtime_handover import RuntimeHandover
from anton_tui.tui.screens.session_events import SessionEventRouter
from anton_tui.tui.screens.turns import TURN_GROUP, Turns, failure_text
from anton_tui.tui.screens.waiting_reviews import WaitingReviews
from anton_tui.tui.textual_internals import PaintFirstScreen
from anton_tui.tui.widgets.chat import ChatView, ErrorBlock
from anton_tui.tui.widgets.command_runner import CommandRunner
from anton_tui.tui.widgets.conversation import Conversation
from anton_tui.tui.widgets.find_bar import FindBar
from anton_tui.tui.widgets.goal_runner import GoalRunner
from anton_tui.tui.widgets.header import AntonHeader
from anton_tui.tui.widgets.pane_bar import PaneBar
from anton_tui.tui.widgets.prompt import Prompt
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane
from anton_tui.tui.widgets.shell_runner import ShellRunner
from anton_tui.tui.widgets.side_column import SideColumn
from anton_tui.tui.widgets.summary_block import SummaryBlock

if TYPE_CHECKING:
    from anton_tui.runtime import FirstLook, Runtime
    from anton_tui.tui.commands.context import CommandUI

__all__ = ["SIDE_WIDTH_DEFAULT", "SIDE_WIDTH_STEP", "MainScreen"]


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
        commands: Sequence[SlashCommand],
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
        self.handover = RuntimeHandover(self, runtime)
        self.commands = commands
        self.command_ui = command_ui
        self.frame = frame
        self.version = version
        self._cursor_blink = cursor_blink
        self._max_blocks = max_blocks
        self._show_inspector = inspector
        self._first_look = first_look
        self._prompt: Prompt | None = None
        self._edits_shown = 0  # the prompt's edit count when it was last painted
        self.turns = Turns(self)
        self.reviews = WaitingReviews(self)
        self.router = SessionEventRouter(self)
        self.lines = PromptLines(self)
        self.quit_presses = QuitPresses(self)
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
            self.handover.arrived(self.runtime)

    def on_resize(self, event: events.Resize) -> None:
        self.panes.fit(event.size.width)

    @property
    def runtime(self) -> Runtime | None:
        return self.handover.runtime

    def attach_runtime(self, runtime: Runtime, *, inspector_later: bool = False) -> None:
        """Hand over the runtime of an app that painted its first frame before building it. With `inspector_later`
        (a conversation is being resumed) the inspector waits for `mount_inspector_if_waiting`: the resumed
        conversation is what the user waits to see, and both at once take longer than one after the other."""
        self.handover.attach(runtime, inspector_later=inspector_later)

    def mount_inspector_if_waiting(self) -> None:
        self.side.mount_inspector_if_waiting()

    def on_side_column_inspector_mounted(self) -> None:
        self.call_after_refresh(self.panes.fit_side_to_tabs)

    def on_inspector_pane_loaded(self) -> None:
        self.panes.fit_side_to_tabs()

    def show_model(self, runtime: Runtime) -> None:
        """The header follows the runtime's provider, model and memory mode."""
        self.handover.show_model(runtime)

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
    def header(self) -> AntonHeader:
        return self.query_one(AntonHeader)

    @property
    def shell(self) -> ShellRunner:
        return self.query_one(ShellRunner)

    @property
    def command_runner(self) -> CommandRunner:
        return self.query_one(CommandRunner)

    @property
    def turn_worker(self) -> Worker[Any] | None:
        """The worker of the running turn, or of the running goal."""
        return self.turns.worker

    @property
    def busy(self) -> bool:
        return self.turns.running or self.shell.running

    async def ready_runtime(self) -> Runtime:
        """The runtime, once the app has built it."""
        return await self.handover.ready()

    @property
    def attached_runtime(self) -> Runtime:
        return self.handover.attached

    def alert(self, title: str, body: str) -> None:
        """Bell and desktop notification, while the terminal is in the background (the app decides)."""
        self.post_message(self.AttentionWanted(title, body))

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
        """What the user sent from the prompt (`text`, still in it): see `PromptLines`."""
        await self.lines.accept(text)

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
        await self.turns.send(text)

    def turn_closed(self, reason: str) -> None:
        """The turn is over in the UI: the keys follow, the next prompt is offered, and the app applies what waited."""
        self.refresh_bindings()
        self.handover.offer_next_prompt()
        self.post_message(self.TurnEnded(reason))

    # --- `!` commands and `/goal` runs -----------------------------------------------------------------------------

    def on_shell_runner_ended(self) -> None:
        self.refresh_bindings()

    def start_goal(self, objective: str, max_turns: int) -> str | None:
        """Start working on `objective` over up to `max_turns` turns; the reason when it cannot start now."""
        return self.turns.start_goal(objective, max_turns)

    async def on_goal_runner_ended(self, message: GoalRunner.Ended) -> None:
        await self.turns.goal_ended(message)

    # --- engine events and memories waiting for a review -------------------------------------------------------

    async def on_session_event_message(self, message: SessionEventMessage) -> None:
        await self.router.route(message.event)

    def action_review_memories(self) -> None:
        self.reviews.open_asked()

    def on_review_bar_open_requested(self) -> None:
        self.reviews.open()

    async def on_memory_confirmation_answered(self, message: MemoryConfirmationAnswered) -> None:
        await self.reviews.answered(message)

    # --- workers -------------------------------------------------------------------------------------------------

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR and worker.error is not None:
            await self.show_failure(worker.error, in_turn=worker.group == TURN_GROUP)
        if await self.turns.worker_changed(event):
            await self.reviews.send_held_message()

    async def on_worker_failed(self, message: WorkerFailed) -> None:
        await self.show_failure(message.error)

    async def show_failure(self, error: BaseException, *, in_turn: bool = False) -> None:
        """A worker failed: a turn's failure goes in the chat, to be retried; any other is a toast."""
        if in_turn:
            await self.turns.fail(error)
        else:
            self.notify(failure_text(error), title="Something went wrong", severity="error", timeout=10)

    # --- actions -------------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy
        if action == "review_memories":
            return self.reviews.waiting > 0
        if action == "retry":
            return not self.busy and self.turns.can_retry
        if action == "next_pane":
            return self.panes.narrow
        if action == "toggle_maximize":
            return not self.panes.narrow  # one pane already fills a narrow screen
        return True

    async def action_cancel_turn(self) -> None:
        if self.shell.stop() or not self.busy:
            return
        await self.turns.cancel()

    @on(Prompt.Interrupted)
    async def _prompt_interrupted(self, message: Prompt.Interrupted) -> None:
        await self.interrupt(message.text)

    async def action_interrupt(self) -> None:
        await self.interrupt("")

    async def interrupt(self, typed: str) -> None:
        """Ctrl+C, as in other agent CLIs: stop what runs (the turn with its cell, a goal, a `!` command); with
        nothing running, empty the prompt of `typed` (kept in its history: Up brings it back); on an empty prompt
        say how to quit, and quit when it comes again soon (`QuitPresses`)."""
        if self.busy:
            self.quit_presses.forget()
            await self.action_cancel_turn()
        elif typed.strip():
            self.quit_presses.forget()
            self.query_one(Prompt).commit(typed)
        else:
            self.quit_presses.press()

    @on(SummaryBlock.UnfoldRequested)
    async def _unfold(self, message: SummaryBlock.UnfoldRequested) -> None:
        await self.lines.unfold(message.number)

    @on(ErrorBlock.RetryRequested)
    async def _retry_clicked(self) -> None:
        await self.action_retry()

    async def action_retry(self) -> None:
        await self.lines.retry()

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
