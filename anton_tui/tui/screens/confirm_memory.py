"""Copilot mode's question after an answer: which of the memories Anton held back should it keep?

`ConfirmMemoryScreen(engrams)` lists them with kind, scope, confidence and source, each with a check box (all
checked at first). Its result is the list of engrams to save: the checked ones, all of them, or none.
`answer_confirmation(app, event)` shows it for a `MemoryConfirmationNeeded` event and resolves the event's future,
which is what the waiting chat turn is blocked on.

Brain analogy: the encoding gate in copilot mode, where the user decides what moves into long-term memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from anton_tui.agent.events import MemoryConfirmationNeeded
from anton_tui.memory.engrams.engram import Engram


def _details(engram: Engram) -> str:
    details = [engram.scope or "project"]
    if engram.confidence:
        details.append(f"confidence {engram.confidence}")
    if engram.source:
        details.append(f"from {engram.source}")
    if engram.topic:
        details.append(f"topic {engram.topic}")
    return " · ".join(details)


def engram_prompt(engram: Engram) -> Content:
    """One list line: `[kind] text`, then dimmed scope, confidence, source and topic (never parsed as markup)."""
    return Content.assemble(
        (f"[{engram.kind}]", "bold"),
        " ",
        Content(" ".join(engram.text.split())),
        ("  · " + _details(engram), "dim"),
    )


def engram_detail(engram: Engram) -> Content:
    """The highlighted memory in full, for when its line in the list is cut off."""
    return Content.assemble((f"[{engram.kind}] ", "bold"), (_details(engram), "dim"), "\n", Content(engram.text))


class ConfirmMemoryScreen(ModalScreen[list[Engram]]):
    """Choose which held-back memories to save. Enter/S saves the checked ones, A all, D or Escape none."""

    CSS_PATH = "confirm_memory.tcss"
    BINDINGS = [
        Binding("enter,s", "save_checked", "Save checked", id="confirm_memory.save-checked", priority=True),
        Binding("a", "save_all", "Save all", id="confirm_memory.save-all"),
        Binding("d,escape", "discard_all", "Discard all", id="confirm_memory.discard-all"),
    ]
    HELP = """\
## Memories waiting for confirmation

In copilot mode Anton saves what it is sure of and asks about the rest. Memories marked **held** were learned
after outside content entered a turn (a web page, a file outside the project) or read like an instruction to the
agent; they wait for you even in autopilot and start unchecked. **Space** checks or unchecks the
highlighted memory, **Enter** (or **S**) saves the checked ones, **A** saves all of them, **D** or **Escape**
discards all of them.
"""

    def __init__(self, engrams: Sequence[Engram], reasons: Sequence[Sequence[str]] = ()) -> None:
        super().__init__()
        self.engrams: tuple[Engram, ...] = tuple(engrams)
        # why each was held for review (the trust gate); empty for those the memory mode asks about
        self.reasons: tuple[tuple[str, ...], ...] = tuple(tuple(r) for r in reasons) + ((),) * (
            len(self.engrams) - len(reasons)
        )

    def _line(self, index: int) -> Content:
        line = engram_prompt(self.engrams[index])
        return Content.assemble(("⚠ held · ", "bold $text-warning"), line) if self.reasons[index] else line

    def _detail(self, index: int) -> Content:
        detail = engram_detail(self.engrams[index])
        held = self.reasons[index]
        if not held:
            return detail
        return Content.assemble(detail, "\n", ("Held for review: " + "; ".join(held), "$text-warning"))

    def compose(self) -> ComposeResult:
        count = len(self.engrams)
        with Vertical(id="confirm-memory-dialog"):
            what = "this memory" if count == 1 else f"these {count} memories"
            yield Label(Content(f"Save {what}?"), id="confirm-memory-title")
            yield Static(
                "Space checks or unchecks · Enter saves the checked ones · A saves all · D or Escape discards all",
                id="confirm-memory-hint",
                markup=False,
            )
            yield SelectionList[int](
                *(
                    Selection(self._line(index), index, not self.reasons[index]) for index in range(len(self.engrams))
                ),  # held ones start unchecked
                id="confirm-memory-list",
            )
            yield Static(self._detail(0) if self.engrams else "", id="confirm-memory-detail")
            with Horizontal(id="confirm-memory-buttons"):
                yield Button("Save checked", variant="primary", id="save-checked")
                yield Button("Save all", id="save-all")
                yield Button("Discard all", variant="error", id="discard-all")

    def on_mount(self) -> None:
        for button in self.query(Button):
            button.can_focus = False
        self.query_one(SelectionList).focus()

    @on(SelectionList.SelectionHighlighted)
    def _highlighted(self, event: SelectionList.SelectionHighlighted) -> None:
        self.query_one("#confirm-memory-detail", Static).update(self._detail(event.selection.value))

    @property
    def checked(self) -> list[Engram]:
        chosen = set(self.query_one(SelectionList).selected)
        return [engram for index, engram in enumerate(self.engrams) if index in chosen]

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"save-checked": self.action_save_checked, "save-all": self.action_save_all}
        actions.get(event.button.id or "", self.action_discard_all)()

    def action_save_checked(self) -> None:
        self.dismiss(self.checked)

    def action_save_all(self) -> None:
        self.dismiss(list(self.engrams))

    def action_discard_all(self) -> None:
        self.dismiss([])


async def answer_confirmation(app: App[Any], event: MemoryConfirmationNeeded) -> list[Engram]:
    """Ask which of `event.engrams` to keep and resolve `event.future` with them; returns the same list.

    It waits for the dialog with `push_screen_wait`, so it must run inside a worker (for example a method decorated
    with `@work`); called elsewhere Textual raises `NoActiveWorker`. If the wait is interrupted (the app closes),
    the future is cancelled: the engine saves nothing it was not told to, and what the trust gate held keeps
    waiting for the next start.
    """
    chosen: list[Engram] | None = None
    try:
        screen = ConfirmMemoryScreen(event.engrams, event.reasons)
        answer: list[Engram] | None = await app.push_screen_wait(screen)
        chosen = list(answer or [])
    finally:
        if not event.future.done():
            if chosen is None:
                event.future.cancel()  # interrupted: nothing was decided (memories held for review keep waiting)
            else:
                event.future.set_result(chosen)
    return chosen or []
