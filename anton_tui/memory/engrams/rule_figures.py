"""What the Rules tab shows of each rule's use: prompts it was loaded into, when last, whether it is dormant, and for
a rule the ACC wrote, how often its error pattern was seen before it landed and since (see `counters`, `outcomes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from anton_tui.memory.engrams.counters import EntryFigures

if TYPE_CHECKING:
    from anton_tui.memory.engrams.hippocampus import Hippocampus
    from anton_tui.memory.engrams.outcomes import Outcome


@dataclass(frozen=True, slots=True)
class RuleFigures:
    """One rule's use (`use`, from the counters) and, for an ACC rule, its pattern's figures (`outcome`)."""

    use: EntryFigures
    outcome: Outcome | None = None

    @property
    def loaded(self) -> str:
        return f"{self.use.loaded:,}"

    @property
    def last_loaded(self) -> str:
        return (self.use.last_loaded_at or "")[:10]

    @property
    def pattern(self) -> str:
        """``"X → Y"``: the pattern seen X times before the rule landed, Y times since (while it was loaded)."""
        return f"{self.outcome.before} → {self.outcome.since}" if self.outcome is not None else ""

    @property
    def dormant(self) -> bool:
        return self.use.dormant


NO_FIGURES = RuleFigures(EntryFigures())


def rule_figures(hc: Hippocampus) -> dict[str, RuleFigures]:
    """The figures of the rules of one scope, by rule id (a rule with none has `NO_FIGURES`)."""
    uses = hc.counters.figures("rules")
    outcomes = hc.outcomes.figures()
    return {rule: RuleFigures(uses.get(rule, EntryFigures()), outcomes.get(rule)) for rule in {*uses, *outcomes}}
