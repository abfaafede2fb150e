"""What a summarisation folded away, taken word for word from the folded turns: the ledger kept beside the summary.

When the older turns of a conversation are replaced by a summary, `build_ledger` first collects from them every
message the user typed, every scratchpad cell's code with the head and tail of its output, every `!` command with
its exit status, every file named with `@` or opened by a cell, every other tool call with its arguments and every
memory write, and keeps each folded turn's messages exactly as they were. The summariser is shown the ledger's
instructions, commands, cells and files (`ledger_brief`), so its record keeps them; the ledger itself is saved
beside the conversation (`conversation_notes`), never inside Anton's history file. `unfold_note` brings a folded
turn back, verbatim, into the next request.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from anton_tui.agent.mentions import mentioned_paths
from anton_tui.agent.messages import is_summary_message, is_user_turn, message_text, user_text

OUTPUT_HEAD = 600  # characters of a cell's output kept from its start
OUTPUT_TAIL = 600  # and from its end (where an error's cause usually is)
BRIEF_MESSAGE = 1200  # characters of one user message shown to the summariser (the ledger keeps all of it)
BRIEF_CODE = 160  # characters of a cell's code shown to the summariser
BRIEF_ARGUMENTS = 200

SHELL_NOTE = re.compile(
    r"^\[The user ran a shell command in the workspace folder \((?P<status>[^)]*)\)\. Command and output, for "
    r"reference:\]\n\$ (?P<command>[^\n]*)"
)
MENTION_NOTE = "[Files mentioned by the user with @"
MENTION_LINE = re.compile(r"^- (?P<path>.+) \([\d.,]+ (?:bytes|KB|MB)\)$", re.MULTILINE)
UNFOLD_NOTE = (
    "[Turn {number} of this conversation was summarised earlier; the user asked for it back word for word. Its "
    "messages, exactly as they were, one JSON object per line:]"
)

# Calls whose first argument, when a string, names a file the cell opens (reads or writes).
OPENERS = frozenset({
    "open", "Path", "read_csv", "read_json", "read_excel", "read_parquet", "read_table", "read_feather",
    "read_pickle", "read_fwf", "read_hdf", "read_orc", "read_xml", "read_html", "read_sas", "read_stata",
    "read_spss", "to_csv", "to_json", "to_excel", "to_parquet", "to_pickle", "load", "loadtxt", "genfromtxt",
    "save", "savetxt", "savefig", "connect", "ZipFile", "TarFile", "imread", "imwrite",
})  # fmt: skip
_OPEN_CALL = re.compile(r"\b(?:open|Path|read_\w+)\(\s*[rbfu]*['\"]([^'\"\n]+)['\"]")


@dataclass(frozen=True)
class FoldedTurn:
    """One folded turn: its number among the conversation's folded turns (1-based, across summarisations), what
    the user typed, and its messages exactly as they stood in the history."""

    number: int
    text: str
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class CellEntry:
    turn: int
    pad: str
    code: str
    output_head: str
    output_tail: str  # empty when the head holds all of the output
    success: bool


@dataclass(frozen=True)
class CommandEntry:
    turn: int
    command: str
    status: str  # "exit code 0", "stopped by the user"


@dataclass(frozen=True)
class FileEntry:
    turn: int
    path: str
    how: str  # "@" (named by the user) or "cell" (opened by a cell's code)


@dataclass(frozen=True)
class ToolCallEntry:
    turn: int
    name: str
    arguments: dict[str, Any]
    success: bool


@dataclass(frozen=True)
class MemoryWriteEntry:
    turn: int
    text: str
    kind: str
    scope: str
    producer: str  # memorize (the agent's own call) or the learner that wrote it


@dataclass(frozen=True)
class Ledger:
    """What one summarisation (`kind` "summary") or one drop of the oldest messages (`kind` "dropped") folded."""

    made: str  # ISO time, UTC
    kind: str
    turns: tuple[FoldedTurn, ...]
    cells: tuple[CellEntry, ...] = ()
    commands: tuple[CommandEntry, ...] = ()
    files: tuple[FileEntry, ...] = ()
    tool_calls: tuple[ToolCallEntry, ...] = ()
    memory_writes: tuple[MemoryWriteEntry, ...] = ()

    @property
    def user_messages(self) -> tuple[tuple[int, str], ...]:
        """(turn number, what the user typed) of every folded turn that began with a typed message."""
        return tuple((turn.number, turn.text) for turn in self.turns if turn.text)

    @property
    def first_turn(self) -> int:
        return self.turns[0].number if self.turns else 0

    @property
    def last_turn(self) -> int:
        return self.turns[-1].number if self.turns else 0

    def turn(self, number: int) -> FoldedTurn | None:
        return next((turn for turn in self.turns if turn.number == number), None)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["turns"] = [{**turn, "messages": list(turn["messages"])} for turn in data["turns"]]
        return data

    @classmethod
    def from_json(cls, data: Any) -> Ledger:
        """A ledger read back from its file; raises ValueError (or a KeyError/TypeError) for one that is not."""
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
            raise ValueError("not a ledger")

        def entries(key: str, kind: type[Any]) -> tuple[Any, ...]:
            return tuple(kind(**item) for item in data.get(key) or ())

        turns = tuple(
            FoldedTurn(int(turn["number"]), str(turn["text"]), tuple(turn["messages"])) for turn in data["turns"]
        )
        return cls(
            made=str(data.get("made", "")),
            kind=str(data.get("kind", "summary")),
            turns=turns,
            cells=entries("cells", CellEntry),
            commands=entries("commands", CommandEntry),
            files=entries("files", FileEntry),
            tool_calls=entries("tool_calls", ToolCallEntry),
            memory_writes=entries("memory_writes", MemoryWriteEntry),
        )


@dataclass
class _Collector:
    cells: list[CellEntry] = field(default_factory=list)
    commands: list[CommandEntry] = field(default_factory=list)
    files: list[FileEntry] = field(default_factory=list)
    tool_calls: list[ToolCallEntry] = field(default_factory=list)
    memory_writes: list[MemoryWriteEntry] = field(default_factory=list)

    def file(self, turn: int, path: str, how: str) -> None:
        path = path.strip()
        if path and not any(entry.path == path and entry.turn == turn for entry in self.files):
            self.files.append(FileEntry(turn, path, how))


# --------------------------------------------------------------------------- building a ledger


def split_turns(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The messages in turns: each starts at a message the user typed; what comes before the first one (the end of
    a turn folded earlier, or a summary's reply) is a turn of its own."""
    turns: list[list[dict[str, Any]]] = []
    for message in messages:
        if is_summary_message(message):
            continue
        if not turns or (is_user_turn(message) and turns[-1]):
            turns.append([])
        turns[-1].append(message)
    return [turn for turn in turns if turn]


