"""The Reflections screen: the chain of daily, weekly and monthly reflections, the one selected in full, and the
changes it proposed with what the review made of each, to apply, reject or undo. `/reflections` opens it.

It reads through the runtime's reflection service (`chain`, `page`, `apply`, `reject`, `undo`), whose work runs off
the event loop, in workers that only post messages. The last row of the chain gathers the proposals made outside a reflection (`/skill save`, memories
the AI reviewer decided). Applying and undoing ask first; a decision that cannot be carried out (the target moved,
the change was decided meanwhile) says why and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from anton_tui.runtime import ProposalNotDecided, ProposalRow, ReflectionChain, ReflectionPage, Runtime
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.widgets.inspector.base import ColumnSpec, FixedColumnsTable, cursor_key, pick, set_columns

CHAIN_COLUMNS = (  # the period says its kind: 2026-11-20 (a day), 2026-W47 (an ISO week), 2026-11 (a month)
    ColumnSpec("period", "Period", 10),
    ColumnSpec("proposals", "Changes", 7, drop=1),
    ColumnSpec("title", "Title", None),
)
PROPOSAL_COLUMNS = (
    ColumnSpec("status", "Status", 8),
    ColumnSpec("kind", "Kind", 7, drop=1),
    ColumnSpec("change", "Change", None),
)
STATUS_STYLE = {"applied": "$text-success", "held": "bold $text-warning", "rejected": "$text-error", "undone": "dim"}


def _proposals_cell(row: Any) -> str:
    """How many changes a reflection proposed, or how many of them wait for the user."""
    if row.held:
        return f"{row.held} held"
    return str(row.proposals) if row.proposals else ""


class ReflectionsScreen(Screen[None]):
    """The reflection chain and its proposals (see the module docstring)."""

    CSS_PATH = "reflections.tcss"
    BINDINGS = [
        Binding("a", "apply", "Apply", id="reflections.apply"),
        Binding("x", "reject", "Reject", id="reflections.reject"),
        Binding("u", "undo", "Undo", id="reflections.undo"),
        Binding("r", "reload", "Reload", id="reflections.reload"),
        Binding("escape", "close", "Close", id="reflections.close"),
    ]
    HELP = """\
## Reflections

Anton looks back over its work: a **daily** reflection over the day's conversations, code cells, errors and memory
changes, a **weekly** one over the week's dailies, a **monthly** one over the weeks and the skills' use. A quiet
period gets a one-line note and no model call. Each reflection may propose changes to memory (a rule, a lesson, a
fact about you, a skill); every one goes through the review (`ANTON_REVIEW_LEVEL`) and is **applied**, **held** for
you, or **rejected**, each decision recorded in the History tab.

Move through the chain to read a reflection and its proposals; `Tab` moves to the proposals, `Escape` closes.

- `a`: apply the selected proposal (held or rejected ones too; you are asked first)
- `x`: reject a held proposal
- `u`: undo an applied proposal (its target goes back to what it was; you are asked first)
- `r`: reload

