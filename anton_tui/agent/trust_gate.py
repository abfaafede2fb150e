"""The session's trust gate: holds learned memories from untrusted turns, and instruction-like ones, for review.

A `ChatSession` holds one `TrustGate`. `taint(reason)` marks the running turn untrusted (a cell reached outside, an
untrusted episode was recalled); `sort(engrams, producer)` tells what may be saved from what must wait, with why
each was held (`hold_reasons`). These are the first steps of the review every self-change takes (`memory.review`):
taint and the injection scan. An engram whose only fault is its tainted turn follows the tainted review level
(`tainted_level`, `ANTON_REVIEW_TAINTED`): `human` holds it (the default, as the gate always did), `ai` hands it to
the AI reviewer (`for_ai`), `none` lets it through; one that reads like an instruction is always held. The gate also keeps every memory that waits for the user's review (`pending`, those
the memory mode asks about as well): it writes them to the `held` store after every change and reads them back at
start (`restore`), so they survive exit. The setting `ANTON_TRUST_GATE=false` switches the gate off (`enabled`), as
Anton behaves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anton_tui.memory.trust import (
    HeldMemories,
    TurnTrust,
    current_turn,
    engram_from_json,
    engram_to_json,
    instruction_reasons,
    taint_reason,
)

if TYPE_CHECKING:
    from anton_tui.memory.engrams.engram import Engram


@dataclass(frozen=True)
class HeldWhy:
    """Why the gate held one engram: who proposed it, the reasons, and the trust of the turn it came from."""

    producer: str
    reasons: tuple[str, ...]
    trust: str


class TrustGate:
    """The trust of the running turn, and the memories that wait for review (see the module docstring)."""

    def __init__(self, *, enabled: bool = True, tainted_level: str = "human") -> None:
        self.enabled = enabled
        self.tainted_level = tainted_level  # what a tainted engram takes: human (held), ai or none
        self.turn_trust = TurnTrust()
        self.conversation_taint: list[str] = []  # why any turn of this conversation was untrusted
        self.store: HeldMemories | None = None  # where `pending` is kept between runs (None: not kept)
        self.pending: list[Engram] = []  # every memory waiting for the user's review, oldest first
        self.why: dict[Engram, HeldWhy] = {}  # those the gate held (not the memory mode), with why
        self.proposers: dict[Engram, str] = {}  # who proposed each one the memory mode holds (memorize, cerebellum…)

    # ---- the turn's trust --------------------------------------------------------------------------------------

    def begin_turn(self, turn: int) -> None:
        self.turn_trust = TurnTrust(turn)
        current_turn.set(self.turn_trust)  # the learners this turn starts inherit it

    def taint(self, reason: str) -> None:
        self.turn_trust.taint(reason)
        if reason not in self.conversation_taint and len(self.conversation_taint) < 20:
            self.conversation_taint.append(f"turn {self.turn_trust.turn}: {reason}")

    def new_conversation(self) -> None:
        self.conversation_taint = []

    def now(self) -> TurnTrust | None:
        """The trust of the turn whose work runs here (a learner runs with the turn that started it)."""
        return current_turn.get()

    # ---- what may be saved ---------------------------------------------------------------------------------------

    def sort(self, engrams: list[Engram], producer: str) -> tuple[list[Engram], list[Engram]]:
        """`(may be saved now, held for review)`; the held ones are remembered with their reasons. Those the tainted
        review level sends to the AI reviewer are neither: `triage` gives them."""
        keep, held, _for_ai = self.triage(engrams, producer)
        return keep, held

    def triage(self, engrams: list[Engram], producer: str) -> tuple[list[Engram], list[Engram], list[Engram]]:
        """`(may be saved now, held for review, for the AI reviewer)`; the held ones are remembered with why."""
        if not self.enabled:
            return list(engrams), [], []
        trust = self.now()
        tainted = taint_reason(producer, trust)
        keep: list[Engram] = []
        held: list[Engram] = []
        for_ai: list[Engram] = []
        for engram in engrams:
            injected = [f"reads like an instruction ({why})" for why in instruction_reasons(engram.text)]
            if not injected and tainted is not None and self.tainted_level != "human":
                (for_ai if self.tainted_level == "ai" else keep).append(engram)
                continue
            reasons = ([tainted] if tainted else []) + injected
            if reasons:
                described = trust.describe() if trust is not None else ""
                self.why[engram] = HeldWhy(producer, tuple(reasons), described)
                held.append(engram)
            else:
                keep.append(engram)
        return keep, held, for_ai

    def reasons_for(self, engram: Engram) -> tuple[str, ...]:
        why = self.why.get(engram)
        return why.reasons if why is not None else ()

    # ---- the memories that wait ----------------------------------------------------------------------------------

    def hold(self, engrams: list[Engram], producer: str = "") -> None:
        """Add to what waits for review, proposed by `producer` (a learner or a tool)."""
        if producer:
            for engram in engrams:
                self.proposers.setdefault(engram, producer)
        self.pending.extend(engrams)
        self.save()

    def proposer(self, engram: Engram) -> str:
        """Who proposed a held engram ("" when not known)."""
        why = self.why.get(engram)
        return (why.producer if why is not None else "") or self.proposers.get(engram, "")

    def take(self) -> list[Engram]:
        """All that waits, to ask about now (the queue is left empty)."""
        engrams, self.pending = list(self.pending), []
        return engrams

    def put_back(self, engrams: list[Engram]) -> None:
        """Engrams taken but not decided wait again, ahead of any held since."""
        self.pending[:0] = engrams

    def settle(self, engrams: list[Engram]) -> None:
        """The user has decided about these: they no longer wait."""
        for engram in engrams:
            self.why.pop(engram, None)
            self.proposers.pop(engram, None)
        self.save()

    def save(self) -> None:
        """Write what waits for review to the held store (after every change of the queue)."""
        if self.store is None:
            return
        items = []
        for engram in self.pending:
            why = self.why.get(engram, HeldWhy("", (), ""))
            items.append(engram_to_json(engram, self.proposer(engram), list(why.reasons), why.trust))
        try:
            self.store.save(items)
        except OSError:
            pass  # the queue in memory still holds them; the next change tries again

    def restore(self, store: HeldMemories) -> int:
        """Read back what waited for review when the app last closed; returns how many. `store` is kept after."""
        self.store = store
        restored = 0
        for item in store.load():
            engram = engram_from_json(item)
            if not engram.text or engram in self.pending:
                continue
            reasons = tuple(str(reason) for reason in item.get("reasons") or ())
            self.why[engram] = HeldWhy(str(item.get("producer") or ""), reasons, str(item.get("trust") or ""))
            self.pending.append(engram)
            restored += 1
        return restored