def build_ledger(
    folded: Sequence[dict[str, Any]],
    first_number: int,
    *,
    kind: str = "summary",
    memory_writes: Iterable[tuple[int, MemoryWriteEntry]] = (),
    now: datetime | None = None,
) -> Ledger:
    """The ledger of `folded` (the messages about to be summarised, a leading summary among them or not), its turns
    numbered from `first_number`. `memory_writes` are `(index in folded, write)` pairs the session saw made during
    those turns by others than the agent's own `memorize` calls (which are read from the messages)."""
    results = _results(folded)
    collector = _Collector()
    turns: list[FoldedTurn] = []
    position = {id(message): index for index, message in enumerate(folded)}
    writes_at: dict[int, list[MemoryWriteEntry]] = {}
    for index, write in memory_writes:
        writes_at.setdefault(index, []).append(write)
    for offset, messages in enumerate(split_turns(folded)):
        number = first_number + offset
        opened_by_user = is_user_turn(messages[0])
        turns.append(FoldedTurn(number, user_text(messages[0]) if opened_by_user else "", tuple(messages)))
        for message in messages:
            if opened_by_user and message is messages[0]:
                _read_user_message(collector, number, message)
            _read_calls(collector, number, message, results)
            for write in writes_at.get(position.get(id(message), -1), ()):
                collector.memory_writes.append(MemoryWriteEntry(number, write.text, write.kind, write.scope,
                                                                write.producer))  # fmt: skip
    return Ledger(
        made=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
        kind=kind,
        turns=tuple(turns),
        cells=tuple(collector.cells),
        commands=tuple(collector.commands),
        files=tuple(collector.files),
        tool_calls=tuple(collector.tool_calls),
        memory_writes=tuple(collector.memory_writes),
    )


