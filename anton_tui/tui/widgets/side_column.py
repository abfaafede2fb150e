"""The right-hand column of the main screen: the scratchpad pane on top, the memory inspector below.

Before the runtime is built, the first frame's inspector shows the first rows of the memory files (`first_look`,
read before that frame), or is an empty frame (`InspectorPlaceholder`) when there are none to show; once that frame
is painted, the column says so (`FirstRowsShown`) and the app builds the runtime. `attach` hands the runtime to the
first, or swaps in the `InspectorPane` over the runtime for the empty frame: at once or, while a conversation is
being resumed, when the screen says the conversation is shown (`mount_inspector_if_waiting`). The scratchpad pane's
requests to cancel a cell, reset or remove a pad are carried out here through the runtime, in a worker, and the pane
follows when the runtime has done it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker

from anton_tui.tui.messages import ScratchpadControlDone, WorkerFailed
from anton_tui.tui.widgets.inspector_placeholder import InspectorPlaceholder
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane

if TYPE_CHECKING:
    from anton_tui.runtime import FirstLook, Runtime
    from anton_tui.tui.widgets.inspector import InspectorPane


class InspectorView(Protocol):
    """What the column asks of the widget under the scratchpad (the memory inspector, or its empty frame)."""

    def apply_event(self, event: object) -> None: ...


class SideColumn(Vertical):
    """The scratchpad and the inspector; `show_inspector=False` keeps the empty frame (tests, minimal setups)."""

    class InspectorMounted(Message):
        """The inspector over the runtime took the empty frame's place (its tabs are there, still empty)."""

    class FirstRowsShown(Message):
        """The frame with the first rows of the memory files is painted (or there are none to show): building the
        runtime may begin, which would have slowed that frame down by half, both wanting the one interpreter."""

    def __init__(
        self,
        runtime: Runtime | None,
        *,
        show_inspector: bool = True,
        first_look: FirstLook | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.runtime = runtime
        self.show_inspector = show_inspector
        self.first_look = first_look
        self.inspector_waiting = False  # the runtime came, the inspector waits for a resumed conversation
        self._inspector_view: InspectorView | None = None

    def compose(self) -> ComposeResult:
        yield ScratchpadPane(id="scratchpad")
        if self.show_inspector and (self.runtime is not None or self.first_look is not None):
            from anton_tui.tui.widgets.inspector import InspectorPane

            pane = InspectorPane(self.runtime, first_look=self.first_look, id="inspector")
            self._inspector_view = pane
            yield pane
        else:
            placeholder = InspectorPlaceholder(id="inspector")
            self._inspector_view = placeholder
            yield placeholder

    def on_mount(self) -> None:
        if self.runtime is not None or isinstance(self._inspector_view, InspectorPlaceholder):
            self.call_after_refresh(self.post_message, self.FirstRowsShown())  # no first rows: the first frame it is

    def on_inspector_pane_first_rows_painted(self, message: InspectorPane.FirstRowsPainted) -> None:
        message.stop()
        self.post_message(self.FirstRowsShown())

    @property
    def scratchpad(self) -> ScratchpadPane:
        return self.query_one(ScratchpadPane)

    @property
    def inspector(self) -> Widget:
        return self.query_one("#inspector")

    def apply_event(self, event: object) -> None:
        """An engine event, for the inspector to follow."""
        if self._inspector_view is not None:
            self._inspector_view.apply_event(event)

    def attach(self, runtime: Runtime, *, inspector_later: bool = False) -> None:
        """The runtime is built: the inspector over it replaces the empty frame, now or (`inspector_later`) when the
        screen calls `mount_inspector_if_waiting`."""
        first = self.runtime is None
        self.runtime = runtime
        if first and self.show_inspector:
            if inspector_later:
                self.inspector_waiting = True
            else:
                self.call_later(self._mount_inspector, runtime)

    def mount_inspector_if_waiting(self) -> None:
        if self.inspector_waiting and self.runtime is not None:
            self.inspector_waiting = False
            self.call_after_refresh(self._mount_inspector, self.runtime)

    async def _mount_inspector(self, runtime: Runtime) -> None:
        from anton_tui.tui.widgets.inspector import InspectorPane

        shown = self.query_one("#inspector")
        if isinstance(shown, InspectorPane):  # the first frame's, showing the start of the memory files: it takes it
            shown.attach_runtime(runtime)
            return
        self._inspector_view = None
        await shown.remove()
        pane = InspectorPane(runtime, id="inspector")  # (hidden by the screen's class if F3 hid the frame)
        await self.mount(pane)
        self._inspector_view = pane
        self.post_message(self.InspectorMounted())

    # --- the scratchpad pane's cancel, reset and remove ----------------------------------------------------------

    def on_scratchpad_pane_cancel_cell_requested(self, message: ScratchpadPane.CancelCellRequested) -> None:
        self._scratchpad_action("cancel_cell", message.pad)

    def on_scratchpad_pane_reset_pad_requested(self, message: ScratchpadPane.ResetPadRequested) -> None:
        self._scratchpad_action("reset_pad", message.pad)

    def on_scratchpad_pane_remove_pad_requested(self, message: ScratchpadPane.RemovePadRequested) -> None:
        self._scratchpad_action("remove_pad", message.pad)

    def _scratchpad_action(self, action: str, pad: str) -> None:
        if self.runtime is None or self.runtime.control is None:
            self.notify("This session cannot control its scratchpads.", severity="warning")
            return
        self.call_scratchpad(self.runtime, action, pad)

    @work(group="scratchpad-control", exit_on_error=False)
    async def call_scratchpad(self, runtime: Runtime, action: str, pad: str) -> None:
        result = await runtime.scratchpad_action(action, pad)
        self.post_message(ScratchpadControlDone(action, pad, result))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if (failed := WorkerFailed.of(event)) is not None:
            self.post_message(failed)

    async def on_scratchpad_control_done(self, message: ScratchpadControlDone) -> None:
        message.stop()
        if message.action == "reset_pad":
            await self.scratchpad.clear_pad(message.pad)
            self.notify(f"Pad {message.pad!r} was reset.")
        elif message.action == "remove_pad":
            await self.scratchpad.drop_pad(message.pad)
            self.notify(f"Pad {message.pad!r} was removed.")
        else:
            self.notify(f"Asked pad {message.pad!r} to stop its cell.")
