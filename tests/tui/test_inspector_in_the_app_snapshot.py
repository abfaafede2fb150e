"""The inspector in the whole app, at 120×40 and at 80×24 after F3: the Rules tab lists its rows, each rule's text
gets most of the table's width, and the highlighted rule is shown whole below the table. Update with
`--snapshot-update` and look at the SVGs before committing."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.tui.widgets.prompt import Prompt

from .app_support import AppSettings, ScriptedSession, scripted_app, screen_text, wait_until

LONG_RULE = "Use httpx instead of requests for every HTTP call, with a 30 second timeout and retries on 429"
RULES = f"""\
# Rules

## Always
- {LONG_RULE} <!-- confidence:high source:user ts:2026-11-22 -->
- Keep scratchpad cells small and print progress in loops over many rows <!-- confidence:medium source:llm ts:2026-11-20 -->

## Never
- Never print credentials or API keys, even partly <!-- confidence:high source:user ts:2026-11-21 -->

## When
"""


@pytest.mark.parametrize(("size", "keys"), [((120, 40), ()), ((80, 24), ("f3",))], ids=["120x40", "80x24"])
def test_the_inspector_shows_its_rules_with_room_for_their_text(snap_compare, size: tuple[int, int],
                                                                keys: tuple[str, ...], tmp_path: Path) -> None:  # fmt: skip
    settings = AppSettings(home=tmp_path / "home", project_dir=Path("/srv/projects/sales-analysis"))
    (settings.home / "memory").mkdir(parents=True)
    (settings.home / "memory" / "rules.md").write_text(RULES)
    app = scripted_app(settings, ScriptedSession([[]]), cursor_blink=False, version="0.0.0", inspector=True)

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        await pilot.press(*keys)
        rules = app.screen.query_one("#inspector").tab("rules")
        await wait_until(pilot, lambda: rules.table.row_count == 3, timeout=10)
        await wait_until(pilot, lambda: "Use httpx instead of requests for" in screen_text(app))
        detail = rules.query_one(".detail")
        assert LONG_RULE in " ".join(str(detail.render()).split()), "the highlighted rule is shown whole below"
        assert detail.region.height >= 3 and detail.region.bottom <= size[1], "and its text is on the screen"
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
