"""Snapshot of the main screen in the middle of a turn: an answer streamed, a tool call and a cell still running.

Everything that varies between runs is pinned: version string, workspace path, token counts, cell timings, no
cursor blink, no user themes. Update with `pytest tests/tui/test_app_snapshot.py --snapshot-update` and review the
SVGs before committing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.agent.events import (
    AssistantMessageDone,
    AssistantTextDelta,
    MemoryWritten,
    ScratchpadActivity,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageUpdated,
)
from anton_tui.memory.engrams.engram import Engram
from anton_tui.scratchpad.events import CellHeartbeat, CellOutput, CellProgress, CellStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import AppSettings, Pause, ScriptedSession, scripted_app, screen_text, wait_until

CODE = """\
import pandas as pd
sales = pd.read_csv("sales.csv", parse_dates=["date"])
monthly = sales.resample("ME", on="date")["amount"].sum()
print(monthly.tail(3))"""


def shown(widget) -> bool:
    return all(node.display for node in widget.ancestors_with_self if node is not widget.screen and node is not widget.app)


def mid_turn_script(pause: Pause) -> list:
    recall = {"query": "sales report format"}
    scratch = {"action": "exec", "name": "main", "code": CODE, "one_line_description": "monthly sales totals"}
    return [
        TurnStarted(1, "How are sales trending?"),
        ToolCallStarted("r1", "recall", recall),
        ToolCallFinished("r1", "recall", recall, "2 earlier conversations mention the sales report", True, 0.3),
        AssistantTextDelta("I'll load **sales.csv** and "),
        AssistantTextDelta("sum the amounts per month."),
        AssistantMessageDone("I'll load **sales.csv** and sum the amounts per month."),
        MemoryWritten(
            (Engram("Sales data lives in sales.csv with a date column", kind="lesson", scope="project"),),
            (),
            "memorize",
        ),
        UsageUpdated(1_200, 180, 3_456, 789),
        ToolCallStarted("s1", "scratchpad", scratch),
        ScratchpadActivity(CellStarted("main", 1, "monthly sales totals", CODE)),
        ScratchpadActivity(CellOutput("main", 1, "stdout", "date\n2025-04-30    10250.0\n2025-05-31    11890.5\n")),
        ScratchpadActivity(CellProgress("main", 1, "resampling 12,000 rows")),
        ScratchpadActivity(CellHeartbeat("main", 1, 2.0)),
        pause,
    ]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_main_screen_mid_turn(snap_compare, size: tuple[int, int], tmp_path: Path) -> None:
    pause = Pause()
    settings = AppSettings(
        home=tmp_path / "home",
        project_dir=Path("/srv/projects/sales-analysis"),
        planning_provider="anthropic",
        planning_model="claude-sonnet",
    )
    app = scripted_app(settings, ScriptedSession(mid_turn_script(pause)), cursor_blink=False, version="0.0.0")

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))  # the screenshot starts before the screen
        await pilot.press(*"How are sales trending?", "enter")
        await wait_until(pilot, pause.reached.is_set)
        scratchpad = app.screen.scratchpad  # below 100 columns it waits behind F4
        await wait_until(pilot, lambda: not shown(scratchpad) or "11890.5" in screen_text(app))
        await wait_until(pilot, lambda: "month." in screen_text(app))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize(
    ("size", "keys"),
    [((80, 24), ()), ((80, 24), ("f4",)), ((80, 24), ("f4", "f4")), ((120, 40), ())],
    ids=["80x24-chat", "80x24-scratchpad", "80x24-inspector", "120x40"],
)
def test_panes_at_each_size(snap_compare, size: tuple[int, int], keys: tuple[str, ...], tmp_path: Path) -> None:
    """Below 100 columns one pane fills the body and the pane bar names the others; wide, all three show."""
    pause = Pause()
    settings = AppSettings(
        home=tmp_path / "home",
        project_dir=Path("/srv/projects/sales-analysis"),
        planning_provider="anthropic",
        planning_model="claude-sonnet",
    )
    app = scripted_app(settings, ScriptedSession(mid_turn_script(pause)), cursor_blink=False, version="0.0.0",
                       inspector=True)  # fmt: skip

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        await pilot.press(*"How are sales trending?", "enter")
        await wait_until(pilot, pause.reached.is_set)
        await wait_until(pilot, lambda: "month." in screen_text(app))
        await pilot.press(*keys)
        inspector = app.screen.query_one("#inspector")
        await wait_until(pilot, lambda: not shown(inspector) or "No rules yet" in screen_text(app))
        await wait_until(pilot, lambda: not shown(app.screen.scratchpad) or "11890.5" in screen_text(app))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
