"""The ledgers of the conversation in progress: those its summaries made so far, the memory writes seen in turns not
yet folded, and the folded turns the user asked to bring back into the next request.

`SavedConversation` holds one `LedgerBook` and saves each new ledger beside the conversation; the book itself
keeps no files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anton_tui.agent.ledger import FoldedTurn, Ledger, MemoryWriteEntry, build_ledger, unfold_note


class LedgerBook:
    """The ledgers of one conversation, oldest first, and what waits to go into them or into the next request."""

    def __init__(self) -> None:
        self.ledgers: list[Ledger] = []
        self._turn_message: dict[str, Any] | None = None  # the user message of the running turn
        self._writes: list[tuple[dict[str, Any], MemoryWriteEntry]] = []  # by the user message of their turn
        self._unfolding: list[FoldedTurn] = []

    def reset(self, ledgers: Sequence[Ledger] = ()) -> None:
        """A new or resumed conversation: its ledgers (none for a new one); nothing waits."""
        self.ledgers = list(ledgers)
        self._turn_message = None
        self._writes.clear()
        self._unfolding.clear()

    @property
    def folded_turns(self) -> int:
        """How many turns the ledgers hold (the next folded turn gets the number after it)."""
        return max((ledger.last_turn for ledger in self.ledgers), default=0)

    # ---- while turns run -----------------------------------------------------------------------------------

    def turn_began(self, message: dict[str, Any]) -> None:
        """The user message that starts the running turn (memory written from now on belongs to it)."""
        self._turn_message = message

    def memory_written(self, engrams: Sequence[Any], producer: str) -> None:
        """Memory a learner wrote during the running turn (the agent's own `memorize` calls are read from the
        messages themselves)."""
        if self._turn_message is None or producer == "memorize":
            return
        for engram in engrams:
            entry = MemoryWriteEntry(0, str(engram.text), str(engram.kind), str(engram.scope), producer)
            self._writes.append((self._turn_message, entry))

    # ---- folding -------------------------------------------------------------------------------------------

    def build(self, folded: Sequence[dict[str, Any]], kind: str = "summary") -> Ledger:
        """The ledger of messages about to be folded (nothing is kept until `add`)."""
        index_of = {id(message): index for index, message in enumerate(folded)}
        writes = [(index_of[id(message)], entry) for message, entry in self._writes if id(message) in index_of]
        return build_ledger(folded, self.folded_turns + 1, kind=kind, memory_writes=writes)

    def add(self, ledger: Ledger) -> None:
        """Keep a ledger whose turns have left the history (their memory writes are in it now)."""
        self.ledgers.append(ledger)
        folded = {id(message) for turn in ledger.turns for message in turn.messages}
        self._writes = [(message, entry) for message, entry in self._writes if id(message) not in folded]

    # ---- bringing turns back -------------------------------------------------------------------------------

    def folded_turn(self, number: int) -> FoldedTurn:
        for ledger in self.ledgers:
            turn = ledger.turn(number)
            if turn is not None:
                return turn
        if not self.ledgers:
            raise LookupError("No turn of this conversation has been summarised, so there is nothing to unfold.")
        raise LookupError(f"No folded turn {number}: the ledgers hold turns 1–{self.folded_turns}.")

    def unfold(self, number: int) -> FoldedTurn:
        """Bring folded turn `number` back, word for word, in the next request. Raises LookupError."""
        turn = self.folded_turn(number)
        if all(waiting.number != number for waiting in self._unfolding):
            self._unfolding.append(turn)
        return turn

    @property
    def unfolding(self) -> tuple[int, ...]:
        """The numbers of the folded turns waiting to go into the next request."""
        return tuple(turn.number for turn in self._unfolding)

    def take_unfold_notes(self) -> list[str]:
        """The notes that bring the waiting turns back (the next request carries them; they wait no more)."""
        notes = [unfold_note(turn) for turn in self._unfolding]
        self._unfolding.clear()
        return notes
