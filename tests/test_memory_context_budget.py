"""The prompt's rules and lessons fill their budget exactly as a plain walk over every entry would, though the walk
stops as soon as nothing more can fit (so the memory context costs the same with 50 or 50,000 lessons)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from anton_tui.memory.engrams.engram import RULE_KINDS
from anton_tui.memory.engrams.hippocampus import Hippocampus


def plain_lessons(hc: Hippocampus, token_budget: int, exclude_scratchpad: bool) -> list[str]:
    """Newest first, each lesson that still fits, skipping those that do not: every lesson looked at."""
    entries = hc.list_entries("lessons")
    related = hc.read_file("lessons").related
    budget, used, kept = token_budget * 4, 0, []
    for entry, is_related in reversed(list(zip(entries, related))):
        if exclude_scratchpad and is_related:
            continue
        if used + len(entry.text) + 1 <= budget:
            kept.append(entry.text)
            used += len(entry.text) + 1
    return kept


def plain_rules(hc: Hippocampus, char_budget: int, exclude_scratchpad: bool) -> str:
    parsed = hc.read_file("rules")
    sections, used = [], 0
    for kind in RULE_KINDS:
        lines = []
        for entry, related in zip(parsed.entries, parsed.related):
            if entry.kind != kind or (exclude_scratchpad and kind == "when" and related):
                continue
            line = f"- {entry.text}"
            if used + len(line) + 1 <= char_budget:
                lines.append(line)
                used += len(line) + 1
        if lines:
            sections.append(f"## {kind.capitalize()}\n" + "\n".join(lines))
    return "\n\n".join(sections)


@pytest.mark.parametrize("seed", range(6))
def test_lessons_within_budget_match_a_walk_over_all_of_them(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = ["# Lessons\n"]
    for n in range(400):
        words = " ".join(rng.choice(["alpha", "beta", "scratchpad", "gamma", "delta"]) for _ in range(rng.randint(1, 60)))
        lines.append(f"- lesson {n} {words} <!-- topic:t{n % 5} -->\n")
    (tmp_path / "lessons.md").write_text("".join(lines))
    hc = Hippocampus(tmp_path)
    for budget in (1, 3, 40, 250, 1000, 100_000):
        for exclude in (False, True):
            got = [e.text for e in hc.get_lessons(budget, exclude_scratchpad=exclude)]
            assert got == plain_lessons(hc, budget, exclude), (budget, exclude)


@pytest.mark.parametrize("seed", range(4))
def test_rules_within_budget_match_a_walk_over_all_of_them(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    parts = ["# Rules\n"]
    for kind in ("Always", "Never", "When"):
        parts.append(f"\n## {kind}\n")
        for n in range(150):
            words = " ".join(rng.choice(["use", "the", "scratchpad", "cache", "data"]) for _ in range(rng.randint(1, 40)))
            parts.append(f"- {kind} rule {n} {words}\n")
    (tmp_path / "rules.md").write_text("".join(parts))
    hc = Hippocampus(tmp_path)
    for budget in (5, 100, 2000, 6000, 1_000_000):
        for exclude in (False, True):
            assert hc.recall_rules(budget, exclude_scratchpad=exclude) == plain_rules(hc, budget, exclude)
