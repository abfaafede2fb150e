"""Snapshots of `/skill list` at 120×40 and 80×24: every label is shown whole, since it is what `/skill show`,
`/skill edit` and `/skill remove` take. Update with `--snapshot-update` and look at the SVGs before committing."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.tui.widgets.prompt import Prompt

from .app_support import AppSettings, ScriptedSession, scripted_app, screen_text, wait_until

SKILLS = [
    Skill(label="csv-totals-by-month-and-region", name="CSV totals by month and region",
          when_to_use="the user wants revenue totals per month or region from a sales CSV export",
          declarative_md="1. Read the CSV\n2. Group by month and region"),
    Skill(label="coingecko-price-history", name="CoinGecko price history",
          when_to_use="daily prices of a coin over a period, paced under the API's rate limit",
          declarative_md="1. Page through /market_chart\n2. Sleep between pages"),
]  # fmt: skip


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_skill_list_shows_every_label_whole(snap_compare, size: tuple[int, int], tmp_path: Path) -> None:
    settings = AppSettings(home=tmp_path / "home", project_dir=Path("/srv/projects/sales-analysis"))
    store = SkillStore(settings.home / "skills")
    for skill in SKILLS:
        store.save(skill)
    app = scripted_app(settings, ScriptedSession([[]]), cursor_blink=False, version="0.0.0")

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        app.focused.load_text("/skill list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "python-helper-in-scratchpad" in screen_text(app))
        text = screen_text(app)
        for skill in SKILLS:
            assert skill.label in text, f"{skill.label} is cut in:\n{text}"
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
