"""A long list in the inspector makes its table rows only as they come near the view, yet every entry can be
reached: by moving down, by jumping to the end, and through the filter."""

from __future__ import annotations

from textual.widgets import TabbedContent

from anton_tui.tui.textual_internals import FixedColumnsTable

from .inspector_fixtures import InspectorHost, seeded_stores, settle, type_text, wait_until

SIZE = (120, 40)
COUNT = 3_000


def write_many_lessons(stores) -> None:
    lines = ["# Lessons\n"] + [f"- lesson number {n:04d} about topic {n % 7} <!-- ts:2026-01-01 -->\n" for n in range(COUNT)]
    (stores.paths.global_memory / "lessons.md").write_text("".join(lines))


async def open_lessons(pilot, app) -> object:
    app.pane.query_one(TabbedContent).active = "inspector-lessons"
    await settle(pilot)
    tab = app.pane.tab("lessons")
    await wait_until(pilot, lambda: tab.loaded)
    tab.table.focus()
    await pilot.pause()
    return tab


async def test_a_long_list_makes_only_the_rows_near_the_view_and_reaches_every_entry(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    write_many_lessons(stores)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        tab = await open_lessons(pilot, app)
        table: FixedColumnsTable = tab.table
        total = len(tab._snapshot.rows)
        assert total > COUNT
        assert table.total_rows == total
        assert table.row_count <= 2 * FixedColumnsTable.PAGE_ROWS, "rows far below the view are not made"

        made = table.row_count
        while table.cursor_row < made + 40:  # moving down past what was made first, a page at a time
            await pilot.press("pagedown")
        await pilot.press("down")
        await pilot.pause()
        assert table.row_count > table.cursor_row + 40, "rows ahead of the cursor are made as it goes"
        assert tab.selected_row().engram.text == tab._snapshot.rows[table.cursor_row].engram.text

        await pilot.press("ctrl+end")
        await pilot.pause()
        assert table.row_count == total and table.cursor_row == total - 1
        assert tab.selected_row() is not None and tab.selected_row().engram.text == tab._snapshot.rows[-1].engram.text


async def test_the_filter_finds_an_entry_far_down_a_long_list(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    write_many_lessons(stores)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        tab = await open_lessons(pilot, app)
        tab.action_filter()
        await type_text(pilot, "number 2987")
        await pilot.pause()
        assert tab.table.total_rows == 1 and tab.selected_row().engram.text.startswith("lesson number 2987")
