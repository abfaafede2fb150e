"""The main screen: chat and prompt on the left, scratchpad and inspector on the right, header and footer.

It runs each turn in a worker that only forwards engine events as messages; the handlers here route each event to
the pane that shows it. Every worker of the conversation runs on this screen, so its failures are handled in one
place (`on_worker_state_changed`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import reactive
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
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageUpdated,
)
from anton_tui.agent.goal import GoalFinished, GoalTurnStarted
from anton_tui.runtime import FirstLook, Runtime
from anton_tui.settings_sources import FirstFrame
from anton_tui.tui.command_registry import SlashCommand, parse_command_line
from anton_tui.tui.css import stylesheet
from anton_tui.tui.messages import (
    ChatCleared,
    CommandReplied,
    MemoryConfirmationAnswered,
    SessionEventMessage,
)
from anton_tui.tui.screens.goal_runs import GoalRuns
from anton_tui.tui.screens.main_panes import NARROW_BELOW, PaneLayout
from anton_tui.tui.screens.main_workspace import WorkspaceInput
from anton_tui.tui.textual_internals import PaintFirstScreen
from anton_tui.tui.widgets.chat import (
    MAX_BLOCKS,
    ChatView,
    ErrorBlock,
    acc_notice,
    history_notice,
    memory_notice,
    repair_notice,
    secrets_notice,
)
from anton_tui.tui.widgets.find_bar import FindBar
from anton_tui.tui.widgets.header import AntonHeader
from anton_tui.tui.widgets.inspector_placeholder import InspectorPlaceholder
from anton_tui.tui.widgets.pane_bar import PaneBar
from anton_tui.tui.widgets.prompt import Prompt, PromptBar
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane
from anton_tui.tui.widgets.summary_block import SummaryBlock

SIDE_WIDTH_DEFAULT = 40  # percent of the screen
SIDE_WIDTH_STEP = 5

_TURN = "turn"
SHOWN_ENTRIES = 12  # of a resumed conversation; the whole of it stays in the session


class Conversation(Vertical):
    """The chat with its prompt underneath; maximised as one."""

    ALLOW_MAXIMIZE = True


class MainScreen(
    WorkspaceInput, GoalRuns, PaneLayout, PaintFirstScreen
):  # `@`/`!`: main_workspace.py; /goal: goal_runs.py
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

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
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
**F1** shows this help, **Ctrl+Q** quits.
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
    ]

    side_width: reactive[int] = reactive(SIDE_WIDTH_DEFAULT, init=False)  # main.tcss sets the same default
    narrow_pane: reactive[str] = reactive("conversation", init=False)
    """The pane a narrow terminal shows across its width (see `PaneBar`)."""

    def __init__(
        self,
        runtime: Runtime | None,
        *,
        frame: FirstFrame,
        version: str,
        commands: list[SlashCommand],
        cursor_blink: bool = True,
        max_blocks: int | None = None,
        inspector: bool = True,
        first_look: FirstLook | None = None,
    ) -> None:
        """`runtime` may come later, through `attach_runtime` (a message sent before then waits for it); until then
        the header shows `frame`, read from the raw settings, and the inspector the rows of `first_look`."""
        super().__init__()
        self.runtime = runtime
        self._runtime_attached = asyncio.Event()
        if runtime is not None:
            self._runtime_attached.set()
        self.commands = commands
        self._header_args = {
            "version": version,
            "workspace": Path(frame.project_dir),
            "provider": frame.planning_provider,
            "model": frame.planning_model,
            "memory_mode": frame.effective_memory_mode,
        }
        self._cursor_blink = cursor_blink
        self._max_blocks = max_blocks
        self._show_inspector = inspector
        self._first_look = first_look
        self._hidden_note: list[str] = []  # under the heading of a shown conversation
        self._inspector_waiting = False  # the runtime came, the inspector waits for a resumed conversation
        self.last_prompt: str | None = None
        self._turn_worker: Worker | None = None
        self._prompt: Prompt | None = None
        self._edits_shown = 0  # the prompt's edit count when it was last painted
        self._turn_closed = True
        self._retry_offered = False
        self._take_width_class()
        self.add_class("-pane-conversation", update=False)

    def _take_width_class(self) -> None:
        """Start with the class of `HORIZONTAL_BREAKPOINTS` that fits the terminal: Textual sets it on the first
        resize, and a class that changes then restyles every widget on the screen before the first frame."""
        try:
            width = self.app.size.width
        except NoActiveAppError:
            return
        for threshold, name in sorted(self.HORIZONTAL_BREAKPOINTS, reverse=True):
            if width >= threshold:
                self.add_class(name, update=False)
                return

    def compose(self) -> ComposeResult:
        yield AntonHeader(id="header", **self._header_args)
        yield PaneBar(id="pane-bar")
        with Horizontal(id="body"):
            with Conversation(id="conversation"):
                chat = ChatView(id="chat", max_blocks=self._max_blocks or MAX_BLOCKS)
                yield chat
                yield FindBar(chat, id="find-bar")
                yield PromptBar(self.commands, cursor_blink=self._cursor_blink, id="prompt-bar")
            with Vertical(id="side"):
                yield ScratchpadPane(id="scratchpad")
                yield self._inspector_widget()
        yield Footer(compact=self._compact_footer())  # so that every key fits

    def _inspector_widget(self) -> Widget:
        if not self._show_inspector or (self.runtime is None and self._first_look is None):
            return InspectorPlaceholder(id="inspector")
        from anton_tui.tui.widgets.inspector import InspectorPane

        return InspectorPane(self.runtime, first_look=self._first_look, id="inspector")

    # Keystrokes first: the prompt is painted as soon as it asks to be (`PaintFirstScreen`). Once an edit of the
    # prompt is on screen, the chat may use the gap before the next key (`ChatStream.keystroke`).

    def first_painted(self) -> None:
        prompt = self._prompt
        if prompt is not None and prompt.edits != self._edits_shown:
            self._edits_shown = prompt.edits
            self.chat.note_keystroke()

    @property
    def inspector(self) -> Widget:
        return self.query_one("#inspector")

    def on_mount(self) -> None:
        self.call_after_refresh(self.fit_side_to_tabs)
        self._prompt = self.paint_first = self.query_one(Prompt)
        self._prompt.focus()
        if self.runtime is not None:
            self._runtime_arrived()

    def attach_runtime(self, runtime: Runtime, *, inspector_later: bool = False) -> None:
        """Hand over the runtime of an app that painted its first frame before building it. With `inspector_later`
        (a conversation is being resumed) the inspector waits for `mount_inspector_if_waiting`: the resumed
        conversation is what the user waits to see, and both at once take longer than one after the other."""
        if self.runtime is runtime and self._runtime_attached.is_set():
            return
        first = self.runtime is None
        self.runtime = runtime
        self._runtime_attached.set()
        if first and self._show_inspector:
            if inspector_later:
                self._inspector_waiting = True
            else:
                self.call_later(self._mount_inspector)
        self._runtime_arrived()

    def mount_inspector_if_waiting(self) -> None:
        if self._inspector_waiting:
            self._inspector_waiting = False
            self.call_after_refresh(self._mount_inspector)

    def _runtime_arrived(self) -> None:
        runtime = self.runtime
        if runtime.banner:
            self.call_later(self.chat.add_notice, Content(runtime.banner), "info")
        self.show_model(runtime)
        self._offer_next_prompt()
        if runtime.background_events is not None:
            self.follow_background_events()

    async def _mount_inspector(self) -> None:
        """The runtime came after the first frame: the inspector shown since takes it, or the inspector over it
        replaces the empty frame."""
        from anton_tui.tui.widgets.inspector import InspectorPane

        shown = self.query_one("#inspector")
        if isinstance(shown, InspectorPane) and self.runtime is not None:
            shown.attach_runtime(self.runtime)
            return
        await shown.remove()
        pane = InspectorPane(self.runtime, id="inspector")  # (hidden by the screen's class if F3 hid the frame)
        await self.query_one("#side").mount(pane)
        self.call_after_refresh(self.fit_side_to_tabs)

    def on_inspector_pane_loaded(self) -> None:
        self.fit_side_to_tabs()

    def fit_side_to_tabs(self) -> None:
        """Widen the right-hand column towards the width of all the inspector's tab labels, but never past half the
        screen: the chat keeps the larger part, and the tab row scrolls to keep the chosen tab in view."""
        from textual.widgets import Tab

        labels = [tab.label.cell_length for tab in self.query("#inspector Tab").results(Tab)]
        if labels:
            wanted = sum(width + 2 for width in labels) + 1  # + the border
            self.query_one("#side").styles.min_width = min(wanted, self.size.width // 2)

    def show_model(self, runtime: Runtime) -> None:
        """The header follows the runtime's provider, model and memory mode."""
        shown = runtime.first_frame  # the settings as the header shows them
        try:
            header = self.query_one(AntonHeader)
        except NoMatches:
            return  # the app is closing: the screen's widgets are already gone
        header.set_model(runtime.provider_label, shown.planning_model, shown.effective_memory_mode)

    async def show_conversation(self, entries: list, heading: str) -> None:
        """Show a resumed or rewound conversation: `heading` on top, then its last `SHOWN_ENTRIES` entries (typed
        messages, answers, tool calls, a summary) drawn as they were when it ran. One frame shows all of it: the
        layout and paint of a frame in between would cost as much again."""
        chat = self.chat
        with self.app.batch_update():
            await chat.clear()
            hidden = max(0, len(entries) - SHOWN_ENTRIES)
            self._hidden_note = [f"{hidden} earlier entries are not shown."] if hidden else []
            await chat.show_entries("\n".join([heading, *self._hidden_note]), entries[hidden:])
        self.post_message(self.ConversationShown())

    def retitle_conversation(self, heading: str) -> None:
        """A new heading for the conversation in the chat (the one shown early, now resumed)."""
        if self.chat.heading is not None and self.chat.heading.is_attached:
            self.chat.heading.update(Content("\n".join([heading, *self._hidden_note])))

    async def clear_conversation(self) -> None:
        await self.chat.clear()

    def fill_prompt(self, text: str) -> None:
        """Put `text` in the prompt to edit and send (after a rewind), the cursor at its end."""
        prompt = self.query_one(Prompt)
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()

    def _offer_next_prompt(self) -> None:
        prompt = self.query_one(Prompt)
        suggest = self.runtime.suggest_prompt if self.runtime is not None else None
        if suggest is not None and not prompt.text and (suggestion := suggest()):
            prompt.load_text(suggestion)
            prompt.select_all()  # Enter sends it; typing replaces it

    @work(group="background-events", exit_on_error=False)
    async def follow_background_events(self) -> None:
        """Forward events from engine work that outlives a turn (memory written or to confirm after it ended)."""
        queue = self.runtime.background_events  # type: ignore[union-attr]
        while True:
            self.post_message(SessionEventMessage(await queue.get()))

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def scratchpad(self) -> ScratchpadPane:
        return self.query_one(ScratchpadPane)

    @property
    def turn_worker(self) -> Worker | None:
        return self._turn_worker

    @property
    def busy(self) -> bool:
        return (self._turn_worker is not None and not self._turn_worker.is_finished) or self.shell_running

    # --- sending -------------------------------------------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _typing(self) -> None:
        """The user is writing a message: have the model SDK imported meanwhile (runtime/model_warm_up.py)."""
        if self.runtime is not None:
            self.runtime.warm_up_model()

    @on(Prompt.Submitted)
    async def _prompt_submitted(self, event: Prompt.Submitted) -> None:
        prompt = self.query_one(Prompt)
        if await self.shell_prompt(event.text):
            return
        if parse_command_line(event.text) is not None:
            if not self.knows_command(event.text) and not await prompt.names_skill_command(event.text):
                from anton_tui.tui.commands.parse import parse
                from anton_tui.tui.commands.registry import unknown

                self.notify(unknown(parse(event.text)).plain().strip(), severity="warning")
                return  # the text stays in the prompt, to be corrected
            prompt.commit()
            await self.run_command(event.text)
            return
        if self.busy:
            self.notify("Anton is still working on the last message. Press Escape to cancel it.", severity="warning")
            return
        prompt.commit()
        await self.send(event.text)

    def knows_command(self, text: str) -> bool:
        from anton_tui.tui.commands.parse import parse
        from anton_tui.tui.commands.registry import find

        name, _args = parse_command_line(text) or ("", "")
        if any(c.name == name and c.action for c in self.commands):
            return True
        parsed = parse(text)
        return parsed is not None and find(parsed) is not None

    async def run_command(self, text: str) -> None:
        """Run a slash command: a menu entry bound to an action runs it; anything else goes to the command table."""
        name, _args = parse_command_line(text) or ("", "")
        entry = next((c for c in self.commands if c.name == name and c.action), None)
        if entry is not None:
            await self.run_action(entry.action)
        else:
            self.slash_command(text)

    @work(group="command", exit_on_error=False)
    async def slash_command(self, text: str) -> None:
        """Commands may ask the user (modals) or call the model (/skill save), so they run in a worker."""
        from anton_tui.tui.commands import run

        output = await run(text, self.app.command_context())
        if output is not None:
            self.post_message(CommandReplied(text.strip(), output))

    async def on_command_replied(self, message: CommandReplied) -> None:
        await self.chat.add_command_output(message.line, message.output)

    async def on_chat_cleared(self, message: ChatCleared) -> None:
        await self.chat.clear()
        self.notify("Started a new conversation (memory, skills and past episodes stay).")

    async def send(self, text: str) -> None:
        """Show the message and start a turn with it."""
        self.last_prompt = text
        self._turn_closed = False
        self._retry_offered = False
        await self.chat.add_user_message(text)
        self.query_one(AntonHeader).set_status("working…", busy=True)
        self._turn_worker = self.run_turn(text)
        self.refresh_bindings()

    @work(group=_TURN, exclusive=True, exit_on_error=False)
    async def run_turn(self, text: str) -> None:
        await self._runtime_attached.wait()
        async for event in self.runtime.turn(text):  # type: ignore[union-attr]
            self.post_message(SessionEventMessage(event))

    # --- engine events -------------------------------------------------------------------------------------------

    async def on_session_event_message(self, message: SessionEventMessage) -> None:
        event = message.event
        chat = self.chat
        if await self.workspace_event(event):
            return
        match event:
            case AssistantTextDelta(text=text):
                chat.stream.write(text)
                return  # nothing else follows streamed text
            case AssistantMessageDone(text=text):
                await chat.end_answer(text)
            case ToolCallStarted():
                await chat.start_tool(event)
            case ToolCallFinished():
                await chat.finish_tool(event)
            case ScratchpadActivity(event=activity):
                await self.scratchpad.apply(activity)
                if self.narrow:
                    self.query_one(PaneBar).mark_news("scratchpad")
            case MemoryWritten(producer="acc"):
                pass  # the AccNudge that comes with it already shows the new rule, with its detector
            case MemoryWritten():
                await chat.add_notice(memory_notice(event), "memory")
            case SecretsRemoved():
                await chat.add_notice(secrets_notice(event), "secrets")
                if event.pad is not None and event.cell is not None:
                    self.scratchpad.mark_hidden(event.pad, event.cell, event.kinds)
            case MemoryConfirmationNeeded():
                self.query_one(AntonHeader).set_held(self.runtime.held_count)
                self._alert("Anton is waiting", "Memories to confirm.")
                self.confirm_memories(event)
            case AccNudge():
                await chat.add_notice(acc_notice(event), "acc")
            case HistoryRepaired():
                await chat.add_notice(repair_notice(event), "info")
            case HistorySummarised():
                detail = f"({event.folded} messages, about {event.tokens_before:,} → {event.tokens_after:,} tokens)"
                await chat.add_block(SummaryBlock(event.summary, detail))
            case HistoryTrimmed() | HistoryNotSaved():
                await chat.add_notice(history_notice(event), "info")
            case MemoryHistoryBroken(message=text):
                await chat.add_notice(Content(text), "info")
            case MemorySynced(line=line, ok=ok, waiting=waiting, detail=detail):
                self.query_one(AntonHeader).set_sync(line, ok, waiting)
                if detail:
                    await chat.add_notice(Content(detail), "info")
            case UsageUpdated():
                self.query_one(AntonHeader).show_usage(self.runtime.note_usage(event))  # tokens, cost, context
            case ErrorOccurred(message=text, retryable=retryable):
                self._alert("Anton: error", text)
                self._retry_offered = retryable
                await chat.add_error(text, retryable=retryable)
            case TurnFinished(stop_reason=reason):
                await self._close_turn(reason)
            case GoalTurnStarted() | GoalFinished():
                await self.show_goal_event(event)
        if (apply_event := getattr(self.inspector, "apply_event", None)) is not None:
            apply_event(event)

    def _alert(self, title: str, body: str) -> None:
        """Bell and desktop notification, while the terminal is in the background (see `tui/attention.py`)."""
        attention = getattr(self.app, "attention", None)
        if attention is not None:
            attention.alert(title, body)

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

    @work(group="memory-confirmation", exit_on_error=False)
    async def confirm_memories(self, event: MemoryConfirmationNeeded) -> None:
        """Ask the user which held-back memories to keep; the engine waits on the event's future."""
        from anton_tui.tui.screens.confirm_memory import answer_confirmation

        keep = await answer_confirmation(self.app, event)
        if self.runtime is not None and not event.future.cancelled():  # those asked about no longer wait
            self.query_one(AntonHeader).set_held(self.runtime.held_count_without(event.engrams))
        self.post_message(MemoryConfirmationAnswered(len(keep), len(event.engrams)))

    async def on_memory_confirmation_answered(self, message: MemoryConfirmationAnswered) -> None:
        await self.chat.add_notice(
            Content(f"Kept {message.kept} of {message.offered} memories waiting for confirmation."), "memory"
        )

    # --- workers -------------------------------------------------------------------------------------------------

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        self.on_worker_state_changed_shell(event)
        if event.state == WorkerState.ERROR:
            error = worker.error
            text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            if worker.group == _TURN:
                self._retry_offered = True
                self._alert("Anton: error", text)
                await self.chat.add_error(text, retryable=True)
            else:
                self.notify(text, title="Something went wrong", severity="error", timeout=10)
        if worker.group == _TURN and worker is self._turn_worker and worker.is_finished:
            reason = {WorkerState.CANCELLED: "cancelled", WorkerState.ERROR: "error"}.get(event.state, "end_turn")
            await self._close_turn(reason)

    # --- actions -------------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy
        if action == "retry":
            return not self.busy and self._retry_offered and self.last_prompt is not None
        if action == "next_pane":
            return self.narrow
        if action == "toggle_maximize":
            return not self.narrow  # one pane already fills a narrow screen
        return True

    async def action_cancel_turn(self) -> None:
        if self.stop_shell() or not self.busy:
            return
        if self.runtime is not None:
            await self.runtime.cancel()
        if self._turn_worker is not None:
            self._turn_worker.cancel()

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
