"""The record of every proposal the review has seen and what became of it, in one JSON file per project.

`ProposalBook` keeps each proposal with its decisions in order (held, then applied by a person, then undone...), so
the Reflections view can show a proposal's whole story, a held one survives exit, and the rate limit can count what
was applied today without a person. Each change reads the file, changes it and writes it back atomically under a
lock on its folder, so two processes (the app and `anton-tui reflect` from cron) take turns. A file that cannot be
read is left as it is and reads as empty, and a write then refuses rather than lose it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from anton_tui.memory.files.locking import atomic_write, folder_lock
from anton_tui.memory.review.proposal import DECIDED_BY_PERSON, Decision, Proposal, Status


class BookUnreadable(Exception):
    """The proposals file is damaged; it was left as it is and nothing was written."""


@dataclass(frozen=True)
class Entry:
    """A proposal and its decisions, oldest first."""

    proposal: Proposal
    decisions: tuple[Decision, ...] = ()

    @property
    def status(self) -> Status:
        return self.decisions[-1].status if self.decisions else "proposed"

    @property
    def last(self) -> Decision | None:
        return self.decisions[-1] if self.decisions else None

    def applied(self) -> Decision | None:
        """The decision that applied it, when it stands applied."""
        return self.last if self.status == "applied" else None

    def to_json(self) -> dict[str, Any]:
        return {"proposal": self.proposal.to_json(), "decisions": [d.to_json() for d in self.decisions]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        decisions = tuple(Decision.from_json(item) for item in data.get("decisions") or () if isinstance(item, dict))
        return cls(Proposal.from_json(data["proposal"]), decisions)


class ProposalBook:
    """Every proposal of one project and its decisions (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def entries(self) -> list[Entry]:
        """Every proposal, oldest first; a damaged file reads as none."""
        try:
            return self._read()
        except BookUnreadable:
            return []

    def entry(self, proposal_id: str) -> Entry | None:
        return next((entry for entry in self.entries() if entry.proposal.id == proposal_id), None)

    def held(self) -> list[Entry]:
        return [entry for entry in self.entries() if entry.status == "held"]

    def applied_without_person_since(self, since: datetime) -> int:
        """How many changes the review applied on its own (AI reviewer or review level none) since `since`."""
        count = 0
        for entry in self.entries():
            for decision in entry.decisions:
                if decision.status == "applied" and decision.by != DECIDED_BY_PERSON and _at(decision) >= since:
                    count += 1
        return count

    def add(self, proposal: Proposal) -> Entry:
        """Record a new proposal (one already recorded is left as it is); returns its entry."""
        with self._changing() as entries:
            for entry in entries:
                if entry.proposal.id == proposal.id:
                    return entry
            entry = Entry(proposal)
            entries.append(entry)
            return entry

    def decide(self, proposal_id: str, decision: Decision) -> Entry:
        """Add a decision to a proposal's story. Raises KeyError when there is no such proposal."""
        with self._changing() as entries:
            for index, entry in enumerate(entries):
                if entry.proposal.id == proposal_id:
                    entries[index] = Entry(entry.proposal, (*entry.decisions, decision))
                    return entries[index]
        raise KeyError(proposal_id)

    def update(self, change: Callable[[list[Entry]], None]) -> None:
        with self._changing() as entries:
            change(entries)

    # ---- the file ----------------------------------------------------------------------------------------------

    def _read(self) -> list[Entry]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise BookUnreadable(f"{self.path} cannot be read: {exc}") from exc
        try:
            data = json.loads(raw.decode("utf-8"))
            items = data.get("proposals") if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise ValueError("no list of proposals")
            return [Entry.from_json(item) for item in items]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BookUnreadable(f"{self.path} is damaged ({exc}); it was left as it is") from exc

    @contextmanager
    def _changing(self) -> Iterator[list[Entry]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with folder_lock(self.path.parent):
            entries = self._read()
            yield entries
            data = {"proposals": [entry.to_json() for entry in entries]}
            atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _at(decision: Decision) -> datetime:
    try:
        at = datetime.fromisoformat(decision.at)
    except ValueError:
        return _EPOCH
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
