"""The Skills tab: every saved procedure with its usage counters, sortable by any column.

Skill folders that cannot be read are listed in a warning at the top; their files are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from textual import on
from textual.binding import Binding
from textual.content import Content
from textual.events import Resize
from textual.widgets import DataTable, Static

from anton_tui.memory.skills.format import STAGES
from anton_tui.memory.skills.sources import SOURCE_ORDER, SOURCE_TITLES
from anton_tui.runtime import SkillUsage
from anton_tui.tui.widgets.inspector.base import (
    ColumnSpec,
    FileTab,
    ProblemBanner,
    cursor_key,
    pick,
    restore_cursor,
    set_columns,
    table_width,
)

COLUMNS = (
    ColumnSpec("label", "Label", None),
    ColumnSpec("name", "Name", None, drop=5),
    ColumnSpec("recalls", "Recalls", 7),
    ColumnSpec("stage_1", "Stage 1", 7, drop=1),
    ColumnSpec("stage_2", "Stage 2", 7, drop=3),
    ColumnSpec("stage_3", "Stage 3", 7, drop=4),
    ColumnSpec("source", "Source", 9, drop=6),
    ColumnSpec("last_used", "Last used", 16, drop=2),
)
SOURCE_SHORT = {"user": "yours", "project": "project", "agents": ".agents", "claude": ".claude", "builtin": "built-in"}


def cells(row: SkillUsage) -> tuple[object, ...]:
    """What one skill's row shows, column by column."""
    return (
        row.label,
        row.name,
        row.recalls,
        *(f"{recommended}/{used}" for recommended, used in row.stages),
        SOURCE_SHORT.get(row.source, row.source),
        row.last_used[:16].replace("T", " "),
    )


SORT_KEYS: dict[str, Callable[[SkillUsage], Any]] = {
    "label": lambda row: row.label.casefold(),
    "name": lambda row: row.name.casefold(),
    "source": lambda row: SOURCE_ORDER.index(row.source) if row.source in SOURCE_ORDER else 99,
    "recalls": lambda row: row.recalls,
    "stage_1": lambda row: row.stages[0],
    "stage_2": lambda row: row.stages[1],
    "stage_3": lambda row: row.stages[2],
    "last_used": lambda row: row.last_used,
}


@dataclass(frozen=True)
class SkillsSnapshot:
    rows: list[SkillUsage] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class SkillsTab(FileTab):
    """Saved skills from ~/.anton/skills with recall counts per stage."""

    TABLE_CLASSES = "skills"

    TITLE = "Skills"
    BINDINGS = [
        Binding("s", "sort_next", "Sort", id="inspector.sort"),
        Binding("S", "sort_reverse", "Reverse", id="inspector.sort_reverse"),
        Binding("r", "reload", "Reload", id="inspector.reload"),
    ]
    HELP = """\
## Skills

Procedures Anton saved in `~/.anton/skills`, shared by every project, and read-only skills from the project's
`.agents/skills`, `~/.agents/skills`, `~/.claude/skills` and the built-in ones (**Source**). When two sources hold the
same label, the project's wins, then yours, then the other tools', then the built-in one; clashes are listed at the top.

- **Recalls**: how often the skill was recalled in total
- **Stage 1/2/3**: times recommended / times used at each stage (1 procedure, 2 notes, 3 code)
- **Last used**: the latest use at any stage (UTC)

Keys: `s` sorts by the next column, `S` reverses the order, clicking a column header sorts by it (click again
to reverse), `r` reloads. Skill folders that cannot be read are listed at the top and left untouched.
"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._snapshot = SkillsSnapshot()
        self._rows: dict[str, SkillUsage] = {}
        self.sort_column = "label"
        self.sort_reverse = False
        self._fitted_width = 0

    # ---- loading ---------------------------------------------------------------------------------------------

    async def read_snapshot(self) -> SkillsSnapshot:
        usage = await self.runtime.skills.usage()
        problems = [
            f"⚠ skill {broken.label}: {broken.reason}"
            if broken.source == "user"
            else f"⚠ skill {broken.label} in {SOURCE_TITLES.get(broken.source, broken.source)}: {broken.reason} "
            "(read-only, left as it is)"
            for broken in usage.broken
        ]
        for clash in usage.clashes:
            hidden = ", ".join(SOURCE_TITLES.get(key, key) for key in clash.shadowed)
            problems.append(
                f"⚠ label {clash.label} is used by more than one source: {SOURCE_TITLES.get(clash.winner)} is used, "
                f"{hidden} hidden"
            )
        return SkillsSnapshot(usage.rows, problems)

    def apply_snapshot(self, snapshot: SkillsSnapshot) -> None:
        self._snapshot = snapshot
        self._rows = {row.label: row for row in snapshot.rows}
        self.query_one(ProblemBanner).show_problems(snapshot.problems)
        self.fill_table()
        self.post_message(self.Summary(self, len(snapshot.rows), len(snapshot.problems)))

    def sorted_rows(self) -> list[SkillUsage]:
        by_label = sorted(self._snapshot.rows, key=SORT_KEYS["label"])
        return sorted(by_label, key=SORT_KEYS[self.sort_column], reverse=self.sort_reverse)

    def fill_table(self) -> None:
        table = self.table
        keep, old_index = cursor_key(table), table.cursor_row
        arrow = " ▼" if self.sort_reverse else " ▲"
        labels = [spec.label + (arrow if spec.key == self.sort_column else "") for spec in COLUMNS]
        shown = set_columns(table, COLUMNS, labels)
        rows = self.sorted_rows()
        table.show_keyed_rows([row.label for row in rows], lambda n: pick(cells(rows[n]), shown))
        self._fitted_width = table_width(table)
        restore_cursor(table, [row.label for row in rows], keep, old_index)
        self._show_detail(rows[table.cursor_row] if rows else None)

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self.loaded and self.is_mounted and table_width(self.table) != self._fitted_width:
            self.fill_table()

    # ---- sorting ---------------------------------------------------------------------------------------------

    def sort_by(self, column: str, *, reverse: bool = False) -> None:
        if column not in SORT_KEYS:
            raise ValueError(f"unknown column {column!r}")
        self.sort_column, self.sort_reverse = column, reverse
        self.fill_table()

    def action_sort_next(self) -> None:
        keys = [spec.key for spec in COLUMNS]
        self.sort_by(keys[(keys.index(self.sort_column) + 1) % len(keys)])

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort_column, reverse=not self.sort_reverse)

    @on(DataTable.HeaderSelected)
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = event.column_key.value
        if column is None:
            return
        if column == self.sort_column:
            self.action_sort_reverse()
        else:
            self.sort_by(column)

    def action_reload(self) -> None:
        self.refresh_data()

    # ---- details ---------------------------------------------------------------------------------------------

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(self._rows.get(event.row_key.value or ""))

    def _show_detail(self, row: SkillUsage | None) -> None:
        detail = self.query_one(".detail", Static)
        if row is None:
            empty = "No skills saved yet. Ask Anton to save a procedure that worked as a skill."
            detail.update(Content(empty if self.loaded else self.waiting_text()))
            return
        stages = ", ".join(
            f"stage {number}: {recommended} recommended / {used} used"
            for number, (recommended, used) in zip(STAGES, row.stages, strict=False)
        )
        detail.update(Content.assemble((f"{row.label} · {stages}", "dim"), "\n", row.cue or row.name))
