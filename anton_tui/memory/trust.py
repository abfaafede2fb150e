"""Decides which learned memories wait for the user's review: those learned from a turn that outside content
entered, and those whose text reads like an instruction to the agent.

A turn becomes untrusted once a scratchpad cell opened a network connection or read a file outside the workspace,
or a recalled episode was itself from an untrusted turn (`TurnTrust.taint`). Engrams that the learners
(consolidator, cerebellum, identity, acc) or `memorize` produce from such a turn are held for review even in
autopilot, and so is any engram that looks like an instruction (`instruction_reasons`). `HeldMemories` keeps what
is waiting in a JSON file beside the project's memory history, so nothing held is lost on exit.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import atomic_write

LEARNERS = frozenset({"consolidator", "cerebellum", "identity", "acc", "memorize"})

# Small and tested (tests/test_trust.py): phrases that address the agent rather than record a fact.
INSTRUCTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("asks to ignore earlier instructions", re.compile(
        r"\b(ignore|disregard|forget|override)\b.{0,30}\b(previous|prior|earlier|above|all|your|system)\b"
        r".{0,20}\b(instructions?|rules?|prompts?|guidelines?)", re.I)),
    ("tells the agent to always run something", re.compile(
        r"\b(always|must|should|first)\b.{0,20}\b(run|execute|exec|eval|call|invoke|install|download|curl|wget)\b",
        re.I)),
    ("names a URL to fetch", re.compile(
        r"\b(fetch|download|get|visit|open|curl|wget|load|post|send|upload)\b[^.\n]{0,40}\bhttps?://", re.I)),
    ("contains a shell command", re.compile(
        r"(\|\s*(ba|z)?sh\b|\brm\s+-rf\b|\bcurl\s+\S|\bwget\s+\S|\bchmod\s+\+x\b|\bsudo\s+\S|`[^`]*\b(sh|bash)\b[^`]*`"
        r"|\bnc\s+-[el])", re.I)),
    ("asks to reveal or send secrets", re.compile(
        r"\b(send|upload|post|reveal|print|exfiltrate|share)\b.{0,40}(\b(api[_ ]?keys?|tokens?|passwords?|"
        r"secrets?|credentials|ssh)\b|\.env\b)", re.I)),
)  # fmt: skip


def instruction_reasons(text: str) -> list[str]:
    """Why `text` reads like an instruction to the agent (empty when it does not)."""
    return [reason for reason, pattern in INSTRUCTION_PATTERNS if pattern.search(text)]


@dataclasses.dataclass
class TurnTrust:
    """Whether outside content entered one turn, and how."""

    turn: int = 0
    reasons: list[str] = dataclasses.field(default_factory=list)

    @property
    def untrusted(self) -> bool:
        return bool(self.reasons)

    def taint(self, reason: str) -> None:
        if reason not in self.reasons and len(self.reasons) < 20:
            self.reasons.append(reason)

    def describe(self) -> str:
        return "untrusted: " + "; ".join(self.reasons) if self.reasons else "trusted"


# The trust of the turn whose work is running here: set at a turn's start, inherited by the learners it starts.
current_turn: contextvars.ContextVar[TurnTrust | None] = contextvars.ContextVar("turn_trust", default=None)


def taint_reason(producer: str, trust: TurnTrust | None) -> str | None:
    """Why an engram is tainted: a learner made it in a turn outside content entered (None: it is not)."""
    if trust is not None and trust.untrusted and producer in LEARNERS:
        return f"learned in turn {trust.turn} after outside content: {'; '.join(trust.reasons)}"
    return None


def hold_reasons(text: str, producer: str, trust: TurnTrust | None) -> list[str]:
    """Why an engram must wait for review (empty: it may be saved as the memory mode says)."""
    tainted = taint_reason(producer, trust)
    return ([tainted] if tainted else []) + [f"reads like an instruction ({why})" for why in instruction_reasons(text)]


class HeldMemories:
    """Engrams waiting for review, kept in a JSON file (written atomically) so they survive exit."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            return []  # a damaged file is left as it is; nothing held is shown from it
        return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []

    def save(self, items: list[dict[str, Any]]) -> None:
        atomic_write(self.path, json.dumps(items, ensure_ascii=False, indent=1).encode("utf-8"))


def engram_to_json(engram: Any, producer: str, reasons: list[str], trust: str) -> dict[str, Any]:
    return {
        "text": engram.text, "kind": engram.kind, "scope": engram.scope, "confidence": engram.confidence,
        "topic": engram.topic, "source": engram.source, "producer": producer, "reasons": reasons, "trust": trust,
    }  # fmt: skip


def engram_from_json(item: dict[str, Any]) -> Any:
    from anton_tui.memory.engrams.engram import Engram

    return Engram(
        str(item.get("text", "")), str(item.get("kind", "lesson")), str(item.get("scope", "project")),
        item.get("confidence"), item.get("topic"), item.get("source"),
    )  # fmt: skip
