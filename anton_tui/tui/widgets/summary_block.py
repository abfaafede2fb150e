"""The "earlier turns summarised" block: one line in the chat that opens to the summary standing for those turns and
to the ledger of what they held.

A long conversation's older turns are replaced by a summary the model keeps reading; this block shows that it
happened (how many messages, about how many tokens before and after) and, opened with **Enter** or a click, the
summary itself as the model sees it. When this program made the summary, the ledger follows it, word for word from
the folded turns: your messages (a list: **Enter** or **u** on one brings that turn back into your next message, as
`/unfold N` does), then the cells with the start of their output, the `!` commands with their exit status, the files,
the other tool calls and the memory written. A summary Anton made has no ledger. The ledger's widgets are made when
the block is first opened, so a long chat of closed blocks stays light.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from textual import on
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from anton_tui.runtime import Ledger

LINE = 100  # characters of one ledger line before it is cut


def _one_line(text: str, width: int = LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def summary_ahead_notice(tokens: int, at_tokens: int) -> Content:
    """The chat's line before older turns are summarised (`SummaryAhead`)."""
    return Content.from_markup(
        "[$text-muted]Older turns will be summarised at about $at tokens (now about $now); what they hold is kept "
        "word for word in the summary's ledger.[/]",
        at=f"{at_tokens:,}",
        now=f"{tokens:,}",
    )


def ledger_line(ledgers: Sequence[Ledger]) -> str:
    """What the ledgers hold, in a few words for the block's title."""
    turns = sum(len(ledger.user_messages) for ledger in ledgers)
    cells = sum(len(ledger.cells) for ledger in ledgers)
    commands = sum(len(ledger.commands) for ledger in ledgers)
    files = len({f.path for ledger in ledgers for f in ledger.files})
    parts = [f"{turns} message{'s' if turns != 1 else ''}"]
    parts += [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((cells, "cell"), (commands, "command"),
                                                                    (files, "file")) if n]  # fmt: skip
    return "ledger: " + ", ".join(parts)


def ledger_sections(ledgers: Sequence[Ledger]) -> str:
    """Everything but the messages, one line each under a heading."""
    out: list[str] = []
    cells = [cell for ledger in ledgers for cell in ledger.cells]
    if cells:
        out.append("Cells")
        for cell in cells:
            code = _one_line(" ⏎ ".join(line for line in cell.code.splitlines() if line.strip()), 70)
            output = _one_line(cell.output_head, 40)
            failed = " (failed)" if not cell.success else ""
            out.append(f"  turn {cell.turn} · {cell.pad}{failed}: {code}" + (f"  → {output}" if output else ""))
    commands = [command for ledger in ledgers for command in ledger.commands]
    if commands:
        out.append("Commands")
        out += [f"  turn {c.turn} · $ {_one_line(c.command, 80)} ({c.status})" for c in commands]
    files = [entry for ledger in ledgers for entry in ledger.files]
    if files:
        out.append("Files")
        out += [f"  turn {f.turn} · {f.path} ({'named with @' if f.how == '@' else 'opened by a cell'})" for f in files]
    calls = [call for ledger in ledgers for call in ledger.tool_calls]
    if calls:
        out.append("Tool calls")
        out += [f"  turn {c.turn} · {c.name} {_one_line(json.dumps(c.arguments, ensure_ascii=False, default=str), 80)}"
                for c in calls]  # fmt: skip
    writes = [write for ledger in ledgers for write in ledger.memory_writes]
    if writes:
        out.append("Memory written")
        out += [f"  turn {w.turn} · [{w.scope} {w.kind}] {_one_line(w.text, 80)}" for w in writes]
    return "\n".join(out)


class LedgerMessages(OptionList):
    """The folded turns' messages; **Enter** or **u** on one asks for that turn back."""

    BINDINGS = [Binding("u", "select", "Unfold", id="summary.unfold")]


class SummaryBlock(Collapsible):
    """Collapsed: the title line. Expanded: the summary's text, then the ledger (see the module docstring)."""

    DEFAULT_CSS = """
    SummaryBlock { padding: 0 1; border-left: outer $secondary; background: transparent; }
    SummaryBlock > Contents { padding: 0 0 0 2; }
    SummaryBlock .summary-text { color: $text-muted; }
    SummaryBlock .ledger-heading { margin-top: 1; text-style: bold; }
    SummaryBlock .ledger-help { color: $text-muted; }
    SummaryBlock LedgerMessages { height: auto; max-height: 12; border: none; padding: 0; background: transparent; }
    SummaryBlock .ledger-sections { color: $text-muted; }
    """
    HELP = __doc__

    class UnfoldRequested(Message):
        """The user asked for folded turn `number` back in the next message."""

        def __init__(self, number: int) -> None:
            super().__init__()
            self.number = number

    def __init__(self, summary: str, detail: str = "", ledgers: Sequence[Ledger] = ()) -> None:
        self.ledgers = tuple(ledgers)
        self.detail = detail
        if self.ledgers:
            detail = f"{detail} · {ledger_line(self.ledgers)}".strip(" ·")
        title = Content.from_markup("[b]Earlier turns summarised[/b] [$text-muted]$detail[/]", detail=detail)
        super().__init__(
            Static(Content(summary.strip() or "(empty summary)"), classes="summary-text"),
            title=title,  # type: ignore[arg-type]  # Collapsible draws a Content title as well as a str
            collapsed=True,
            classes="chat-block",
        )
        self.summary = summary
        self._ledger_shown = False

    @property
    def words(self) -> str:
        return self.summary

    def recipe(self) -> Callable[[], Widget]:
        return partial(SummaryBlock, self.summary, self.detail, self.ledgers)

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self and self.ledgers and not self._ledger_shown:
            self._ledger_shown = True
            self.query_one(Collapsible.Contents).mount(self._ledger_view())

    def _ledger_view(self) -> Vertical:
        first, last = self.ledgers[0].first_turn, self.ledgers[-1].last_turn
        messages = LedgerMessages(
            *[
                Option(Content(f"turn {number} · {_one_line(text)}"), id=str(number))
                for ledger in self.ledgers
                for number, text in ledger.user_messages
            ],
        )
        parts = [
            Static(Content(f"Ledger of turns {first}–{last}, word for word"), classes="ledger-heading"),
            Static(
                Content(
                    "Your messages: Enter or u on one brings that turn back into your next message "
                    "(/unfold N does too)."
                ),
                classes="ledger-help",
            ),
            messages,
        ]
        sections = ledger_sections(self.ledgers)
        if sections:
            parts.append(Static(Content(sections), classes="ledger-sections"))
        return Vertical(*parts, classes="ledger")

    @on(OptionList.OptionSelected)
    def _unfold(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.UnfoldRequested(int(event.option.id)))
