"""The private wire between a scratchpad and its child process: one JSON object per line.

The parent writes to the child's stdin, which the child moves to a private descriptor before any cell runs; the
child answers on a pipe of its own that cells never see. What a cell prints goes to fds 1/2, which are separate
pipes, so user output only ever travels on this wire wrapped inside `out` messages as an escaped JSON string:
no marker a cell prints can end a message, fake a result or desynchronise the two sides.

This module is loaded by the child program from its file path as well, so it must use the standard library only.

Parent -> child:  exec {cell, code} | llm_reply {id, reply | error}
Child -> parent:  ready {pid, python, executable} | out {cell, stream, text} | progress {cell, message}
                  | llm {cell, id, request} | result {cell, error, logs, memory_error}
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

# The longest line either side may send (a line carries at most one output chunk, a traceback or an LLM request).
MAX_LINE_BYTES = 32 * 1024 * 1024
OUTPUT_CHUNK_BYTES = 64 * 1024


def encode(message: dict[str, Any]) -> bytes:
    """ASCII-only JSON so lone surrogates and any byte a cell produced survive the trip."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    message = json.loads(line)
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ValueError(f"malformed scratchpad message: {line[:200]!r}")
    return message
