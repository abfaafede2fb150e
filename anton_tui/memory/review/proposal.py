"""What a self-change is while it waits for review (`Proposal`), what became of it (`Decision`), and how a held one
is shown to a person (`HeldChange`).

A proposal names its target (a memory file's entry, a profile fact, a skill's SKILL.md), carries the new text whole
and the digest of what the target held when the change was proposed (`base`), so a review that comes later can tell
that the target moved under it. Its `id` is short and stable: the proposal's own words, hashed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any, Literal

ProposalKind = Literal["rule", "lesson", "profile", "skill"]
Status = Literal["proposed", "applied", "held", "rejected", "undone"]
Level = Literal["ai", "human", "none"]

KINDS: tuple[ProposalKind, ...] = ("rule", "lesson", "profile", "skill")
LEVELS: tuple[Level, ...] = ("ai", "human", "none")
RULE_FORMS = ("always", "never", "when")

DECIDED_BY_PERSON = "person"
DECIDED_BY_AI = "ai"
DECIDED_BY_POLICY = "policy"  # review level none: applied without a reviewer
DECIDED_BY_CHECK = "check"  # a step of the pipeline turned it down or held it


def digest(data: bytes | str | None) -> str:
    """The sha256 of a target's bytes (`""` for a target that does not exist)."""
    if data is None:
        return ""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class Proposal:
    """One self-change waiting for review.

    `kind` is a rule (`form` always/never/when), a lesson (`topic`), a profile fact (`Key: value`) or a skill
    (`label`, `text` is the whole SKILL.md). `scope` is global or project (a profile fact and a skill are global).
    `source` says who proposed it ("reflection daily 2026-11-20", "/skill save", "consolidator"), `why` in their
    words, `tainted` the reasons the input was not trusted (empty: trusted), `reflection` the file it came from.
    """

    kind: ProposalKind
    text: str
    scope: str = "project"
    why: str = ""
    source: str = ""
    base: str = ""
    tainted: tuple[str, ...] = ()
    form: str = ""
    topic: str = ""
    label: str = ""
    reflection: str = ""
    created: str = ""

    @property
    def id(self) -> str:
        words = "\0".join((self.kind, self.scope, self.label, self.form, self.text, self.source, self.created))
        return hashlib.sha256(words.encode("utf-8")).hexdigest()[:10]

    @property
    def target(self) -> str:
        """What it changes, in words: "project lessons.md", "global profile.md", "skill csv-summary"."""
        if self.kind == "skill":
            return f"skill {self.label}"
        if self.kind == "profile":
            return "global profile.md"
        return f"{self.scope} {'rules' if self.kind == 'rule' else 'lessons'}.md"

    @property
    def title(self) -> str:
        """One line for lists: the skill's label, else the entry's text."""
        if self.kind == "skill":
            return f"{self.label}: {self.why}" if self.why else self.label
        return " ".join(self.text.split())

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["tainted"] = list(self.tainted)
        return {key: value for key, value in data.items() if value not in ("", [], ())} | {"kind": self.kind}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Proposal:
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError(f"unknown proposal kind {kind!r}")
        fields = {field.name for field in dataclasses.fields(cls)}
        text = {key: str(value) for key, value in data.items() if key in fields and key not in ("kind", "tainted")}
        return cls(kind=kind, tainted=tuple(str(reason) for reason in data.get("tainted") or ()), **text)


@dataclass(frozen=True)
class Decision:
    """What the review made of a proposal: `status` applied, held (waits for a person), rejected or undone, `why`,
    who decided (`by`: person, ai, policy, check), when (`at`, ISO time), the memory history change that records it
    (`change`), and for a skill the SKILL.md it replaced (`before`; None: there was none) so undo can put it back."""

    status: Status
    why: str
    by: str = DECIDED_BY_CHECK
    at: str = ""
    change: str = ""
    applied_change: str = ""  # for an applied engram: the history change that wrote it (what undo reverts)
    before: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        status = data.get("status")
        if status not in ("proposed", "applied", "held", "rejected", "undone"):
            raise ValueError(f"unknown decision {status!r}")
        before = data.get("before")
        return cls(
            status=status,
            why=str(data.get("why") or ""),
            by=str(data.get("by") or DECIDED_BY_CHECK),
            at=str(data.get("at") or ""),
            change=str(data.get("change") or ""),
            applied_change=str(data.get("applied_change") or ""),
            before=before if isinstance(before, str) else None,
        )


@dataclass(frozen=True)
class HeldChange:
    """A proposal that waits for a person, as the review dialog shows it: what and where, why it was held, and the
    change itself (`diff`: a unified diff of SKILL.md for a skill, the new line for an entry)."""

    id: str
    kind: ProposalKind
    target: str
    title: str
    why: str
    diff: str
    source: str = ""


def engram_proposal(
    text: str, kind: str, scope: str, *, topic: str | None, source: str, tainted: tuple[str, ...] = (), why: str = ""
) -> Proposal:
    """The proposal an engram a learner made stands for (a rule's kind is its form: always, never, when)."""
    if kind in RULE_FORMS:
        return Proposal("rule", text, scope, why, source, tainted=tainted, form=kind)
    if kind == "profile":
        return Proposal("profile", text, "global", why, source, tainted=tainted)
    return Proposal("lesson", text, scope, why, source, tainted=tainted, topic=topic or "")
