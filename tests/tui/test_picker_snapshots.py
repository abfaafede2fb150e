"""Snapshots of the `@` file picker open above the prompt, at 120×40 and 80×24.

The workspace is a fixed set of files under the test's home folder (so the header shows `~/sales-analysis`), the
cursor does not blink and the version is pinned. Update with `--snapshot-update` and look at the SVGs first.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from anton_tui.tui.widgets.file_picker import FilePicker
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import AppSettings, ScriptedSession, scripted_app, wait_until

FILES = ("README.md", "sales.csv", "report/monthly.py", "report/summary.md", "scripts/load_sales.py",
         "scripts/clean.py", "build/sales_cache.parquet")  # fmt: skip


def sales_workspace() -> Path:
    root = Path(os.environ["HOME"]) / "sales-analysis"
    for path in FILES:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_file_picker(snap_compare, size: tuple[int, int], tmp_path: Path) -> None:
    settings = AppSettings(home=tmp_path / "home", project_dir=sales_workspace(), planning_model="claude-sonnet")
    app = scripted_app(settings, ScriptedSession([]), cursor_blink=False, version="0.0.0")

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        await pilot.press(*"Compare ", "@", *"sales")
        picker = app.screen.query_one(FilePicker)
        await wait_until(pilot, lambda: picker.display and picker.mention == "sales" and picker.option_count == 2)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
