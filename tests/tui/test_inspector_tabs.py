"""The inspector's tabs against real memory files: what they show, edit, delete, filter, sort and search."""

from __future__ import annotations

import threading
from datetime import datetime

from textual.widgets import Input, Static, TabbedContent

from anton_tui.agent.events import AccEventObserved, AccNudge, MemoryWritten
from anton_tui.memory.learners.acc import Event, Lesson
from anton_tui.memory.engrams.engram import entry_id
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.edit_entry import EditEntryScreen
from anton_tui.tui.widgets.inspector.base import ProblemBanner
from anton_tui.tui.widgets.inspector.skills_tab import COLUMNS as SKILL_COLUMNS

from .inspector_fixtures import (
    GLOBAL_RULES,
    PROJECT_LESSONS,
    InspectorHost,
    column,
    seeded_stores,
    settle,
    table_rows,
    type_text,
    wait_until,
)

SIZE = (120, 40)


def label_of(app: InspectorHost, tab_id: str) -> str:
    return app.pane.query_one(TabbedContent).get_tab(f"inspector-{tab_id}").label.plain


def detail_text(tab) -> str:
    return str(tab.query_one(".detail", Static).render())


async def test_memory_tabs_show_the_files_on_disk(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rules = table_rows(app.pane.tab("rules").table)
        assert rules == [
            ["global", "always", "Use httpx instead of requests", "0", "", "", "high", "user", "2026-11-22"],
            ["global", "always", "Keep scratchpad cells small and print progress", "0", "", "", "medium", "llm",
             "2026-11-20"],
            ["global", "never", "Never print credentials", "0", "", "", "high", "user", "2026-11-21"],
            ["project", "when", "If paginated API → use async + progress()", "0", "", "", "medium", "consolidation",
             "2026-11-22"],
        ]
        lessons = table_rows(app.pane.tab("lessons").table)
        assert lessons[0] == ["global", "", "pandas read_csv needs encoding='utf-8-sig' for BOM files", "2026-11-18"]
        assert lessons[1] == ["project", "api-coingecko", "CoinGecko rate-limits at 50/min", "2026-11-22"]
        assert len(lessons) == 4
        assert column(app.pane.tab("profile").table, 1) == ["Name: Jorge", "Timezone: PST", "Works mostly in Python"]
        skills = table_rows(app.pane.tab("skills").table)
        assert [row[0] for row in skills] == ["btc-chart", "csv_summary", "web_scrape"]
        assert skills[2] == ["web_scrape", "Web scraping", "7", "4/3", "2/1", "0/0", "yours", "2026-11-21 08:00"]
        assert skills[0][1] == "Btc Chart" and skills[0][5] == "1/1"
        assert label_of(app, "rules") == "Rules 4"
        assert label_of(app, "lessons") == "Lessons 4"
        assert not any(banner.display for banner in app.query(ProblemBanner))


async def test_skills_never_recommended_show_zero_counters_from_one_shared_tuple(tmp_path):
    stores = seeded_stores(tmp_path, episodes=False)
    for label in ("never-a", "never-b"):
        folder = stores.paths.skills / label
        folder.mkdir()
        (folder / "SKILL.md").write_text(f"---\nname: {label}\ndescription: Does {label}\n---\n1. Do it\n")
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tab = app.pane.tab("skills")
        shown = {row[0]: row for row in table_rows(tab.table)}
        assert shown["never-a"][2:6] == shown["never-b"][2:6] == ["0", "0/0", "0/0", "0/0"]
        assert shown["web_scrape"][3:6] == ["4/3", "2/1", "0/0"]
        rows = {row.label: row for row in tab._snapshot.rows}
        assert rows["never-a"].stages is rows["never-b"].stages, "10,000 unused skills need not hold 40,000 tuples"


async def test_markup_like_text_is_shown_verbatim(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    stores.project_hc.encode_lesson("Use [bold]x[/bold] and [red] literally", topic="markup")
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Use [bold]x[/bold] and [red] literally" in column(app.pane.tab("lessons").table, 2)


async def test_malformed_files_are_reported_and_left_byte_identical(tmp_path):
    stores = seeded_stores(tmp_path, skills=True, episodes=False)
    lessons_path = stores.project_hc.lessons_path
    rules_path = stores.global_hc.rules_path
    lessons_bytes = PROJECT_LESSONS.encode() + b"this line is not a lesson\n- \n"
    rules_bytes = b"- orphan rule before any heading\n" + GLOBAL_RULES.encode()
    lessons_path.write_bytes(lessons_bytes)
    rules_path.write_bytes(rules_bytes)
    broken_skill = stores.paths.skills / "half_saved"
    broken_skill.mkdir()
    (broken_skill / "meta.json").write_text("{not json")
    (broken_skill / "declarative.md").write_text("steps")

    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lessons_banner = str(app.pane.tab("lessons").query_one(ProblemBanner).render())
        assert "project lessons.md line 5: not a lesson entry (kept as it is)" in lessons_banner
        assert "this line is not a lesson" in lessons_banner
        assert "line 6: empty lesson" in lessons_banner
        rules_banner = str(app.pane.tab("rules").query_one(ProblemBanner).render())
        assert "global rules.md line 1: rule under no ## heading" in rules_banner
        skills_banner = str(app.pane.tab("skills").query_one(ProblemBanner).render())
        assert "skill half_saved: meta.json: invalid JSON" in skills_banner
        assert app.pane.tab("lessons").query_one(ProblemBanner).display
        assert label_of(app, "lessons") == "Lessons 4 ⚠"
        # The readable entries are still listed.
        assert "CoinGecko rate-limits at 50/min" in column(app.pane.tab("lessons").table, 2)
        app.pane.refresh_data()
        await settle(pilot)
    assert lessons_path.read_bytes() == lessons_bytes
    assert rules_path.read_bytes() == rules_bytes
    assert (broken_skill / "meta.json").read_text() == "{not json"


async def test_edit_and_delete_a_rule_with_keys_and_dialogs(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    rules_path = stores.global_hc.rules_path
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("rules")
        await pilot.press("down")  # the second rule
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditEntryScreen)
        assert app.screen.text == "Keep scratchpad cells small and print progress"
        await pilot.press("f7")  # select all
        await type_text(pilot, "cells under 5k")
        await pilot.press("enter")
        await settle(pilot)
        text = rules_path.read_text()
        assert "- cells under 5k <!-- confidence:medium source:llm ts:" in text
        assert "Keep scratchpad cells small" not in text
        assert "- Use httpx instead of requests <!-- confidence:high source:user ts:2026-11-22 -->\n" in text
        table = app.pane.tab("rules").table
        assert table.cursor_row == 1, "the cursor stays on the edited rule"
        assert table_rows(table)[1][2] == "cells under 5k"

        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # changed my mind
        await settle(pilot)
        assert "cells under 5k" in rules_path.read_text()

        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert "cells under 5k" not in rules_path.read_text()
        assert len(table_rows(app.pane.tab("rules").table)) == 3
        assert ("information", "", "Global rule deleted.") in app.notes


async def test_edit_a_lesson_and_delete_a_profile_fact(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("lessons")
        await pilot.press("down")
        await pilot.press("enter")  # Enter on a row edits it too
        await pilot.pause()
        assert isinstance(app.screen, EditEntryScreen)
        await pilot.press("end")
        await type_text(pilot, " or 30 free")
        await pilot.press("ctrl+s")
        await settle(pilot)
        lessons = stores.project_hc.lessons_path.read_text()
        assert "- CoinGecko rate-limits at 50/min or 30 free <!-- topic:api-coingecko ts:" in lessons

        app.pane.show_tab("profile")
        await pilot.press("down", "delete")
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await settle(pilot)
        assert stores.global_hc.profile_path.read_text() == "# Profile\n- Name: Jorge\n- Works mostly in Python\n"
        assert column(app.pane.tab("profile").table, 1) == ["Name: Jorge", "Works mostly in Python"]


async def test_cancelled_edit_changes_nothing(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    before = stores.global_hc.rules_path.read_bytes()
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("rules")
        await pilot.press("e")
        await pilot.pause()
        await type_text(pilot, " extra")
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, EditEntryScreen)
    assert stores.global_hc.rules_path.read_bytes() == before


async def test_edit_refused_for_undecodable_file_is_shown_and_loses_nothing(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    path = stores.project_hc.lessons_path
    data = PROJECT_LESSONS.encode() + b"- caf\xe9 au lait costs 3 euros <!-- ts:2026-11-22 -->\n"
    path.write_bytes(data)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tab = app.pane.tab("lessons")
        assert "not valid UTF-8" in str(tab.query_one(ProblemBanner).render())
        app.pane.show_tab("lessons")
        await pilot.press("down", "e")
        await pilot.pause()
        await type_text(pilot, " x")
        await pilot.press("enter")
        await settle(pilot)
        errors = [note for note in app.notes if note[0] == "error"]
        assert errors and errors[0][1] == "The lesson was not updated"
        assert "nothing was written" in errors[0][2]
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert [note[1] for note in app.notes if note[0] == "error"][-1] == "The lesson was not deleted"
    assert path.read_bytes() == data


async def test_lessons_filter_narrows_as_you_type(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path, skills=False, episodes=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("lessons")
        table = app.pane.tab("lessons").table
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await type_text(pilot, "COIN")
        assert column(table, 2) == ["CoinGecko rate-limits at 50/min"]
        await pilot.press("ctrl+u")
        await type_text(pilot, "scr")  # matches the topic and the text of one lesson
        assert column(table, 2) == ["scratchpad cells should call progress()"]
        await pilot.press("ctrl+u")
        await type_text(pilot, "DATA")  # topic only
        assert column(table, 2) == ["The sales CSV uses semicolons as separators"]
        await type_text(pilot, "zzz")
        assert table.row_count == 0
        assert "No lesson matches" in detail_text(app.pane.tab("lessons"))
        await pilot.press("ctrl+u")
        assert table.row_count == 4
        await pilot.press("escape")
        assert app.focused is table


async def test_skills_sort_by_keys_and_header_clicks(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path, episodes=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("skills")
        await pilot.pause()
        tab = app.pane.tab("skills")
        assert column(tab.table, 0) == ["btc-chart", "csv_summary", "web_scrape"]
        await pilot.press("s")  # by name
        assert column(tab.table, 1) == ["Btc Chart", "CSV Summary", "Web scraping"]
        await pilot.press("s")  # by recalls
        assert column(tab.table, 2) == ["1", "3", "7"]
        await pilot.press("S")
        assert column(tab.table, 2) == ["7", "3", "1"]
        assert tab.table.ordered_columns[2].label.plain == "Recalls ▼"

        # Clicking the "Last used" header sorts by it; clicking it again reverses.
        widths = [c.get_render_width(tab.table) for c in tab.table.ordered_columns]
        x = sum(widths[: len(SKILL_COLUMNS) - 1]) + 2
        await pilot.click(tab.table, offset=(x, 0))
        await pilot.pause()
        assert tab.sort_column == "last_used" and not tab.sort_reverse
        assert column(tab.table, 0) == ["btc-chart", "web_scrape", "csv_summary"]
        await pilot.click(tab.table, offset=(x, 0))
        await pilot.pause()
        assert column(tab.table, 0) == ["csv_summary", "web_scrape", "btc-chart"]
        assert tab.table.ordered_columns[-1].label.plain == "Last used ▼"

        # The order and the selected skill survive a reload.
        tab.table.move_cursor(row=1)
        tab.refresh_data()
        await settle(pilot)
        assert column(tab.table, 0) == ["csv_summary", "web_scrape", "btc-chart"]
        assert tab.table.cursor_row == 1


async def test_acc_feed_shows_events_and_fired_lessons_newest_last(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path, skills=False, episodes=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("acc")
        feed = app.pane.acc_feed
        assert "No ACC events yet" in detail_text(feed)
        failure = Event("scratchpad_result", severity=3, detail={"name": "main", "success": False}, round_idx=2)
        feed.add(AccEventObserved(failure), at=datetime(2026, 11, 22, 4, 25, 12))
        rule = "Always keep one scratchpad name for the whole task."
        app.pane.apply_event(AccNudge(Lesson(rule, "always", "detect_name_switch", 2), nudged=True))
        app.pane.apply_event(AccNudge(Lesson("When stuck, ask.", "when", "detect_repair_churn", 1), nudged=False))
        await pilot.pause()
        rows = table_rows(feed.table)
        assert rows[0] == ["04:25:12", "event", "scratchpad_result", "", "3", "round 2 · name=main · failed"]
        assert rows[1][1:5] == ["nudge", "detect_name_switch", "always", "2"]
        assert rows[2][1:5] == ["lesson", "detect_repair_churn", "when", "1"]
        assert feed.table.cursor_row == 2, "the feed follows the newest line"
        assert "When stuck, ask." in detail_text(feed)
        assert label_of(app, "acc") == "ACC 3"
        await pilot.press("up")
        assert rule in detail_text(feed)
        await pilot.press("c")
        assert feed.table.row_count == 0


async def test_acc_feed_names_every_detector_behind_one_lesson(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path, skills=False, episodes=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("acc")
        feed = app.pane.acc_feed
        lesson = Lesson("When the same error repeats, stop and find its cause.", "when",
                        "detect_repeated_error_signature", 5, also=("detect_repeated_tool_error",))
        app.pane.apply_event(AccNudge(lesson, nudged=False))
        await pilot.pause()
        [row] = table_rows(feed.table)
        assert row[1:3] == ["lesson", "detect_repeated_error_signature + detect_repeated_tool_error"]
        detail = detail_text(feed)
        assert "detect_repeated_error_signature and detect_repeated_tool_error fired" in detail


async def test_episodes_search_runs_in_a_thread_and_shows_full_text(tmp_path):
    stores = seeded_stores(tmp_path, skills=False)
    threads: list[str] = []
    real_recall = stores.episodic.recall

    def recording_recall(query, **kwargs):
        threads.append(threading.current_thread().name)
        return real_recall(query, **kwargs)

    object.__setattr__(stores.episodic, "recall", recording_recall)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.pane.show_tab("episodes")
        tab = app.pane.tab("episodes")
        await pilot.press("slash")
        await type_text(pilot, "bitcoin")
        await pilot.press("enter")
        await settle(pilot)
        assert threads and threads[0] != threading.main_thread().name
        rows = table_rows(tab.table)
        assert ["2026-11-22 04:25:12", "user", "Fetch bitcoin prices for last week"] in rows
        assert ["2026-11-22 04:25:13", "assistant", "Bitcoin closed at 91,200 USD on Friday."] in rows
        assert "matching “bitcoin”" in str(tab.query_one(".status", Static).render())
        index = column(tab.table, 1).index("assistant")
        tab.table.move_cursor(row=index)
        await pilot.pause()
        shown = str(tab.query_one(".episode-text", Static).render())
        assert "The week's low was on Monday." in shown and "session 20261122_042512 · turn 1" in shown

        await pilot.press("slash")
        await pilot.press("ctrl+u")
        await type_text(pilot, "zebra")
        await pilot.press("enter")
        await settle(pilot)
        assert tab.table.row_count == 0
        assert "No episodes found matching “zebra”" in str(tab.query_one(".status", Static).render())


async def test_cursor_stays_on_the_same_entry_when_the_file_changes(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tab = app.pane.tab("rules")
        tab.table.move_cursor(row=2)  # "Never print credentials"
        await pilot.pause()
        stores.global_hc.encode_rule("Always pin package versions", "always", source="user")
        tab.refresh_data()
        await settle(pilot)
        assert tab.table.row_count == 5
        assert tab.selected_row().engram.id == entry_id("Never print credentials")
        assert tab.table.cursor_row == 3


async def test_memory_written_event_reloads_the_memory_tabs(tmp_path):
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        stores.project_hc.encode_lesson("Retry 429 responses after the Retry-After delay", topic="http")
        stores.global_hc.rewrite_identity(["Prefers short answers"])
        engram = stores.project_hc.get_lessons()[-1]
        app.pane.apply_event(MemoryWritten((engram,), ("added",), "memorize"))
        await wait_until(pilot, lambda: "Retry 429 responses after the Retry-After delay"
                         in column(app.pane.tab("lessons").table, 2))  # fmt: skip
        await wait_until(pilot, lambda: "Prefers short answers" in column(app.pane.tab("profile").table, 1))


async def test_key_bindings_can_be_remapped_by_id(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path, skills=False, episodes=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.set_keymap({"inspector.edit": "x", "inspector.delete": "ctrl+k"})
        app.pane.show_tab("rules")
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, EditEntryScreen)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, EditEntryScreen)
        await pilot.press("escape", "ctrl+k")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")


async def test_every_tab_has_help_and_described_bindings(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path, skills=False, episodes=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for tab_id in ("rules", "lessons", "profile", "skills", "acc", "episodes"):
            tab = app.pane.tab(tab_id)
            assert tab.HELP and tab.HELP.startswith("## ")
            app.pane.show_tab(tab_id)
            await pilot.pause()
            offered = [active.binding for active in app.active_bindings.values() if active.node is tab]
            assert offered, tab_id
            for binding in offered:
                assert binding.id and binding.id.startswith("inspector.") and binding.description, binding


async def test_narrow_pane_hides_the_least_useful_columns_first(tmp_path):
    app = InspectorHost(seeded_stores(tmp_path))
    async with app.run_test(size=(50, 24)) as pilot:
        await settle(pilot)
        headers = {}
        for tab_id in ("rules", "lessons", "skills"):
            app.pane.show_tab(tab_id)
            await settle(pilot)
            headers[tab_id] = [c.label.plain for c in app.pane.tab(tab_id).table.ordered_columns]
        assert headers["rules"] == ["Scope", "Kind", "Rule", "Date"]
        assert headers["lessons"] == ["Scope", "Topic", "Lesson"]
        assert headers["skills"] == ["Label ▲", "Recalls", "Stage 1"]
        assert table_rows(app.pane.tab("skills").table)[2] == ["web_scrape", "7", "4/3"]
        await pilot.press("s")  # sorting by a hidden column still works
        assert app.pane.tab("skills").sort_column == "name"
        assert column(app.pane.tab("skills").table, 0) == ["btc-chart", "csv_summary", "web_scrape"]
