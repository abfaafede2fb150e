"""Screenshots of every inspector tab at a wide and a small terminal size, compared with the approved SVGs.

Update them with `pytest tests/tui/test_inspector_snapshots.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

import itertools
from datetime import datetime

import pytest

from anton_tui.agent.events import AccEventObserved, AccNudge
from anton_tui.memory.learners.acc import Event, Lesson

from .inspector_fixtures import PROJECT_LESSONS, InspectorHost, seeded_stores, settle

SIZES = {"wide": (120, 40), "small": (80, 24)}
TABS = ("rules", "lessons", "profile", "skills", "acc", "episodes", "history", "context")
NOON = 1795003200.0  # 2026-11-18 12:00 UTC: the time of the recorded changes in the History screenshot


def snapshot_app(tmp_path) -> InspectorHost:
    stores = seeded_stores(tmp_path)
    # One unreadable line, so the warning banner is part of the picture.
    stores.project_hc.lessons_path.write_text(PROJECT_LESSONS + "this line is not a lesson\n")
    minutes = itertools.count(NOON, 60)
    for history in stores.recorder.scopes.values():
        history.clock = lambda: next(minutes)
    stores.recorder.start()
    from anton_tui.memory.history.origin import Origin

    path = stores.project_hc.lessons_path  # a dated line, as the consolidator writes it, noted as its change
    path.write_text(path.read_text() + "- Check the API's rate limit header <!-- topic:api ts:2026-11-22 -->\n")
    origin = Origin("consolidator", session="20261122_042512", turn=3, why="replayed pad main")
    stores.recorder.note("project", "lessons.md", path.read_bytes(), origin)
    stores.recorder.flush()
    seed_rule_use(stores)
    return InspectorHost(stores)


def seed_rule_use(stores) -> None:
    """Four prompts counted (one rule loaded only in the first, so dormant once three prompts count as a long
    stretch); that rule was written by the ACC, its pattern seen twice before it and once since."""
    from anton_tui.memory.engrams.counters import PromptRecord

    hc = stores.global_hc
    rules = {rule.text: rule.id for rule in hc.get_rules()}
    httpx, never, cells = (rules[text] for text in (
        "Use httpx instead of requests", "Never print credentials", "Keep scratchpad cells small and print progress"))  # fmt: skip
    present = {"rules": list(rules.values()), "lessons": []}
    pattern = {"detect_repeated_tool_error"}
    hc.outcomes.pattern_seen(pattern, set())
    hc.outcomes.pattern_seen(pattern, set())
    hc.outcomes.rule_written(cells, "detect_repeated_tool_error")
    hc.outcomes.pattern_seen(pattern, {cells})
    for day, loaded in ((20, [httpx, never, cells]), (21, [httpx]), (22, [httpx, never]), (23, [httpx, never])):
        left = [] if cells in loaded else [cells]
        hc.counters.record(PromptRecord({"rules": loaded}, {"rules": left}, present), datetime(2026, 11, day, 9))


async def show(pilot, tab: str) -> None:
    app = pilot.app
    await settle(pilot)
    app.pane.show_tab(tab)
    if tab == "acc":
        feed = app.pane.acc_feed
        event = Event("scratchpad_result", severity=3, detail={"name": "main", "success": False}, round_idx=2)
        feed.add(AccEventObserved(event), at=datetime(2026, 11, 22, 4, 25, 12))
        reset = Event("scratchpad_reset", severity=2, detail={"name": "main"}, round_idx=3)
        feed.add(AccEventObserved(reset), at=datetime(2026, 11, 22, 4, 25, 20))
        lesson = Lesson(
            "Never reset a scratchpad to get past an error; debug the failing cell in place.",
            "never", "detect_reset_churn", 2,
        )  # fmt: skip
        feed.add(AccNudge(lesson, nudged=True), at=datetime(2026, 11, 22, 4, 25, 21))
    if tab == "episodes":
        app.pane.tab("episodes").search("bitcoin")
    if tab == "context":
        from anton_tui.agent.context_report import ContextReports, report_from_selection
        from anton_tui.memory.engrams.cortex import Cortex
        from anton_tui.memory.engrams.ranking import TurnQuery

        stores = app.stores
        cortex = Cortex(stores.global_hc, stores.project_hc)
        selection = cortex.select_memory(TurnQuery("Page through the CoinGecko API with httpx"), budget_tokens=30)
        reports = ContextReports()
        reports.record(report_from_selection(
            4, selection, files=[("project", "AGENTS.md", "Run the tests with make test.")],
            skills="- `csv_summary` — summarise a CSV", system_chars=9000, ratio=3.5,
        ))  # fmt: skip
        app.pane.runtime.session.context_reports = reports
        app.pane.tab("context").refresh_data()
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("tab", TABS)
def test_inspector_tab_snapshot(snap_compare, tmp_path, tab, size, monkeypatch):
    monkeypatch.setattr("anton_tui.memory.engrams.counters.DORMANT_AFTER", 3)
    async def run_before(pilot) -> None:
        await show(pilot, tab)

    assert snap_compare(snapshot_app(tmp_path), terminal_size=SIZES[size], run_before=run_before)
