"""Copilot mode's confirmation dialog: the engine's future gets exactly the memories the user kept."""

from __future__ import annotations

import asyncio
import difflib

import pytest
from textual import work
from textual.app import App
from textual.widgets import SelectionList

from anton_tui.agent.events import MemoryConfirmationNeeded
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.review.proposal import HeldChange
from anton_tui.tui.screens.confirm_memory import ConfirmMemoryScreen, answer_confirmation

ENGRAMS = (
    Engram("Call progress() before long API calls in scratchpad", "always", "global", "medium", None, "consolidation"),
    Engram("CoinGecko rate-limits at 50 req/min", "lesson", "project", "low", "api-coingecko", "llm"),
    Engram("Never print [secret] tokens", "never", "project", "medium", None, "user"),
)
SIZE = (120, 40)


class ConfirmHost(App[None]):
    cursor_blink = False

    def __init__(self, event: MemoryConfirmationNeeded) -> None:
        super().__init__()
        self.event = event
        self.answer: list[Engram] | None = None

    def on_mount(self) -> None:
        self.ask()

    @work
    async def ask(self) -> None:
        self.answer = await answer_confirmation(self, self.event)


def make_event() -> MemoryConfirmationNeeded:
    return MemoryConfirmationNeeded(engrams=ENGRAMS, future=asyncio.get_running_loop().create_future())


async def run_keys(*keys: str) -> tuple[list[Engram], list[Engram] | None]:
    event = make_event()
    app = ConfirmHost(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ConfirmMemoryScreen)
        await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmMemoryScreen)
    return await asyncio.wait_for(event.future, 1), app.answer


async def test_enter_saves_only_the_checked_memories() -> None:
    result, answer = await run_keys("down", "space", "enter")
    assert result == [ENGRAMS[0], ENGRAMS[2]]
    assert answer == result


async def test_s_saves_the_checked_ones_too() -> None:
    result, _ = await run_keys("space", "down", "space", "s")
    assert result == [ENGRAMS[2]]


async def test_a_saves_all_even_unchecked_ones() -> None:
    result, _ = await run_keys("space", "a")
    assert result == list(ENGRAMS)


@pytest.mark.parametrize("key", ["d", "escape"])
async def test_discard_resolves_with_nothing(key: str) -> None:
    result, _ = await run_keys(key)
    assert result == []


async def test_buttons_answer_like_the_keys() -> None:
    event = make_event()
    app = ConfirmHost(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("space")
        await pilot.click("#save-checked")
        await app.workers.wait_for_complete()
    assert event.future.result() == [ENGRAMS[1], ENGRAMS[2]]


async def test_kinds_and_details_are_shown_literally() -> None:
    event = make_event()
    app = ConfirmHost(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        listing = app.screen.query_one(SelectionList)
        prompts = [listing.get_option_at_index(i).prompt.plain for i in range(listing.option_count)]
        await pilot.press("down", "down")
        detail = str(app.screen.query_one("#confirm-memory-detail").render())
        await pilot.press("d")
    assert detail == "[never] project · confidence medium · from user\nNever print [secret] tokens"
    assert prompts[0].startswith("[always] Call progress()")
    assert "global" in prompts[0] and "confidence medium" in prompts[0] and "from consolidation" in prompts[0]
    assert prompts[1].startswith("[lesson] CoinGecko") and "topic api-coingecko" in prompts[1]
    assert prompts[2].startswith("[never] Never print [secret] tokens")


async def test_future_is_cancelled_with_nothing_decided_when_the_app_closes_first() -> None:
    event = make_event()
    app = ConfirmHost(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ConfirmMemoryScreen)
    assert event.future.cancelled()  # nothing saved, nothing decided: what the trust gate held keeps waiting


class SnapshotHost(App[None]):
    cursor_blink = False

    def on_mount(self) -> None:
        self.push_screen(ConfirmMemoryScreen(ENGRAMS))


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["wide", "small"])
def test_confirm_memory_snapshot(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(SnapshotHost(), terminal_size=size, press=["down", "space"])


# --------------------------------------------------------------------------- changes the review holds for a person

SKILL_BEFORE = """\
---
name: csv-summary
description: Summarise a CSV file. user asks to summarise a csv
metadata:
  display_name: CSV Summary
  provenance: manual
---
1. Load the file with pandas.
2. Print df.describe().
"""
SKILL_AFTER = SKILL_BEFORE.replace("2. Print df.describe().\n", "2. Read it with sep=';' when it has one column.\n"
                                   "3. Print df.describe() and the row count.\n")  # fmt: skip


def held_skill_change() -> HeldChange:
    """The change as the review pipeline shows it: a reflection's new procedure for an existing skill."""
    diff = "".join(
        difflib.unified_diff(
            SKILL_BEFORE.splitlines(keepends=True),
            SKILL_AFTER.splitlines(keepends=True),
            fromfile="csv-summary/SKILL.md",
            tofile="csv-summary/SKILL.md (proposed)",
        )
    )
    return HeldChange("3fa9c2e1d0", "skill", "skill csv-summary", "csv-summary: exports use semicolons",
                      "held for a person: ANTON_REVIEW_LEVEL is human", diff.rstrip("\n"),
                      "reflection weekly/2026-W47.md")  # fmt: skip


async def test_a_held_skill_change_shows_its_diff_and_is_kept_when_checked() -> None:
    change = held_skill_change()
    event = MemoryConfirmationNeeded(engrams=ENGRAMS[:1], future=asyncio.get_running_loop().create_future(),
                                     changes=(change,))  # fmt: skip
    app = ConfirmHost(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert (
            str(app.screen.query_one("#confirm-memory-title").render())
            == "Save this memory and apply this held change?"
        )
        await pilot.press("down")
        detail = str(app.screen.query_one("#confirm-memory-detail").render())
        await pilot.press("space", "enter")
        await app.workers.wait_for_complete()
    assert "[skill] skill csv-summary · from reflection weekly/2026-W47.md" in detail
    assert "held for a person: ANTON_REVIEW_LEVEL is human" in detail
    assert "-2. Print df.describe()." in detail and "+3. Print df.describe() and the row count." in detail
    assert event.future.result() == [ENGRAMS[0], change], "the memory (checked at first) and the change just checked"


async def test_a_held_change_left_unchecked_is_not_kept() -> None:
    event = MemoryConfirmationNeeded(engrams=(), future=asyncio.get_running_loop().create_future(),
                                     changes=(held_skill_change(),))  # fmt: skip
    app = ConfirmHost(event)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
    assert event.future.result() == []


class HeldSkillHost(App[None]):
    cursor_blink = False

    def on_mount(self) -> None:
        self.push_screen(ConfirmMemoryScreen(ENGRAMS[1:2], (("learned after outside content",),),
                                             (held_skill_change(),)))  # fmt: skip


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["wide", "small"])
def test_held_skill_change_snapshot(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(HeldSkillHost(), terminal_size=size, press=["down"])
