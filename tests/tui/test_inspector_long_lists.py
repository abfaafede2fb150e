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


async def test_a_long_list_follows_a_change_on_disk_and_keeps_the_cursor_on_its_lesson(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    path = stores.paths.global_memory / "lessons.md"
    lines = ["# Lessons\n"] + [f"- lesson number {n:04d} <!-- topic:t{n % 7} ts:2026-01-01 -->\n" for n in range(COUNT)]
    lines[2500:2500] = ["- the same words twice <!-- ts:2026-01-02 -->\n"] * 2  # lines 2500 and 2501: one text, twice
    path.write_text("".join(lines))
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        tab = await open_lessons(pilot, app)
        table: FixedColumnsTable = tab.table
        first = tab.table.total_rows
        start = next(n for n, row in enumerate(tab._snapshot.rows) if row.engram.text == "the same words twice")
        table.ensure_rows(start + 1)
        table.move_cursor(row=start + 1, animate=False)  # the second of the two repeated lessons
        await pilot.pause()
        picked = tab.selected_row()
        assert picked.engram.text == "the same words twice" and picked.key.endswith("#2")

        new = ["- written by another program first <!-- ts:2026-03-01 -->\n",
               "- written by another program second <!-- ts:2026-03-01 -->\n"]  # fmt: skip
        path.write_text("".join(lines[:1] + new + lines[1:]))  # two lessons above the cursor
        tab.refresh_data()
        await wait_until(pilot, lambda: tab.table.total_rows == first + 2)
        await pilot.pause()
        assert table.cursor_row == start + 3, "the cursor stays on the lesson it was on"
        assert tab.selected_row() == picked
        assert [tab._snapshot.rows[n].engram.text for n in range(start, start + 6)] == [
            "lesson number 2497", "lesson number 2498", "the same words twice", "the same words twice",
            "lesson number 2499", "lesson number 2500",
        ]  # fmt: skip
        assert str(table.get_row_at(table.cursor_row)[2]) == "the same words twice"
        assert tab._snapshot.rows[0].engram.text == "written by another program first"

        tab.action_filter()
        await type_text(pilot, "t3")  # the topic of every seventh lesson
        await pilot.pause()
        assert tab.table.total_rows == len([n for n in range(COUNT) if n % 7 == 3])
        assert tab.selected_row().engram.topic == "t3"
