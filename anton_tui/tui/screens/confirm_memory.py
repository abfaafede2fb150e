"""Copilot mode's question after an answer: which of the memories Anton held back should it keep, and which of
the changes the review holds for a person (a reflection's proposals, a skill from `/skill save`) should it apply?

`ConfirmMemoryScreen(engrams, reasons, changes)` lists the memories with kind, scope, confidence and source, then
the held changes, each with a check box (memories the memory mode asks about start checked, anything held for review
unchecked). The highlighted item is shown in full below the list: a held change as its diff (a skill's SKILL.md as a
coloured unified diff, scrollable). Its result is what to keep: the checked items, all of them, or none; the held
changes left out are rejected. `answer_confirmation(app, event)` shows it for a `MemoryConfirmationNeeded` event and
resolves the event's future, which is what the waiting chat turn is blocked on.

Brain analogy: the encoding gate in copilot mode, where the user decides what moves into long-term memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from anton_tui.agent.events import MemoryConfirmationNeeded
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.review.proposal import HeldChange

Kept = Engram | HeldChange


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


def change_prompt(change: HeldChange) -> Content:
    """One list line of a held change: `[kind] what` (a skill's title starts with its label; an entry's text follows
    its file), then where it came from (never parsed as markup)."""
    what = " ".join(change.title.split())
    return Content.assemble(
        ("⚠ held · ", "bold $text-warning"),
        (f"[{change.kind}]", "bold"),
        " ",
        Content(what if change.kind == "skill" else f"{change.target}: {what}"),
        ("  · from " + change.source, "dim") if change.source else "",
    )


DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "$text-accent"), ("+", "$text-success"), ("-", "$text-error"))


def diff_lines(diff: str) -> Content:
    """A unified diff with its added lines green, removed lines red and hunk headers marked."""
    lines = []
    for line in diff.splitlines():
        style = next((style for prefix, style in DIFF_STYLES if line.startswith(prefix)), "")
        lines.append(Content.styled(line, style) if style else Content(line))
    return Content("\n").join(lines)


def change_detail(change: HeldChange) -> Content:
    """A held change in full: what and why it was held, then its diff, coloured (a skill's SKILL.md line by line)."""
    head = Content.assemble(
        (f"[{change.kind}] {change.target}", "bold"),
        (f" · from {change.source}" if change.source else "", "dim"),
        "\n",
        (change.why, "$text-warning"),
        "\n",
    )
    return Content.assemble(head, diff_lines(change.diff))


class ConfirmMemoryScreen(ModalScreen[list[Kept]]):
    """Choose which held-back memories to save and held changes to apply. Enter/S keeps the checked ones, A all, D or
    Escape none."""

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
agent; they wait for you even in autopilot and start unchecked. Changes marked **held** are ones the review left to
you (a reflection's proposals, a skill from `/skill save`): the highlighted one is shown below as its diff, and
those you leave unchecked are rejected (the History tab and `/reflections` record it). **Space** checks or unchecks
the highlighted item, **Enter** (or **S**) keeps the checked ones, **A** keeps all of them, **D** or **Escape**
discards all of them.
"""

    def __init__(
        self, engrams: Sequence[Engram], reasons: Sequence[Sequence[str]] = (), changes: Sequence[HeldChange] = ()
    ) -> None:
        super().__init__()
        self.engrams: tuple[Engram, ...] = tuple(engrams)
        # why each was held for review (the trust gate); empty for those the memory mode asks about
        self.reasons: tuple[tuple[str, ...], ...] = tuple(tuple(r) for r in reasons) + ((),) * (
            len(self.engrams) - len(reasons)
        )
        self.changes: tuple[HeldChange, ...] = tuple(changes)  # held by the review: they follow the memories

    @property
    def items(self) -> tuple[Kept, ...]:
        return (*self.engrams, *self.changes)

    def _line(self, index: int) -> Content:
        if index >= len(self.engrams):
            return change_prompt(self.changes[index - len(self.engrams)])
        line = engram_prompt(self.engrams[index])
        return Content.assemble(("⚠ held · ", "bold $text-warning"), line) if self.reasons[index] else line

    def _held(self, index: int) -> bool:
        return index >= len(self.engrams) or bool(self.reasons[index])

    def _detail(self, index: int) -> Content:
        if index >= len(self.engrams):
            return change_detail(self.changes[index - len(self.engrams)])
        detail = engram_detail(self.engrams[index])
        held = self.reasons[index]
        if not held:
            return detail
        return Content.assemble(detail, "\n", ("Held for review: " + "; ".join(held), "$text-warning"))

    def _title(self) -> str:
        count, changes = len(self.engrams), len(self.changes)
        memories = "this memory" if count == 1 else f"these {count} memories"
        held = "this held change" if changes == 1 else f"these {changes} held changes"
        if not changes:
            return f"Save {memories}?"
        return f"Apply {held}?" if not count else f"Save {memories} and apply {held}?"

    def compose(self) -> ComposeResult:
        items = self.items
        with Vertical(id="confirm-memory-dialog", classes="-changes" if self.changes else ""):
            yield Label(Content(self._title()), id="confirm-memory-title")
            yield Static(
                "Space checks or unchecks · Enter saves the checked ones · A saves all · D or Escape discards all",
                id="confirm-memory-hint",
                markup=False,
            )
            yield SelectionList[int](
                *(Selection(self._line(index), index, not self._held(index)) for index in range(len(items))),
                id="confirm-memory-list",
            )  # held ones start unchecked
            if self.changes:  # a diff is long: it scrolls
                with VerticalScroll(id="confirm-memory-diff"):
                    yield Static(self._detail(0), id="confirm-memory-detail")
            else:
                yield Static(self._detail(0) if items else "", id="confirm-memory-detail")
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
    def checked(self) -> list[Kept]:
        chosen = set(self.query_one(SelectionList).selected)
        return [item for index, item in enumerate(self.items) if index in chosen]

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"save-checked": self.action_save_checked, "save-all": self.action_save_all}
        actions.get(event.button.id or "", self.action_discard_all)()

    def action_save_checked(self) -> None:
        self.dismiss(self.checked)

    def action_save_all(self) -> None:
        self.dismiss(list(self.items))

    def action_discard_all(self) -> None:
        self.dismiss([])


async def answer_confirmation(app: App[Any], event: MemoryConfirmationNeeded) -> list[Kept]:
    """Ask which of `event.engrams` and `event.changes` to keep and resolve `event.future` with them; returns the
    same list.

    It waits for the dialog with `push_screen_wait`, so it must run inside a worker (for example a method decorated
    with `@work`); called elsewhere Textual raises `NoActiveWorker`. If the wait is interrupted (the app closes),
    the future is cancelled: the engine saves nothing it was not told to, and what the trust gate held keeps
    waiting for the next start.
    """
    chosen: list[Kept] | None = None
    try:
        screen = ConfirmMemoryScreen(event.engrams, event.reasons, event.changes)
        answer: list[Kept] | None = await app.push_screen_wait(screen)
        chosen = list(answer or [])
    finally:
        if not event.future.done():
            if chosen is None:
                event.future.cancel()  # interrupted: nothing was decided (memories held for review keep waiting)
            else:
                event.future.set_result(chosen)
    return chosen or []
