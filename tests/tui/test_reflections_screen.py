"""The Reflections screen: the chain, a reflection's text and its proposals with what the review made of each;
applying a held proposal writes it, undo puts the file back as it was, rejecting a held one records it. Snapshots at
120×40 and 80×24."""

from __future__ import annotations

from datetime import date

import pytest
from textual.app import App

from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.reflections import ReflectionsScreen
from tests.review_support import project
from tests.test_reflection import drafts, seed_week

from .app_support import KeepsNotifications
from .inspector_fixtures import runtime_over, settle, table_rows

SIZES = {"wide": (120, 40), "small": (80, 24)}
THURSDAY_RULE = {"kind": "rule", "form": "always", "text": "Check invoice totals against the PDF",
                 "why": "Thursday's page said so", "scope": "project"}  # fmt: skip
MONDAY_LESSON = {"kind": "lesson", "text": "Invoices export with sep=';'", "why": "Monday's three questions"}


async def reflected(home, folder, fake_llm) -> AntonPaths:
    """A week reflected with the scripted model: Monday's lesson applied, Thursday's rule held (a tainted day)."""
    p = project(home, folder, llm=fake_llm.llm_client(), review_level="none")
    seed_week(p.paths.episodes)
    drafts(fake_llm, {"2026-11-16": [MONDAY_LESSON], "2026-11-19": [THURSDAY_RULE]})
    await p.parts.reflector.run(today=date(2026, 11, 23))
    p.stores.recorder.flush()
    return p.paths


class ReflectionsHost(KeepsNotifications, App[None]):
    cursor_blink = False

    def __init__(self, paths: AntonPaths) -> None:
        super().__init__()
        self.runtime = runtime_over(MemoryStores.from_paths(paths))

    def on_mount(self) -> None:
        self.push_screen(ReflectionsScreen(self.runtime))


async def open_thursday(pilot) -> ReflectionsScreen:
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ReflectionsScreen)
    row = screen.keys.index("daily:2026-11-19")
    screen.chain_table.move_cursor(row=row)
    await settle(pilot)
    return screen


async def test_the_chain_a_reflection_and_its_proposals(anton_home, project_dir, fake_llm):
    paths = await reflected(anton_home, project_dir, fake_llm)
    app = ReflectionsHost(paths)
    async with app.run_test(size=SIZES["wide"]) as pilot:
        screen = await open_thursday(pilot)
        chain = table_rows(screen.chain_table)
        assert chain[0][0] == "2026-11-22" and chain[-1][0] == "2026-W47"
        assert chain[3] == ["2026-11-19", "1 held", "⚠ Invoices 2026-11-19"]
        assert chain[4] == ["2026-11-18", "", "(quiet)"]
        assert "1 proposal waits for you" in str(screen.query_one(".status").render())
        [proposal] = table_rows(screen.proposal_table)
        assert proposal[0] == "held" and "Check invoice totals against the PDF" in proposal[-1]
        text = str(screen.query_one(".reflection-text").render())
        assert "HELD · rule · project rules.md" in text and "untrusted input" in text
        assert "# Daily reflection: 2026-11-19 — Invoices 2026-11-19" in text and "Notes of 2026-11-19." in text
        assert "conversations 1 · user messages 3 · answers 3" in text and "## Untrusted input" in text


async def test_apply_then_undo_a_held_proposal_from_the_screen(anton_home, project_dir, fake_llm):
    paths = await reflected(anton_home, project_dir, fake_llm)
    rules = paths.project_memory / "rules.md"
    before = rules.read_bytes() if rules.exists() else None
    app = ReflectionsHost(paths)
    async with app.run_test(size=SIZES["wide"]) as pilot:
        screen = await open_thursday(pilot)
        screen.proposal_table.focus()
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert (app.screen.question, app.screen.confirm_label) == ("Apply this rule to project rules.md?", "Apply")
        await pilot.press("y")
        await settle(pilot)
        assert "Check invoice totals against the PDF" in rules.read_text()
        assert table_rows(screen.proposal_table)[0][0] == "applied"
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert (app.screen.question, app.screen.confirm_label) == ("Undo this rule in project rules.md?", "Undo")
        await pilot.press("y")
        await settle(pilot)
        assert table_rows(screen.proposal_table)[0][0] == "undone"
        await pilot.press("a", "n")  # an undone proposal can be applied again; saying no changes nothing
        await settle(pilot)
        assert table_rows(screen.proposal_table)[0][0] == "undone"
        assert (rules.read_bytes() if rules.exists() else None) == before
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ReflectionsScreen)
    reflection = (paths.reflections / "daily" / "2026-11-19.md").read_text()
    assert "status: undone" in reflection, "the reflection's front matter follows the decisions"


async def test_rejecting_a_held_proposal_and_what_cannot_be_done(anton_home, project_dir, fake_llm):
    paths = await reflected(anton_home, project_dir, fake_llm)
    app = ReflectionsHost(paths)
    async with app.run_test(size=SIZES["wide"]) as pilot:
        screen = await open_thursday(pilot)
        await pilot.press("u")  # a held proposal was never applied: nothing to undo
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.notified == ["Select an applied proposal to undo it."]
        await pilot.press("x")
        await settle(pilot)
        assert table_rows(screen.proposal_table)[0][0] == "rejected"
        await pilot.press("x")  # decided already: rejected at once, without a question, or not at all
        await settle(pilot)
        assert app.notified[-1] == "Only a proposal waiting for you can be rejected (undo an applied one)."
        assert "proposals wait" not in str(screen.query_one(".status").render())
    assert "rejected by you" in (paths.reflections / "daily" / "2026-11-19.md").read_text()


@pytest.mark.parametrize("size", SIZES)
def test_reflections_screen_snapshot(snap_compare, anton_home, project_dir, fake_llm, size):
    import asyncio

    paths = asyncio.run(reflected(anton_home, project_dir, fake_llm))

    async def run_before(pilot) -> None:
        await open_thursday(pilot)

    assert snap_compare(ReflectionsHost(paths), terminal_size=SIZES[size], run_before=run_before)
