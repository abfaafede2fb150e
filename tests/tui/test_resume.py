"""Conversations that last across a restart: `--continue` and `--resume ID` start straight into a saved
conversation, `/resume` picks one from a list (type to filter, Ctrl+D deletes), `/rewind` goes back to before one of
your messages; a conversation Anton saved resumes here with every message."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from textual.app import App

from anton_tui.agent.history_store import SavedSession
from anton_tui.runtime import RuntimeStarter
from anton_tui.settings_sources import read_env_layers
from anton_tui.tui.app import AntonApp
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.resume import ResumeScreen, RewindScreen

from tests.fakellm import Reply
from tests.session_helpers import quiet_coder
from tests.tui.app_support import KeptNotificationsApp
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    answers,
    build_app,
    main_screen,
    home_dir,
    notices,
    notifications,
    project_dir,
    prompt_text,
    save_global_env,
    send_and_wait,
    started,
    type_in_prompt,
    user_messages,
    wait_for,
    wait_turn_done,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "anton_histories"


def resuming_app(resume: str) -> AntonApp:
    return KeptNotificationsApp(RuntimeStarter(read_env_layers(), resume=resume), cursor_blink=False)


async def two_turns(fake_llm) -> str:
    """Run a conversation of two turns in a first app and quit it; returns its session id."""
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "What is the capital of France?")
        await send_and_wait(pilot, "How many people live there?")
        session_id = app.runtime.session.session_id
    return session_id


def saved(session_id: str) -> list:
    return json.loads((project_dir() / ".anton" / "episodes" / f"{session_id}_history.json").read_text())


async def test_continue_starts_in_the_newest_conversation_and_goes_on_saving_to_it(fake_llm) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    session_id = await two_turns(fake_llm)
    fake_llm.queue(Reply.text("Lyon."), model=PLANNER)
    app = resuming_app("")
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
        assert user_messages(app) == ["What is the capital of France?", "How many people live there?"]
        assert answers(app) == ["Paris.", "About 2.1 million."]
        await send_and_wait(pilot, "And the second city?")
        assert app.runtime.session.session_id == session_id
        request = fake_llm.requests_for(PLANNER)[-1]
        assert [m["content"] for m in request.messages if m["role"] == "user"][0] == "What is the capital of France?"
    assert len(saved(session_id)) == 6, "the resumed conversation went on in the same file"


async def test_a_turn_cancelled_before_any_answer_resumes_as_cancelled_not_as_an_answer(fake_llm) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Too late.", delay=30), Reply.text("Paris."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "Write me a long essay.")
        await wait_for(pilot, lambda: len(fake_llm.requests_for(PLANNER)) == 1, what="the request to go out")
        await pilot.press("escape")
        await wait_turn_done(pilot, timeout=5)
        await send_and_wait(pilot, "What is the capital of France?")
        live = (notices(app, "cancelled"), answers(app))
    app = resuming_app("")
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
        assert user_messages(app) == ["Write me a long essay.", "What is the capital of France?"]
        assert (notices(app, "cancelled"), answers(app)) == live == (["Turn cancelled."], ["Paris."])


async def test_resume_an_id_that_anton_saved_shows_every_message(fake_llm) -> None:
    save_global_env(fake_llm)
    episodes = project_dir() / ".anton" / "episodes"
    episodes.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "20261125_085200_history.json", episodes)
    app = resuming_app("20261125_085200")
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
        assert user_messages(app)[0].endswith("sum 2+2 and read config.toml")
        assert "scratchpads (files, main) ended" in " ".join(notices(app)) or "ended with the app" in " ".join(notices(app))
        assert len(app.runtime.session.history) == len(json.loads((FIXTURES / "20261125_085200_history.json").read_text()))


async def test_a_resumed_conversation_is_in_the_chat_before_the_engine_is_built(fake_llm) -> None:
    import threading

    class SlowStart(RuntimeStarter):
        """Holds the build back until the test lets it go, as a slow machine would."""

        gate = threading.Event()

        def build(self):
            self.gate.wait(20)
            return super().build()

    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    session_id = await two_turns(fake_llm)
    app = KeptNotificationsApp(SlowStart(read_env_layers(), resume=session_id), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(user_messages(app)) == 2, what="the conversation before the engine")
        assert app.runtime is None
        assert any(f"Resuming conversation {session_id}" in text for text in notices(app))
        assert answers(app) == ["Paris.", "About 2.1 million."]
        SlowStart.gate.set()
        await started(pilot)
        await wait_for(pilot, lambda: any("Resumed conversation" in text for text in notices(app)), what="resumed")
        assert user_messages(app) == ["What is the capital of France?", "How many people live there?"]
        assert not any("Resuming" in text for text in notices(app)), "the heading now says it is resumed"


async def test_a_conversation_shown_early_leaves_the_chat_when_setup_must_come_first(fake_llm) -> None:
    from anton_tui.tui.screens.setup import SetupScreen

    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    session_id = await two_turns(fake_llm)
    home_dir().joinpath(".env").write_text("", encoding="utf-8")  # no API key any more: setup opens first
    app = resuming_app(session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen), what="the setup screen")
        await wait_for(pilot, lambda: not user_messages(app), what="the chat emptied")
        assert not any("Resum" in text for text in notices(app)), "nothing claims a conversation goes on"


async def test_the_inspector_comes_after_the_resumed_conversation_and_also_when_the_resume_fails(fake_llm) -> None:
    from anton_tui.tui.widgets.inspector import InspectorPane

    save_global_env(fake_llm)
    episodes = project_dir() / ".anton" / "episodes"
    episodes.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "20261125_085200_history.json", episodes)
    for session_id, shown in (("20261125_085200", "Resumed conversation"), ("20200101_000000", "20200101_000000")):
        app = resuming_app(session_id)
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            await wait_for(pilot, lambda: any(shown in text for text in notices(app) + notifications(app)), what=shown)
            await wait_for(pilot, lambda: bool(app.screen.query(InspectorPane)), what="the inspector")


async def test_a_broken_saved_conversation_says_why_at_start_and_nothing_opens_empty(fake_llm) -> None:
    save_global_env(fake_llm)
    episodes = project_dir() / ".anton" / "episodes"
    episodes.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "20261125_085200_history.json", episodes)  # an older one that reads well
    (episodes / "20261126_090000_history.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)  # valid, too deep
    for resume in ("20261126_090000", ""):  # --resume ID, then --continue (the newest is the broken one)
        app = resuming_app(resume)
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            said = "20261126_090000_history.json cannot be read (it is nested more than"
            await wait_for(pilot, lambda: any(said in text for text in notifications(app)), what=said)
            assert not user_messages(app) and not any("Resumed conversation" in t for t in notices(app))
            listed = await app.runtime.list_conversations()
            assert [row.source for row in listed] == ["broken", "history"]


async def test_the_resume_list_filters_resumes_and_deletes_after_asking(fake_llm) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    first = await two_turns(fake_llm)
    episodes = project_dir() / ".anton" / "episodes"
    shutil.copy(FIXTURES / "20261125_085000_history.json", episodes)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the list of conversations")
        assert app.screen.query_one("DataTable").row_count == 2
        await pilot.press(*"france")
        await wait_for(pilot, lambda: app.screen.query_one("DataTable").row_count == 1, what="the filtered list")
        await pilot.press("enter")
        await wait_for(pilot, lambda: user_messages(app)[:1] == ["What is the capital of France?"], what="resumed")
        assert app.runtime.session.session_id == first

        await type_in_prompt(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the list again")
        await pilot.press(*"2026-11-25 08:50")
        await wait_for(pilot, lambda: app.screen.query_one("DataTable").row_count == 1, what="Anton's one")
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the list after deleting")
        assert app.screen.query_one("DataTable").row_count == 1
        await pilot.press("escape")
    assert not (episodes / "20261125_085000_history.json").exists()


async def test_rewind_goes_back_to_before_a_message_and_puts_it_in_the_prompt(fake_llm) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Paris."), Reply.text("About 2.1 million."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await send_and_wait(pilot, "What is the capital of France?")
        await send_and_wait(pilot, "How many people live there?")
        await type_in_prompt(pilot, "/rewind")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen), what="the list of messages")
        await pilot.press("enter")  # the newest message is highlighted first
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "memory they wrote stays" in str(app.screen.question)
        await pilot.press("y")
        await wait_for(pilot, lambda: prompt_text(app) == "How many people live there?", what="the prompt refilled")
        assert user_messages(app) == ["What is the capital of France?"]
        session_id = app.runtime.session.session_id
        assert len(app.runtime.session.history) == 2
    assert [m["role"] for m in saved(session_id)] == ["user", "assistant"], "the saved file followed"


def fixed_sessions() -> list[SavedSession]:
    """Saved conversations in tree order: a titled one with two forks (one forked again), and a broken one."""

    def at(day: int, hour: int) -> datetime:
        return datetime(2026, 11, day, hour, 5, tzinfo=timezone.utc)

    def row(id_: str, when: datetime, turns: int, preview: str, model: str | None, **notes) -> SavedSession:
        return SavedSession(id_, when, when.strftime("%Y-%m-%d %H:%M"), turns, preview, model, "history", None,
                            **notes)  # fmt: skip

    return [
        row("20261125_090500", at(25, 9), 12, "Summarise monthly revenue by region from the sales file",
            "claude-sonnet", title="Monthly revenue by region"),
        row("20261126_101500", at(26, 10), 9, "Summarise monthly revenue by region from the sales file",
            "claude-sonnet", parent="20261125_090500", forked_at=7),
        row("20261126_113000", at(26, 11), 8, "Summarise monthly revenue by region from the sales file",
            "claude-sonnet", parent="20261126_101500", forked_at=6, title="Revenue in euros"),
        row("20261125_160000", at(25, 16), 4, "Summarise monthly revenue by region from the sales file",
            "claude-sonnet", parent="20261125_090500", forked_at=3),
        row("20261124_160500", at(24, 16), 3, "Why does the nightly export fail on Mondays?", "claude-sonnet"),
        row("20261120_080500", at(20, 8), 41, "Plot the churn cohorts and explain the dip in week 6", None),
        SavedSession("20261119_100500", at(19, 10), "2026-11-19 10:05", 0, "", None, "broken", "not valid JSON"),
    ]  # fmt: skip


class PickerHost(App[None]):
    def on_mount(self) -> None:
        self.push_screen(ResumeScreen(fixed_sessions(), current="20261125_090500", cursor_blink=False))


def test_the_resume_list_shows_each_fork_under_its_parent() -> None:
    from anton_tui.tui.screens.resume import depths

    assert list(depths(fixed_sessions()).values()) == [0, 1, 2, 1, 0, 0, 0]


def test_resume_list_snapshot(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()

    assert snap_compare(PickerHost(), terminal_size=(120, 40), run_before=run_before)


def test_resume_list_snapshot_small(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await pilot.press(*"churn")
        await pilot.pause()

    assert snap_compare(PickerHost(), terminal_size=(80, 24), run_before=run_before)


def test_resume_tree_snapshot_small(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()

    assert snap_compare(PickerHost(), terminal_size=(80, 24), run_before=run_before)
