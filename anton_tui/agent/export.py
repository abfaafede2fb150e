"""A saved conversation as one Markdown document: its messages, cells with their output, tool calls, the summary of
earlier turns and the ledgers of what each summary folded.

`export_markdown` needs nothing but the conversation's data (no model, no app); `conversation export` prints it and
the app saves it (or, in a browser tab, hands it to the browser as a download).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from anton_tui.agent.ledger import Ledger
from anton_tui.agent.messages import is_summary_message, is_user_turn
from anton_tui.agent.transcript import transcript

_BACKTICKS = re.compile(r"`+")


def fence(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n{text.rstrip()}\n{marks}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines())


def _arguments(arguments: Any) -> str:
    return json.dumps(arguments, ensure_ascii=False, indent=1, default=str)


def export_markdown(
    session_id: str,
    history: list[dict[str, Any]],
    ledgers: Sequence[Ledger] = (),
    *,
    title: str | None = None,
    date: str = "",
    parent: str | None = None,
    forked_at: int | None = None,
) -> str:
    entries = transcript(history)
    first = next((entry.text for entry in entries if entry.kind == "user"), "")
    heading = title or " ".join(first.split())[:80] or f"Conversation {session_id}"
    out = [f"# {heading}", ""]
    facts = [f"Conversation `{session_id}`"]
    if date:
        facts.append(f"started {date}")
    facts.append(f"{sum(1 for e in entries if e.kind == 'user')} messages of yours")
    out.append("- " + " · ".join(facts))
    if parent:
        out.append(f"- Forked from `{parent}`" + (f" at your message {forked_at}" if forked_at else ""))
    out.append("")
    summary = next((entry.text for entry in entries if entry.kind == "summary"), None)
    if summary is not None or ledgers:
        out += ["## Earlier turns, summarised", ""]
        if summary is not None:
            out += ["### The summary the model reads", "", summary.strip(), ""]
        for number, ledger in enumerate(ledgers, start=1):
            out += _ledger_section(number, ledger)
    out += ["## Conversation", ""]
    notes = _user_notes(history)
    user_number = 0
    for entry in entries:
        if entry.kind == "user":
            user_number += 1
            out += [f"### You · message {user_number}", "", entry.text.strip() or "(empty)", ""]
            for note in notes.get(entry.index, ()):
                out += [_quote(note), ""]
        elif entry.kind == "answer":
            out += ["### Anton", "", entry.text.strip(), ""]
        elif entry.kind in ("goal", "cancelled"):
            out += [f"*{entry.text}*", ""]
        elif entry.kind == "tool":
            out += _tool_section(entry.tool or "", entry.input, entry.text, entry.success)
    return "\n".join(out).rstrip() + "\n"


def _user_notes(history: list[dict[str, Any]]) -> dict[int, list[str]]:
    """The notes that came with a typed message (files named with @, commands run with !), by history index."""
    found: dict[int, list[str]] = {}
    for index, message in enumerate(history):
        content = message.get("content")
        if is_user_turn(message) and not is_summary_message(message) and isinstance(content, list):
            texts = [str(b.get("text", "")) for b in content[1:] if isinstance(b, dict) and b.get("type") == "text"]
            if texts:
                found[index] = texts
    return found


def _tool_section(name: str, arguments: Any, result: str, success: bool) -> list[str]:
    failed = " (failed)" if not success else ""
    if name == "scratchpad" and isinstance(arguments, dict) and "code" in arguments:
        pad = arguments.get("name") or "main"
        lines = [f"**Cell in scratchpad `{pad}`{failed}**", "", fence(str(arguments["code"]), "python"), ""]
    else:
        lines = [f"**Tool call `{name}`{failed}**", "", fence(_arguments(arguments), "json"), ""]
    if result.strip():
        lines += ["Output:", "", fence(result), ""]
    return lines


def _ledger_section(number: int, ledger: Ledger) -> list[str]:
    what = "summarised" if ledger.kind == "summary" else "dropped to make room"
    span = f"turn {ledger.first_turn}" if ledger.first_turn == ledger.last_turn else (
        f"turns {ledger.first_turn}–{ledger.last_turn}")  # fmt: skip
    out = [f"### Ledger {number}: {span}, {what} {ledger.made}", ""]
    if ledger.user_messages:
        out += ["#### Your messages", ""]
        for turn, text in ledger.user_messages:
            out += [f"{turn}. " + "\n   ".join(text.strip().splitlines() or [""])]
        out.append("")
    if ledger.cells:
        out += ["#### Cells", ""]
        for cell in ledger.cells:
            out += [f"Turn {cell.turn}, scratchpad `{cell.pad}`{'' if cell.success else ' (failed)'}:", ""]
            out += [fence(cell.code, "python"), ""]
            output = cell.output_head + (f"\n[…]\n{cell.output_tail}" if cell.output_tail else "")
            if output.strip():
                out += [fence(output), ""]
    if ledger.commands:
        out += ["#### Commands", ""]
        out += [f"- turn {c.turn}: `{c.command}` ({c.status})" for c in ledger.commands]
        out.append("")
    if ledger.files:
        out += ["#### Files", ""]
        out += [f"- turn {f.turn}: `{f.path}` ({'named with @' if f.how == '@' else 'opened by a cell'})"
                for f in ledger.files]  # fmt: skip
        out.append("")
    if ledger.tool_calls:
        out += ["#### Tool calls", ""]
        for call in ledger.tool_calls:
            arguments = json.dumps(call.arguments, ensure_ascii=False, default=str)
            out += [f"- turn {call.turn}: `{call.name}` {arguments}" + ("" if call.success else " (failed)")]
        out.append("")
    if ledger.memory_writes:
        out += ["#### Memory written", ""]
        out += [f"- turn {w.turn}: [{w.scope} {w.kind}, {w.producer}] {w.text}" for w in ledger.memory_writes]
        out.append("")
    return out
