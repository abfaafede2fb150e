"""The session's trust gate: holds learned memories from untrusted turns, and instruction-like ones, for review.

`ChatSession` takes these methods from `TrustGate`. `taint(reason)` marks the running turn untrusted (a cell reached
outside, an untrusted episode was recalled); `trust_filter(engrams, producer)` lets through what may be saved and
queues the rest for the confirmation modal, with why each was held (`hold_reasons`). What waits is written to the
`held` store after every change, and read back at start (`restore_held`), so it survives exit. The setting
`ANTON_TRUST_GATE=false` switches the gate off (`trust_gate`), as Anton behaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anton_tui.memory.trust import (
    HeldMemories,
    TurnTrust,
    current_turn,
    engram_from_json,
    engram_to_json,
    hold_reasons,
)

if TYPE_CHECKING:
    from anton_tui.memory.engrams.engram import Engram


class TrustGate:
    """Trust bookkeeping of a chat session (see the module docstring)."""

    trust_gate: bool = True
    pending_confirmations: list[Engram]

    def _init_trust(self) -> None:
        self.turn_trust = TurnTrust()
        self.held: HeldMemories | None = None
        self.held_why: dict[Engram, dict[str, Any]] = {}  # engram -> producer, reasons, trust

    def begin_turn_trust(self, turn: int) -> None:
        self.turn_trust = TurnTrust(turn)
        current_turn.set(self.turn_trust)  # the learners this turn starts inherit it

    def taint(self, reason: str) -> None:
        self.turn_trust.taint(reason)

    def trust_now(self) -> TurnTrust | None:
        return current_turn.get()

    def trust_filter(self, engrams: list[Engram], producer: str) -> list[Engram]:
        """The engrams that may be saved now; the others are queued for review with their reasons."""
        if not self.trust_gate:
            return list(engrams)
        trust = self.trust_now()
        keep, held = [], []
        for engram in engrams:
            reasons = hold_reasons(engram.text, producer, trust)
            if reasons:
                described = trust.describe() if trust is not None else ""
                self.held_why[engram] = {"producer": producer, "reasons": reasons, "trust": described}
                held.append(engram)
            else:
                keep.append(engram)
        if held:
            self.queue_for_confirmation(held)  # type: ignore[attr-defined]
        return keep

    def reasons_for(self, engram: Engram) -> tuple[str, ...]:
        return tuple(self.held_why.get(engram, {}).get("reasons", ()))

    def save_held(self) -> None:
        """Write what waits for review to the held store (after every change of the queue)."""
        if self.held is None:
            return
        items = []
        for engram in self.pending_confirmations:
            why = self.held_why.get(engram, {})
            items.append(engram_to_json(engram, why.get("producer", ""), list(why.get("reasons", [])),
                                        why.get("trust", "")))  # fmt: skip
        try:
            self.held.save(items)
        except OSError:
            pass  # the queue in memory still holds them; the next change tries again

    def restore_held(self, held: HeldMemories) -> int:
        """Read back what waited for review when the app last closed; returns how many."""
        self.held = held
        restored = 0
        for item in held.load():
            engram = engram_from_json(item)
            if not engram.text or engram in self.pending_confirmations:
                continue
            self.held_why[engram] = {"producer": item.get("producer", ""), "reasons": list(item.get("reasons", [])),
                                     "trust": item.get("trust", "")}  # fmt: skip
            self.pending_confirmations.append(engram)
            restored += 1
        return restored
