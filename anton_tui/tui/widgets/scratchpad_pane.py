"""Live view of the session's scratchpads: one tab per pad, one block per cell, output shown as it arrives.

The pane only shows; actions on a pad (cancel the running cell, reset, remove) are posted as messages that the screen
turns into calls on the engine.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static, TabbedContent, TabPane

from anton_tui.scratchpad.events import (
    CellFinished,
    CellHeartbeat,
    CellOutput,
    CellProgress,
    CellStarted,
    ScratchpadEvent,
)
from anton_tui.tui.css import stylesheet
from anton_tui.tui.widgets.cell_view import CellView

MAX_CELLS_PER_PAD = 50
REMOVE_CONFIRM_SECONDS = 3.0


class PadView(VerticalScroll):
    """The cells of one pad, newest at the bottom, following new output while scrolled to the end."""

    def __init__(self, pad: str) -> None:
        super().__init__(classes="pad")
        self.pad = pad

    def on_mount(self) -> None:
        self.anchor()

    @property
    def cells(self) -> list[CellView]:
        return list(self.query_children(CellView))

    async def add_cell(self, cell: CellView) -> None:
        await self.mount(cell)
        excess = len(self.cells) - MAX_CELLS_PER_PAD
        if excess > 0:
            await self.remove_children(self.cells[:excess])


class _PadRequest(Message):
    def __init__(self, pad: str) -> None:
        super().__init__()
        self.pad = pad


class ScratchpadPane(Vertical):
    """The scratchpad tabs; the screen feeds it `ScratchpadEvent`s with `apply`."""

    DEFAULT_CSS = stylesheet(__file__, "scratchpad_pane.tcss")
    SCOPED_CSS = False  # the rules style the widgets inside it too, as written

    HELP = """\
## Scratchpad

Anton runs Python in scratchpads ("pads"): persistent processes that keep their variables between cells. Each pad
has a tab; each cell shows what it is for, its code, its output while it runs, progress messages, and how it ended
(running, ok, error, killed or cancelled) with its duration.