def _results(messages: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[str(block.get("tool_use_id"))] = block
    return found


def _read_user_message(collector: _Collector, number: int, message: dict[str, Any]) -> None:
    content = message.get("content")
    typed = user_text(message)
    for path in mentioned_paths(typed):
        collector.file(number, path, "@")
    notes = [str(b.get("text", "")) for b in content[1:] if isinstance(b, dict)] if isinstance(content, list) else []
    for note in notes:
        shell = SHELL_NOTE.match(note)
        if shell:
            collector.commands.append(CommandEntry(number, shell["command"], shell["status"]))
        elif note.startswith(MENTION_NOTE):
            for line in MENTION_LINE.finditer(note):
                collector.file(number, line["path"], "@")


def _read_calls(
    collector: _Collector, number: int, message: dict[str, Any], results: dict[str, dict[str, Any]]
) -> None:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        name = str(block.get("name", ""))
        given = block.get("input")
        arguments: dict[str, Any] = given if isinstance(given, dict) else {}
        result = results.get(str(block.get("id")), {})
        success = not result.get("is_error", False)
        if name == "scratchpad" and (arguments.get("action") == "exec" or "code" in arguments):
            code = str(arguments.get("code", ""))
            head, tail = head_and_tail(message_text({"content": result.get("content", "")}))
            collector.cells.append(CellEntry(number, str(arguments.get("name") or "main"), code, head, tail, success))
            for path in files_opened(code):
                collector.file(number, path, "cell")
            continue
        collector.tool_calls.append(ToolCallEntry(number, name, dict(arguments), success))
        if name == "memorize":
            for entry in arguments.get("entries") or ():
                if isinstance(entry, dict) and str(entry.get("text", "")).strip():
                    collector.memory_writes.append(MemoryWriteEntry(
                        number, str(entry["text"]).strip(), str(entry.get("kind") or "lesson"),
                        str(entry.get("scope") or "project"), "memorize",
                    ))  # fmt: skip


def head_and_tail(text: str, head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL) -> tuple[str, str]:
    """The start of `text` and its end; the end is empty when the start holds all of it."""
    if len(text) <= head + tail:
        return text, ""
    return text[:head], text[-tail:]


def files_opened(code: str) -> list[str]:
    """Paths a cell's code opens: string literals given first to `open`, `Path`, `pd.read_csv` and the like."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        found = [match.group(1) for match in _OPEN_CALL.finditer(code)]
    else:
        at: list[tuple[int, int, str]] = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            first = node.args[0]
            if name in OPENERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                at.append((first.lineno, first.col_offset, first.value))
        found = [path for _line, _column, path in sorted(at)]  # in the order the code names them
    return list(dict.fromkeys(path for path in found if path.strip() and "\n" not in path))


# --------------------------------------------------------------------------- what the summariser is shown


def ledger_brief(ledger: Ledger) -> str:
    """The ledger as the summariser reads it: the user's instructions and decisions in their own words, then the
    commands, cells, files, tool calls and memory writes of the folded turns, each on a line."""
    lines = [
        "LEDGER OF THE TURNS TO FOLD IN (taken word for word from them). Keep every instruction and decision below "
        "in the record, or say what replaced it, and name each command, cell and file at least briefly."
    ]
    if ledger.user_messages:
        lines.append("Instructions and decisions (the user's messages, numbered by turn):")
        lines += [f"{number}. {_clip(' '.join(text.split()), BRIEF_MESSAGE)}" for number, text in ledger.user_messages]
    if ledger.commands:
        lines.append("Commands run with `!`:")
        lines += [f"- turn {c.turn}: $ {c.command} ({c.status})" for c in ledger.commands]
    if ledger.cells:
        lines.append("Scratchpad cells run:")
        for cell in ledger.cells:
            code = _clip(" ⏎ ".join(line for line in cell.code.strip().splitlines() if line.strip()), BRIEF_CODE)
            lines.append(f"- turn {cell.turn}, {cell.pad}{'' if cell.success else ' (failed)'}: {code}")
    if ledger.files:
        lines.append("Files named with @ or opened by a cell:")
        lines += [f"- turn {f.turn}: {f.path} ({'named with @' if f.how == '@' else 'opened by a cell'})"
                  for f in ledger.files]  # fmt: skip
    if ledger.tool_calls:
        lines.append("Other tool calls:")
        for call in ledger.tool_calls:
            arguments = _clip(json.dumps(call.arguments, ensure_ascii=False, default=str), BRIEF_ARGUMENTS)
            lines.append(f"- turn {call.turn}: {call.name}({arguments})")
    if ledger.memory_writes:
        lines.append("Memory written:")
        lines += [f"- turn {w.turn}: [{w.scope} {w.kind}] {w.text}" for w in ledger.memory_writes]
    return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- bringing a turn back


def unfold_note(turn: FoldedTurn) -> str:
    """The note that puts a folded turn back into the next request, its messages as they were (one JSON per line)."""
    lines = [json.dumps(message, ensure_ascii=False) for message in turn.messages]
    return "\n".join([UNFOLD_NOTE.format(number=turn.number), *lines])


def merged(ledgers: Sequence[Ledger]) -> dict[str, list[dict[str, Any]]]:
    """Every ledger's entries in one listing (for `conversation show --json`): user_messages, cells, commands, files,
    tool_calls, memory_writes, each entry with the turn it came from."""
    return {
        "user_messages": [{"turn": n, "text": text} for ledger in ledgers for n, text in ledger.user_messages],
        "cells": [asdict(entry) for ledger in ledgers for entry in ledger.cells],
        "commands": [asdict(entry) for ledger in ledgers for entry in ledger.commands],
        "files": [asdict(entry) for ledger in ledgers for entry in ledger.files],
        "tool_calls": [asdict(entry) for ledger in ledgers for entry in ledger.tool_calls],
        "memory_writes": [asdict(entry) for ledger in ledgers for entry in ledger.memory_writes],
    }
