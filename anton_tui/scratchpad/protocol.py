"""The private wire between a scratchpad and its child process: one JSON object per line.

The parent writes to the child's stdin, which the child moves to a private descriptor before any cell runs; the
child answers on a pipe of its own that cells never see. What a cell prints goes to fds 1/2, which are separate
pipes, so user output only ever travels on this wire wrapped inside `out` messages as an escaped JSON string:
no marker a cell prints can end a message, fake a result or desynchronise the two sides.

A cell runs in the same process as the sender, so it can still find the message pipe and write to it. Two checks
keep that harmless: every `exec` carries a fresh random nonce and the parent takes a result only with that nonce
and the cell's number (anything else is logged and dropped); and a genuine message that a cell's half-written line
got glued in front of is still found at the end of the line. A cell that goes looking for the nonce in the
interpreter's frames could still forge a result for itself; the point is that no ordinary output or stray write can.

This module is loaded by the child program from its file path as well, so it must use the standard library only.

Parent -> child:  exec {cell, code, nonce} | llm_reply {id, reply | error}
Child -> parent:  ready {pid, python, executable} | out {cell, stream, text, late?} | progress {cell, message}
                  | llm {cell, id, request} | result {cell, nonce, error, logs, memory_error, notice}
                  | outside {cell, kind: network | file, target}
Supervisor -> parent:  capped {limit} (the pad ran more processes than it may: everything of it is being ended)

An `out` marked ``late`` was written after its cell ended (by a thread the cell started, or while no cell ran): it
belongs to that cell, never to the one running when it arrives.

`op` is always the first key, so every message starts with MESSAGE_START.
"""

from __future__ import annotations

import json
from typing import Any

EXEC = "exec"
LLM_REPLY = "llm_reply"
READY = "ready"
OUT = "out"
PROGRESS = "progress"
LLM_REQUEST = "llm"
RESULT = "result"
OUTSIDE = "outside"  # a running cell reached outside: a network connection or a file outside the workspace
CAPPED = "capped"  # the supervisor found more processes in the pad than it may run, and ends them all

# The longest line either side may send (a line carries at most one output chunk, a traceback or an LLM request).
MAX_LINE_BYTES = 32 * 1024 * 1024
OUTPUT_CHUNK_BYTES = 64 * 1024


def encode(message: dict[str, Any]) -> bytes:
    """ASCII-only JSON so lone surrogates and any byte a cell produced survive the trip."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


MESSAGE_START = b'{"op":'


def decode(line: bytes) -> dict[str, Any]:
    """The message on `line`; when something else wrote a partial line in front of it, the message at its end.
    Raises ValueError when there is none."""
    try:
        message = json.loads(line)
    except ValueError:
        message = _last_message(line)
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ValueError(f"malformed scratchpad message: {line[:200]!r}")
    return message


def _last_message(line: bytes) -> Any:
    # Inside an encoded message a quote is always escaped, so MESSAGE_START can only begin a message.
    start = line.find(MESSAGE_START, 1)
    while start != -1:
        try:
            return json.loads(line[start:])
        except ValueError:
            start = line.find(MESSAGE_START, start + 1)
    raise ValueError(f"malformed scratchpad message: {line[:200]!r}")
