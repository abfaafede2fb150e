"""A scripted long conversation for the ledger's tests and `make bench`: turns that run scratchpad cells, `!` commands
and `@` files, answered by the fake LLM server, with a small context window so it is summarised again and again.

Every turn's message names a ticket (``T007``) the summary can be checked for; commands and mentions come as the
very notes the app adds (`ShellRecord.note`, `check_mentions(...).note`), cells run in a real scratchpad.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anton_tui.agent.mentions import check_mentions
from anton_tui.agent.shell import ShellRecord
from anton_tui.agent.summarise import SUMMARY_SYSTEM
from tests.fakellm import Reply, ToolCallSpec
from tests.fakellm.script import RecordedRequest
from tests.session_helpers import EMPTY_ANSWERS, forced_tool

ANSWER = "Done. " + "The regional figures agree with the previous export, row for row. " * 14  # ~1,000 characters


@dataclass(frozen=True)
class ScriptedTurn:
    number: int
    text: str
    notes: tuple[str, ...] = ()
    command: str | None = None  # the `!` command run before this turn
    mentioned: str | None = None  # the file named with `@`
    cell: str | None = None  # the code the agent runs in this turn
    cell_file: str | None = None  # the file that code opens
    memory: str | None = None  # a lesson the agent saves with `memorize`


def ticket(number: int) -> str:
    return f"T{number:03d}"


def scripted_turns(count: int, project: Path) -> list[ScriptedTurn]:
    """`count` turns: a cell every third, a `!` command every fourth, an `@` file every fifth, a memory every
    seventh. Writes the data files they use into `project`."""
    data = project / "data"
    data.mkdir(parents=True, exist_ok=True)
    turns = []
    for number in range(1, count + 1):
        region = f"data/region_{number:03d}.csv"
        (data / f"region_{number:03d}.csv").write_text(f"month,total\njan,{number * 10}\nfeb,{number * 11}\n")
        text = f"Turn {number}: ticket {ticket(number)}: keep region {number} in euros and sort by month"
        notes: list[str] = []
        command = mentioned = cell = cell_file = memory = None
        if number % 4 == 0:
            command = f"wc -l {region}"
            notes.append(ShellRecord(command, f"3 {region}\n", 0).note())
        if number % 5 == 0:
            mentioned = region
            text += f" (see @{region})"
            note = check_mentions(text, project).note
            assert note is not None
            notes.append(note)
        if number % 3 == 0:
            cell_file = region
            cell = f"rows = open({region!r}).read().splitlines()\nprint('{ticket(number)}', len(rows), rows[-1])"
        if number % 7 == 0:
            memory = f"Region {number} is reported in euros ({ticket(number)})"
        turns.append(ScriptedTurn(number, text, tuple(notes), command, mentioned, cell, cell_file, memory))
    return turns


def _typed_turn(request: RecordedRequest) -> int | None:
    """The scripted turn a planner request answers, when its last message is the user's typed one."""
    last = request.messages[-1]
    content = last.get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") in ("tool_result", "function") for b in content):
            return None
        content = next((b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"), "")
    if last.get("role") != "user" or not isinstance(content, str) or not content.startswith("Turn "):
        return None
    return int(content[5:].split(":", 1)[0])


def responder(
    turns: list[ScriptedTurn], planner: str, summarise: Callable[[RecordedRequest], str]
) -> Callable[[RecordedRequest], Reply | None]:
    """Answers the planner by the script (a cell or a memory for the turns that have one, then the answer), the
    summariser with `summarise(request)` and the learning loops' structured calls with empty results. Usage is
    charged at 4 characters a token of everything sent."""
    by_number = {turn.number: turn for turn in turns}

    def respond(request: RecordedRequest) -> Reply | None:
        tokens = len(json.dumps(request.body)) // 4
        if request.system == SUMMARY_SYSTEM:
            return Reply.text(summarise(request), usage=(tokens, 400))
        name = forced_tool(request)
        if name in EMPTY_ANSWERS:
            return Reply.tool_call(name, EMPTY_ANSWERS[name], usage=(tokens, 20))
        if request.model != planner:
            return None
        number = _typed_turn(request)
        turn = by_number.get(number) if number is not None else None
        calls: list[ToolCallSpec] = []
        if turn is not None and turn.cell is not None:
            calls.append(ToolCallSpec("scratchpad", {"action": "exec", "name": "main", "code": turn.cell,
                                                     "one_line_description": "read the region file"}))  # fmt: skip
        if turn is not None and turn.memory is not None:
            entry = {"text": turn.memory, "kind": "lesson", "scope": "project"}
            calls.append(ToolCallSpec("memorize", {"entries": [entry]}))
        if calls:
            return Reply(content="Checking.", calls=calls, usage=(tokens, 60))
        return Reply.text(ANSWER, usage=(tokens, 300))

    return respond


def request_text(request: RecordedRequest) -> str:
    """Everything a summariser request asked, as text."""
    parts: list[str] = []
    for message in request.messages:
        content: Any = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(block.get("text", "")) for block in content if isinstance(block, dict)]
    return "\n".join(parts)
