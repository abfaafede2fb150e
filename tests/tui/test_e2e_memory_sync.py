"""Shared memory in the app: /memory remote add and /memory sync over a bare repository another machine pushed to,
the header showing the last sync, and a merge that waits for a choice resolved in the History tab."""

from __future__ import annotations

from pathlib import Path

from dulwich.repo import Repo
from textual.widgets import TabbedContent

from anton_tui.memory.sync import syncer as sync
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths

from tests.tui.e2e_support import (
    SIZE,
    build_app,
    command_replies,
    header_field,
    home_dir,
    main_screen,
    save_global_env,
    started,
    type_in_prompt,
    wait_for,
)
from tests.tui.inspector_fixtures import InspectorHost, column, settle, wait_until


def other_machine(tmp_path: Path, bare: Path, lessons: str) -> MemoryStores:
    home, project = tmp_path / "server" / "home", tmp_path / "server" / "project"
    (home / "memory").mkdir(parents=True)
    project.mkdir(parents=True)
    (home / "memory" / "lessons.md").write_text(lessons)
    stores = MemoryStores.from_paths(AntonPaths(home, project))
    sync.add_remote(stores, "global", str(bare))
    return stores


def bare_repo(tmp_path: Path) -> Path:
    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    return bare


async def test_memory_sync_in_the_app_brings_in_the_other_machine_and_the_header_says_so(fake_llm, tmp_path) -> None:
    save_global_env(fake_llm)
    bare = bare_repo(tmp_path)
    server = other_machine(tmp_path, bare, "- the nightly job runs at 02:00 <!-- ts:2026-11-20 -->\n")
    assert sync.sync(server, "global").pushed
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        header = main_screen(app).query_one("#sync")
        assert not header.display, "no sync line before memory is shared"
        await type_in_prompt(pilot, f"/memory remote add global {bare}")
        await wait_for(pilot, lambda: len(command_replies(app)) == 1, what="the remote reply")
        assert "shared through" in command_replies(app)[0][1]
        await type_in_prompt(pilot, "/memory sync")
        await wait_for(pilot, lambda: len(command_replies(app)) == 2, timeout=20, what="the sync reply")
        assert "took in the remote's changes" in command_replies(app)[1][1]
        await wait_for(pilot, lambda: header.display, what="the header's sync line")
        assert "synced" in header_field(app, "sync")
    assert "nightly job" in (home_dir() / "memory" / "lessons.md").read_text()


async def test_a_merge_waiting_for_a_choice_is_resolved_in_the_history_tab(tmp_path) -> None:
    bare = bare_repo(tmp_path)
    server = other_machine(tmp_path, bare, "# Lessons\n- shared <!-- ts:2026-11-01 -->\n")
    assert sync.sync(server, "global").pushed
    home, project = tmp_path / "laptop" / "home", tmp_path / "laptop" / "project"
    project.mkdir(parents=True)
    stores = MemoryStores.from_paths(AntonPaths(home, project))
    sync.add_remote(stores, "global", str(bare))
    assert sync.sync(stores, "global").ok
    server.global_hc.lessons_path.write_text("# Lessons of the server\n- shared <!-- ts:2026-11-01 -->\n")
    stores.global_hc.lessons_path.write_text("# Lessons of the laptop\n- shared <!-- ts:2026-11-01 -->\n")
    assert sync.sync(server, "global").pushed
    assert sync.sync(stores, "global").status == "conflicts"
    app = InspectorHost(stores)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.pane.query_one(TabbedContent).active = "inspector-history"
        tab = app.pane.tab("history")
        await wait_until(pilot, lambda: bool(tab.waiting) and tab.table.row_count > 0)
        assert column(tab.table, 2)[0] == "to resolve"
        assert "lessons.md" in column(tab.table, 3)[0]
        assert "laptop" in stores.global_hc.lessons_path.read_text(), "nothing written while it waits"
        tab.table.focus()
        await pilot.press("t")
        await wait_until(pilot, lambda: not tab.waiting and column(tab.table, 2)[0] == "sync", timeout=10)
    assert stores.global_hc.lessons_path.read_text().startswith("# Lessons of the server")
    assert not sync.pending(stores, "global")


async def test_managed_rules_are_listed_first_marked_read_only_and_cannot_be_edited(tmp_path) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    rules = "# Rules\n\n## Always\n- Ask before deleting customer data <!-- ts:2026-11-01 -->\n"
    (managed / "rules.md").write_text(rules)
    home, project = tmp_path / "laptop" / "home", tmp_path / "laptop" / "project"
    project.mkdir(parents=True)
    stores = MemoryStores.from_paths(AntonPaths(home, project), managed_dir=managed)
    stores.global_hc.encode_rule("use uv", "always")
    app = InspectorHost(stores)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.pane.query_one(TabbedContent).active = "inspector-rules"
        tab = app.pane.tab("rules")
        await wait_until(pilot, lambda: tab.table.row_count == 2)
        assert column(tab.table, 0) == ["managed", "global"]
        tab.table.focus()
        tab.table.move_cursor(row=0)
        await pilot.pause()
        assert "read-only" in str(tab.query_one(".detail").render())
        await pilot.press("e")
        await pilot.press("d")
        await wait_until(pilot, lambda: sum("read-only" in note[2] for note in app.notes) == 2)
        assert len(app.screen_stack) == 1, "no editor or question opened"
    assert (managed / "rules.md").read_text() == rules


async def test_sharing_in_the_app_names_the_files_and_can_leave_the_profile_out(fake_llm, tmp_path) -> None:
    save_global_env(fake_llm)
    bare = bare_repo(tmp_path)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, f"/memory remote add global {bare} --without-profile")
        await wait_for(pilot, lambda: len(command_replies(app)) == 1, what="the remote reply")
        reply = " ".join(command_replies(app)[0][1].split())
        assert f"shared through {bare}: rules.md, lessons.md." in reply and "profile.md" not in reply
        await type_in_prompt(pilot, "/memory remote")
        await wait_for(pilot, lambda: len(command_replies(app)) == 2, what="the list")
        assert f"{bare} (rules.md, lessons.md)" in " ".join(command_replies(app)[1][1].split())
