"""The checks of the review, in the order it runs them: taint, hash, structure and the injection scan.

Each looks at one proposal and says what is wrong with it, or nothing. Taint: the proposal was made from untrusted
input (a turn outside content entered, or a day one of whose episodes carries the trust gate's mark), so the tainted
review level applies. Hash: the target no longer holds what it held when the change was proposed (another write got
there first). Structure: a skill's SKILL.md has valid front matter naming the skill and a procedure under it; an
engram is one entry of one line. Injection scan: the trust gate's instruction patterns. A rule or a lesson is
*meant* to tell the agent what to do, and a skill is a procedure of commands, so the scan of a skill leaves out the
two patterns that every procedure matches (telling the agent to run something, naming a URL to fetch) and keeps
those no honest procedure needs (ignoring earlier instructions, piping into a shell, sending secrets away).
"""

from __future__ import annotations

from dataclasses import dataclass

from anton_tui.memory.review.proposal import RULE_FORMS, Proposal
from anton_tui.memory.trust import INSTRUCTION_PATTERNS

SKILL_SCAN_SKIPS = frozenset({"tells the agent to always run something", "names a URL to fetch"})
MAX_ENTRY_CHARS = 1000
MAX_SKILL_CHARS = 64 * 1024


@dataclass(frozen=True)
class Finding:
    """What one step found wrong: `step` (taint, hash, structure, injection, rate limit) and why, in words."""

    step: str
    why: str


def taint(proposal: Proposal) -> Finding | None:
    if not proposal.tainted:
        return None
    return Finding("taint", "made from untrusted input: " + "; ".join(proposal.tainted))


def stale(proposal: Proposal, current: str) -> Finding | None:
    """The hash step: `current` is the digest of what the target holds now."""
    if current == proposal.base:
        return None
    if proposal.kind in ("rule", "lesson"):
        return Finding("hash", f"{proposal.target} already holds this entry")
    return Finding("hash", f"{proposal.target} changed after the change was proposed; propose it again")


def structure(proposal: Proposal) -> Finding | None:
    if proposal.kind == "skill":
        return _skill_structure(proposal)
    return _entry_structure(proposal)


def _entry_structure(proposal: Proposal) -> Finding | None:
    from anton_tui.memory.engrams.engram import entry_text

    text = proposal.text
    if "\n" in text.strip() or "\r" in text:
        return Finding("structure", "a memory entry is one line; this text has several")
    if not entry_text(text):
        return Finding("structure", "a memory entry needs some words; this text is empty or only punctuation")
    if len(text) > MAX_ENTRY_CHARS:
        return Finding("structure", f"a memory entry is at most {MAX_ENTRY_CHARS} characters; this one has {len(text)}")
    if "<!--" in text or "-->" in text:
        return Finding("structure", "the text holds a comment marker, which would forge an entry's metadata")
    if proposal.kind == "rule" and proposal.form not in RULE_FORMS:
        return Finding("structure", f"a rule is always, never or when; not {proposal.form or 'unset'!r}")
    if proposal.kind == "profile" and ":" not in text:
        return Finding("structure", "a profile fact reads `Key: value`")
    if proposal.scope not in ("global", "project"):
        return Finding("structure", f"unknown memory scope {proposal.scope!r}")
    return None


def _skill_structure(proposal: Proposal) -> Finding | None:
    from anton_tui.memory.skills.format import (
        SkillFormatError,
        parse_front_matter,
        split_skill_md,
        validate_label,
    )

    try:
        label = validate_label(proposal.label)
    except ValueError as exc:
        return Finding("structure", f"bad skill label: {exc}")
    if len(proposal.text) > MAX_SKILL_CHARS:
        return Finding("structure", f"SKILL.md is larger than {MAX_SKILL_CHARS // 1024} KiB")
    try:
        front, body = split_skill_md(proposal.text)
        data = parse_front_matter(front)
    except SkillFormatError as exc:
        return Finding("structure", str(exc))
    if str(data.get("name") or "") != label:
        return Finding("structure", f"SKILL.md: 'name' must be the skill's label {label!r}, found {data.get('name')!r}")
    if not str(data.get("description") or "").strip():
        return Finding("structure", "SKILL.md: 'description' is empty; it is the line that says when to use the skill")
    if not body.strip():
        return Finding("structure", "SKILL.md: there is no procedure under the front matter")
    return None


def injection_reasons(text: str, kind: str) -> list[str]:
    """The trust gate's patterns `text` matches (for a skill, without those every procedure matches)."""
    skips = SKILL_SCAN_SKIPS if kind == "skill" else frozenset()
    return [why for why, pattern in INSTRUCTION_PATTERNS if why not in skips and pattern.search(text)]


def injection(proposal: Proposal) -> Finding | None:
    reasons = injection_reasons(proposal.text, proposal.kind)
    if not reasons:
        return None
    return Finding("injection", "reads like an injected instruction (" + "; ".join(reasons) + ")")
