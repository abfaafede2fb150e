"""The header's status line after a turn: tokens in and out, the estimated cost for a model with a known price (none
for others), and the context the last request used against the model's window; at 80 columns it still fits.

Snapshots: update with `pytest tests/tui/test_status_line.py --snapshot-update` and look at the SVGs first."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.agent.events import AssistantMessageDone, TurnFinished, TurnStarted, UsageUpdated
from anton_tui.llm.pricing import price_of
from anton_tui.tui.widgets.prompt import Prompt
from tests.fakellm import Reply
from tests.tui.e2e_support import build_app, header_field, main_screen, save_global_env, send_and_wait, started

from .app_support import AppSettings, ScriptedSession, scripted_app, screen_text, wait_until

KNOWN = "claude-sonnet-4-6"  # $3 in, $15 out per million tokens; a 200k window in the context table


def header_row(app) -> str:
    return screen_text(app).splitlines()[0]


def shown(app, part: str) -> bool:
    return main_screen(app).query_one(f"#header #{part}").display


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_after_a_turn_the_header_shows_tokens_cost_and_context(fake_llm, size: tuple[int, int]) -> None:
    save_global_env(fake_llm, ANTON_PLANNING_MODEL=KNOWN)
    fake_llm.queue(Reply.text("Twelve thousand tokens read.", usage=(12_345, 678)), model=KNOWN)
    app = build_app()
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        assert not shown(app, "cost") and not shown(app, "context"), "nothing to say before the first answer"
        await send_and_wait(pilot, "Read the big file.")
        await wait_until(pilot, lambda: "12.3k in · 678 out" in header_row(app))
        row = header_row(app)
        assert header_field(app, "cost") == "~$0.05"  # 12,345 × $3/M + 678 × $15/M = $0.047
        assert "~$0.05" in row
        assert ("ctx 12k/200k" if size[0] >= 100 else "ctx 6%") in row
        assert KNOWN in row and "ready" in row, "the model and the status always stay"


async def test_a_model_without_a_price_shows_no_cost(fake_llm) -> None:
    save_global_env(fake_llm)  # the model is called "planner": no price, the unknown-model window (32,768)
    fake_llm.queue(Reply.text("Hello.", usage=(2_000, 10)), model="planner")
    app = build_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send_and_wait(pilot, "Hi")
        await wait_until(pilot, lambda: "2.0k in · 10 out" in header_row(app))
        assert not shown(app, "cost") and header_field(app, "cost") == ""
        assert "$" not in header_row(app)
        assert "ctx 2k/33k" in header_row(app)


def test_prices_are_only_given_for_models_in_the_table() -> None:
    assert price_of("claude-haiku-4-5-20251001") == price_of("claude-haiku-4-5")  # a dated snapshot
    assert price_of("gpt-4o-2024-08-06") == price_of("gpt-4o")
    assert price_of("gpt-4o-mini") != price_of("gpt-4o")
    for unknown in ("gpt-5.3-codex", "claude-sonnet-4-6-fast", "llama3.1:8b", "", "planner"):
        assert price_of(unknown) is None, f"{unknown} would be priced by a guess"


def turn_with_usage(model_tokens: tuple[int, int]) -> list:
    answer = "Sales grew 4% in May; the full table is in the scratchpad."
    return [
        TurnStarted(1, "How did sales go?"),
        AssistantMessageDone(answer),
        UsageUpdated(model_tokens[0], model_tokens[1], model_tokens[0], model_tokens[1]),
        TurnFinished(1, "end_turn", answer),
    ]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_status_line_snapshot(snap_compare, size: tuple[int, int], tmp_path: Path) -> None:
    settings = AppSettings(home=tmp_path / "home", project_dir=Path("/srv/projects/sales-analysis"),
                           planning_provider="anthropic", planning_model=KNOWN)  # fmt: skip
    app = scripted_app(settings, ScriptedSession(turn_with_usage((48_200, 1_350))), cursor_blink=False,
                       version="0.0.0")  # fmt: skip

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        await pilot.press(*"How did sales go?", "enter")
        await wait_until(pilot, lambda: "48.2k in" in header_row(app) and "ready" in header_row(app))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_parts_left_out_at_80_columns_come_back_when_the_terminal_widens(tmp_path: Path) -> None:
    settings = AppSettings(home=tmp_path / "home", project_dir=Path("/srv/projects/sales-analysis"),
                           planning_provider="anthropic", planning_model=KNOWN)  # fmt: skip
    app = scripted_app(settings, ScriptedSession(turn_with_usage((48_200, 1_350))), cursor_blink=False,
                       version="0.0.0")  # fmt: skip
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        assert "memory autopilot" in header_row(app), "before the first answer there is room for it"
        await pilot.press(*"How did sales go?", "enter")
        await wait_until(pilot, lambda: "~$0.16" in header_row(app) and "ready" in header_row(app))
        assert "memory autopilot" not in header_row(app) and "ctx 24%" in header_row(app)
        await pilot.resize_terminal(130, 30)
        await wait_until(pilot, lambda: "memory autopilot" in header_row(app) and "ctx 48k/200k" in header_row(app))
        assert "anthropic/claude-sonnet-4-6" in header_row(app) and "~$0.16" in header_row(app)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "memory autopilot" not in header_row(app) and "ctx 24%" in header_row(app))


async def test_the_last_sync_takes_its_place_in_the_header_without_pushing_the_tokens_off(tmp_path: Path) -> None:
    settings = AppSettings(home=tmp_path / "home", project_dir=Path("/srv/projects/sales-analysis"),
                           planning_provider="anthropic", planning_model=KNOWN)  # fmt: skip
    app = scripted_app(settings, ScriptedSession([]), cursor_blink=False, version="0.0.0")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.focused, Prompt))
        main_screen(app).query_one("#header").set_sync("⇅ synced 13:53", True)
        await wait_until(pilot, lambda: "synced 13:53" in header_row(app))
        assert header_row(app).rstrip().endswith("0 in · 0 out"), header_row(app)