With the pane focused: **k** cancels the running cell of the pad shown, **r** resets the pad (its variables are
lost), **Delete** twice removes it, **c** copies the code of the focused cell (or the latest one).
"""

    BINDINGS = [
        Binding("k", "cancel_cell", "Cancel cell", id="scratchpad.cancel-cell"),
        Binding("r", "reset_pad", "Reset pad", id="scratchpad.reset-pad"),
        Binding("delete", "remove_pad", "Remove pad", id="scratchpad.remove-pad"),
        Binding("c", "copy_code", "Copy code", id="scratchpad.copy-code"),
    ]

    ALLOW_MAXIMIZE = True

    class CancelCellRequested(_PadRequest):
        """Stop the cell running in `pad`."""

    class ResetPadRequested(_PadRequest):
        """Restart `pad` with empty state."""

    class RemovePadRequested(_PadRequest):
        """Close `pad` and forget it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._pad_ids: dict[str, str] = {}
        self._pad_counter = 0
        self._remove_armed: str | None = None
        self._remove_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            Content("No scratchpad yet. When Anton runs code, each pad gets a tab here."), id="scratchpad-empty"
        )
        yield TabbedContent(id="pads")

    def on_mount(self) -> None:
        self._show_empty_state()

    def _show_empty_state(self) -> None:
        empty = not self._pad_ids
        self.query_one("#scratchpad-empty").display = empty
        self.query_one("#pads").display = not empty

    @property
    def pad_names(self) -> list[str]:
        return list(self._pad_ids)

    def pad_view(self, pad: str) -> PadView | None:
        pane_id = self._pad_ids.get(pad)
        if pane_id is None:
            return None
        return self.query_one(f"#{pane_id}", TabPane).query_one(PadView)

    def cell(self, pad: str, index: int) -> CellView | None:
        view = self.pad_view(pad)
        if view is None:
            return None
        return next((cell for cell in reversed(view.cells) if cell.index == index), None)

    @property
    def active_pad(self) -> str | None:
        active = self.query_one("#pads", TabbedContent).active
        return next((pad for pad, pane_id in self._pad_ids.items() if pane_id == active), None)

    async def _ensure_pad(self, pad: str) -> PadView:
        view = self.pad_view(pad)
        if view is not None:
            return view
        self._pad_counter += 1
        pane_id = f"pad-{self._pad_counter}"
        self._pad_ids[pad] = pane_id
        view = PadView(pad)
        tabs = self.query_one("#pads", TabbedContent)
        await tabs.add_pane(TabPane(Content(pad), view, id=pane_id))
        tabs.active = pane_id
        self._show_empty_state()
        return view

    async def apply(self, event: ScratchpadEvent) -> None:
        if isinstance(event, CellStarted):
            view = await self._ensure_pad(event.pad)
            self.query_one("#pads", TabbedContent).active = self._pad_ids[event.pad]
            await view.add_cell(CellView(event.pad, event.index, event.description, event.code))
            return
        cell = self.cell(event.pad, event.index)
        if cell is None:
            return
        if isinstance(event, CellOutput):
            cell.append_output(event.stream, event.text)
        elif isinstance(event, CellProgress):
            cell.set_progress(event.message)
        elif isinstance(event, CellHeartbeat):
            cell.set_elapsed(event.elapsed)
        elif isinstance(event, CellFinished):
            cell.finish(event.cell)

    def mark_hidden(self, pad: str, index: int, kinds: tuple[str, ...]) -> None:
        """Say on a cell that its output is shown raw here while the model read it with secrets hidden."""
        cell = self.cell(pad, index)
        if cell is not None:
            cell.mark_hidden(kinds)

    def stop_running(self, status: str = "cancelled") -> None:
        """Mark cells still shown as running (their turn ended without finishing them)."""
        for cell in self.query(CellView):
            if cell.status == "running":
                cell.set_status(status)

    async def clear_pad(self, pad: str) -> None:
        view = self.pad_view(pad)
        if view is not None:
            await view.remove_children()

    async def drop_pad(self, pad: str) -> None:
        pane_id = self._pad_ids.pop(pad, None)
        if pane_id is not None:
            await self.query_one("#pads", TabbedContent).remove_pane(pane_id)
        self._show_empty_state()

    def _target_pad(self) -> str | None:
        pad = self.active_pad
        if pad is None:
            self.notify("There is no scratchpad yet.", severity="warning")
        return pad

    def action_cancel_cell(self) -> None:
        pad = self._target_pad()
        if pad is None:
            return
        view = self.pad_view(pad)
        if view is None or not any(cell.status == "running" for cell in view.cells):
            self.notify(f"No cell is running in {pad}.", severity="warning")
            return
        self.post_message(self.CancelCellRequested(pad))

    def action_reset_pad(self) -> None:
        if (pad := self._target_pad()) is not None:
            self.post_message(self.ResetPadRequested(pad))

    def action_remove_pad(self) -> None:
        pad = self._target_pad()
        if pad is None:
            return
        if self._remove_armed != pad:
            self._disarm_remove()
            self._remove_armed = pad
            self._remove_timer = self.set_timer(REMOVE_CONFIRM_SECONDS, self._disarm_remove)
            self.notify(f"Press Delete again to remove the pad {pad!r} and its variables.", severity="warning")
            return
        self._disarm_remove()
        self.post_message(self.RemovePadRequested(pad))

    def _disarm_remove(self) -> None:
        self._remove_armed = None
        if self._remove_timer is not None:
            self._remove_timer.stop()
            self._remove_timer = None

    def action_copy_code(self) -> None:
        focused = self.screen.focused
        focus_chain = focused.ancestors_with_self if focused is not None else []
        cell = next((node for node in focus_chain if isinstance(node, CellView)), None)
        if cell is None:
            pad = self.active_pad
            view = self.pad_view(pad) if pad is not None else None
            cells = view.cells if view is not None else []
            cell = cells[-1] if cells else None
        if cell is None:
            self.notify("There is no cell to copy.", severity="warning")
            return
        self.app.copy_to_clipboard(cell.code)
        self.notify(f"Copied the code of cell {cell.index} ({cell.pad}) to the clipboard.")
