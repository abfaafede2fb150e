"""The Rules tab: every always/never/when rule of the global and the project memory, editable in place, with how
each is used: prompts it was loaded into, when last, dormant ones marked, and for the ACC's rules how often their
error pattern was seen before the rule and since."""

from __future__ import annotations

from dataclasses import dataclass, field

from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.engrams.rule_figures import NO_FIGURES, RuleFigures
from anton_tui.tui.widgets.inspector.base import ColumnSpec
from anton_tui.tui.widgets.inspector.entries import EntrySnapshot, EntryTab, date_of


@dataclass(frozen=True)
class RuleSnapshot(EntrySnapshot):
    figures: dict[tuple[str, str], RuleFigures] = field(default_factory=dict)  # (scope, rule id) -> figures


class RulesTab(EntryTab):
    """Rules from ~/.anton/memory/rules.md and the project's .anton/memory/rules.md."""

    TITLE = "Rules"
    KIND_FILE = "rules"
    NOUN = "rule"
    EMPTY = "No rules yet. Rules are written when you ask Anton to remember how to work, or by the ACC."
    COLUMNS = (
        ColumnSpec("scope", "Scope", 7),
        ColumnSpec("kind", "Kind", 6),
        ColumnSpec("text", "Rule", None),
        ColumnSpec("loaded", "Loaded", 7, drop=2),
        ColumnSpec("pattern", "Seen→since", 10, drop=3),
        ColumnSpec("last", "Last loaded", 11, drop=4),
        ColumnSpec("confidence", "Conf.", 6, drop=5),
        ColumnSpec("source", "Source", 8, drop=6),
        ColumnSpec("date", "Date", 10, drop=1),
    )
    HELP = """\
## Rules

The standing instructions Anton follows: **always**, **never** and **when** rules, from the global memory
(`~/.anton/memory/rules.md`) and this project's (`.anton/memory/rules.md`).

Each turn's prompt carries the rules that bear on it, within the memory budget (`ANTON_MEMORY_BUDGET_TOKENS`); the
rules you wrote or confirmed (`source:user`) always go. **Loaded** counts the prompts a rule went into (`·` marks a
rule that has gone unloaded for a long stretch: *dormant*, offered to compaction, never deleted without it).
**Seen→since**, for a rule the ACC wrote: how often its error pattern was seen before the rule landed, and since
in turns that carried it.

- `e` or `Enter`: edit the highlighted rule
- `d` or `Delete`: delete it (asks first)
- `r`: reload from disk (changes made elsewhere show up by themselves)

Lines that cannot be read are listed in a warning at the top and left untouched in the file.
"""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._figures: dict[tuple[str, str], RuleFigures] = {}

    async def read_snapshot(self) -> RuleSnapshot:
        snapshot = await super().read_snapshot()
        figures = await self.runtime.memory.rule_figures()
        return RuleSnapshot(snapshot.rows, snapshot.problems, figures)

    def apply_snapshot(self, snapshot: EntrySnapshot) -> None:
        if isinstance(snapshot, RuleSnapshot):
            self._figures = snapshot.figures
        super().apply_snapshot(snapshot)

    def figures_of(self, engram: Engram) -> RuleFigures:
        return self._figures.get((engram.scope, engram.id), NO_FIGURES)

    def cells(self, engram: Engram) -> tuple[object, ...]:
        found = self.figures_of(engram)
        loaded = f"{found.loaded} ·" if found.dormant else found.loaded
        return (engram.scope, engram.kind, engram.text, loaded, found.pattern, found.last_loaded, engram.confidence,
                engram.source, date_of(engram))  # fmt: skip

    def detail_facts(self, engram: Engram) -> list[str]:
        found = self.figures_of(engram)
        facts = [f"loaded into {found.loaded} prompts" + (f", last {found.last_loaded}" if found.last_loaded else "")]
        if found.dormant:
            facts.append(f"dormant: not loaded in the last {found.use.idle:,} prompts (offered to compaction)")
        if found.outcome is not None:
            facts.append(f"its pattern was seen {found.outcome.before}× before it, {found.outcome.since}× since")
        return facts