The last row lists the proposals made outside a reflection: skills drafted by `/skill save`, and memories the AI
reviewer decided.
"""

    class Listed(Message):
        def __init__(self, chain: ReflectionChain | None, error: str | None) -> None:
            super().__init__()
            self.chain = chain
            self.error = error

    class Paged(Message):
        def __init__(self, key: str, page: ReflectionPage | None) -> None:
            super().__init__()
            self.key = key
            self.page = page

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime
        self.chain: ReflectionChain | None = None
        self.page: ReflectionPage | None = None
        self.keys: list[str] = []  # the chain's rows: "daily:2026-11-20", ..., "other:"
        self._fitted: tuple[int, int] = (0, 0)

    def compose(self) -> ComposeResult:
        with Vertical(id="reflections"):
            yield Label(Content("Reflections"), id="reflections-title")
            yield Static(classes="status")
            with Horizontal(id="reflections-body"):
                yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, classes="chain")
                with Vertical(id="reflections-page"):
                    yield FixedColumnsTable(cursor_type="row", classes="proposals")
                    with VerticalScroll(classes="reflection"):
                        yield Static(classes="reflection-text")
        yield Footer()

    def on_mount(self) -> None:
        self._status("Loading…")
        self.proposal_table.display = False
        self.chain_table.focus()
        self.refresh_data()

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        widths = (self.chain_table.size.width, self.proposal_table.size.width)
        if self.is_mounted and widths != self._fitted:
            self._fitted = widths
            self._fill_chain()
            self._show_page(self.page)

    def _status(self, text: str) -> None:
        self.query_one(".status", Static).update(Content(text))

    @property
    def chain_table(self) -> FixedColumnsTable:
        return self.query_one(".chain", FixedColumnsTable)

    @property
    def proposal_table(self) -> FixedColumnsTable:
        return self.query_one(".proposals", FixedColumnsTable)

    # ---- loading -----------------------------------------------------------------------------------------------

    def refresh_data(self) -> None:
        self._list()

    @work(exit_on_error=False, group="reflections-list")
    async def _list(self) -> None:
        try:
            chain = await self.runtime.reflection.chain()
        except Exception as exc:
            self.post_message(self.Listed(None, f"The reflections cannot be read: {exc}"))
        else:
            self.post_message(self.Listed(chain, None))

    @on(Listed)
    def _listed(self, message: Listed) -> None:
        message.stop()
        if message.error or message.chain is None:
            self._status(message.error or "")
            return
        self.chain = chain = message.chain
        if not chain.rows and not chain.other:
            self._status("No reflections yet: the first is written once a day with some work in it has ended.")
        elif chain.held:
            waiting = "proposal waits" if chain.held == 1 else "proposals wait"
            self._status(f"{len(chain.rows)} reflections · {chain.held} {waiting} for you: a applies, x rejects.")
        else:
            self._status(f"{len(chain.rows)} reflections, newest first. a: apply · x: reject · u: undo")
        self._fill_chain()

    def _fill_chain(self) -> None:
        table = self.chain_table
        chain = self.chain
        if chain is None:
            return
        kept = cursor_key(table)
        shown = set_columns(table, CHAIN_COLUMNS)
        self.keys = []
        for row in chain.rows:
            title = "(quiet)" if row.quiet else row.title
            if row.held:  # seen even when the table is too narrow for the Changes column
                title = f"⚠ {title}"
            key = f"{row.kind}:{row.label}"
            table.add_row(*pick((row.label, _proposals_cell(row), title), shown), key=key)
            self.keys.append(key)
        if chain.other:
            table.add_row(*pick(("other", str(chain.other), "Proposals outside reflections"), shown), key="other:")
            self.keys.append("other:")
        if not self.keys:
            self._show_page(None)
            return
        index = self.keys.index(kept) if kept in self.keys else 0
        table.move_cursor(row=index, animate=False)
        self._open(self.keys[index])

    @on(DataTable.RowHighlighted, ".chain")
    def _chain_moved(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.keys):
            self._open(self.keys[event.cursor_row])

    @on(DataTable.RowHighlighted, ".proposals")
    def _proposal_moved(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_text()

    @work(exit_on_error=False, group="reflections-page")  # a late answer for another row is dropped (`_paged`)
    async def _open(self, key: str) -> None:
        kind, _, label = key.partition(":")
        page = await self.runtime.reflection.page(kind, label)
        self.post_message(self.Paged(key, page))

    @on(Paged)
    def _paged(self, message: Paged) -> None:
        message.stop()
        if cursor_key(self.chain_table) not in (message.key, None):
            return  # the cursor moved on meanwhile
        self._show_page(message.page)

    def _show_page(self, page: ReflectionPage | None) -> None:
        self.page = page
        table = self.proposal_table
        kept = cursor_key(table)
        shown = set_columns(table, PROPOSAL_COLUMNS)
        rows = page.proposals if page is not None else ()
        for proposal in rows:
            table.add_row(*pick((proposal.status, proposal.kind, f"{proposal.target}: {proposal.title}"), shown),
                          key=proposal.id)  # fmt: skip
        table.display = bool(rows)
        ids = [proposal.id for proposal in rows]
        if ids:
            table.move_cursor(row=ids.index(kept) if kept in ids else 0, animate=False)
        self._show_text()

    def selected(self) -> ProposalRow | None:
        page = self.page
        if page is None or not page.proposals:
            return None
        row = self.proposal_table.cursor_row
        return page.proposals[row] if 0 <= row < len(page.proposals) else None

    def _show_text(self) -> None:
        text = self.query_one(".reflection-text", Static)
        page = self.page
        if page is None:
            text.update(Content(""))
            return
        parts: list[Content | str | tuple[str, str]] = []
        proposal = self.selected()
        if proposal is not None:
            style = STATUS_STYLE.get(proposal.status, "")
            parts += [(f"{proposal.status.upper()}", style), (f" · {proposal.kind} · {proposal.target}", "dim"), "\n"]
            parts += [Content(proposal.why), "\n"]
            if proposal.story[:-1]:
                parts += [("\n".join(proposal.story[:-1]), "dim"), "\n"]
            parts += ["\n"]
        parts.append(Content(page.text))
        text.update(Content.assemble(*parts))

    # ---- the user's decisions ----------------------------------------------------------------------------------

    def action_reload(self) -> None:
        self.refresh_data()

    def action_apply(self) -> None:
        self._decide_selected("apply", lambda row: row.can_apply, "Select a held or rejected proposal to apply it.",
                              ask="Apply this {kind} to {target}?")  # fmt: skip

    def action_reject(self) -> None:
        self._decide_selected("reject", lambda row: row.can_reject,
                              "Only a proposal waiting for you can be rejected (undo an applied one).")  # fmt: skip

    def action_undo(self) -> None:
        self._decide_selected("undo", lambda row: row.can_undo, "Select an applied proposal to undo it.",
                              ask="Undo this {kind} in {target}?")  # fmt: skip

    def _decide_selected(
        self, what: str, allowed: Callable[[ProposalRow], bool], not_allowed: str, *, ask: str = ""
    ) -> None:
        """Carry out `what` on the selected proposal when it is `allowed` (else say `not_allowed`); with `ask` (a
        question naming its {kind} and {target}), only once the user confirms."""
        proposal = self.selected()
        if proposal is None or not allowed(proposal):
            self.notify(not_allowed, severity="warning")
            return
        if not ask:
            self._decide(what, proposal.id)
            return
        question = ask.format(kind=proposal.kind, target=proposal.target)
        self.app.push_screen(ConfirmScreen(question, proposal.title, confirm=what.capitalize()),
                             partial(self._confirmed, what, proposal))  # fmt: skip

    def _confirmed(self, what: str, proposal: ProposalRow, confirmed: bool | None) -> None:
        if confirmed:
            self._decide(what, proposal.id)

    @work(exit_on_error=False, group="reflections-write")
    async def _decide(self, what: str, proposal_id: str) -> None:
        service = self.runtime.reflection
        decide = {"apply": service.apply, "reject": service.reject, "undo": service.undo}[what]
        try:
            row = await decide(proposal_id)
        except ProposalNotDecided as exc:
            self.notify(str(exc), title="Nothing was changed", severity="warning", timeout=10)
            return
        self.notify(f"{row.kind.capitalize()} {row.status}: {row.why}")
        self.refresh_data()

    def action_close(self) -> None:
        self.dismiss(None)
