"""The Runtime, headless: one set of memory stores for the session and the UI, the start from the raw settings, the
snapshots the screens read and the operations they call (each leaves the files as a user would expect, and nothing
half-done), and a read that never holds the event loop."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from anton_tui.memory.episodes.store import EpisodicMemory
from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths
from anton_tui.runtime import Runtime, RuntimeStarter, SkillRenameError
from anton_tui.runtime.protocols import ChatSessionLike
from anton_tui.settings_sources import FirstFrame, SettingsError, read_env_layers

from .runtime_sessions import QuietSession
from .tui.app_support import AppSettings


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-ant-test-not-used")
    return RuntimeStarter(read_env_layers()).build()


@pytest.fixture
def stores(anton_home: Path, project_dir: Path) -> MemoryStores:
    return MemoryStores.from_paths(AntonPaths(anton_home, project_dir), history=False)


@pytest.fixture
def quiet(stores: MemoryStores) -> Runtime:
    return Runtime(AppSettings(stores.paths.home, stores.paths.project_dir), QuietSession(), stores=stores)


async def test_the_session_and_the_app_share_one_set_of_memory_stores(started: Runtime) -> None:
    runtime = started
    try:
        session_id = runtime.session.episodic.session_id
        later = EpisodicMemory(runtime.paths.episodes)
        later.start_session("29991231_235959")  # a later conversation's log, from another window
        later.log_turn(1, "user", "from elsewhere")
        runtime.session.episodic.log_turn(1, "user", "what this conversation asked")
        turns = await runtime.memory.session_turns()
        assert turns.session == session_id, "the app reads the session's own episode log, not the newest one"
        assert [turn.question for turn in turns.turns] == ["what this conversation asked"]

        runtime.session.cortex.global_hc.encode_rule("Use UTC timestamps", "always", "high", "user")
        [tier, _project] = (await runtime.memory.entries("rules")).tiers
        assert [rule.text for rule in tier.entries] == ["Use UTC timestamps"]
        assert not runtime.needs_setup
    finally:
        await runtime.close()


def test_the_first_frame_is_read_from_the_raw_layers_without_validating(monkeypatch, project_dir: Path) -> None:
    (project_dir / ".anton").mkdir()
    (project_dir / ".anton" / ".env").write_text(
        'ANTON_THEME=nord\nANTON_PLANNING_MODEL=big-model\nANTON_MAX_TOKENS=0\nANTON_KEYMAP={"app.quit": "f10"}\n'
    )
    monkeypatch.setenv("ANTON_MEMORY_ENABLED", "false")
    frame = FirstFrame.from_layers(read_env_layers())
    assert (frame.theme, frame.planning_model, frame.effective_memory_mode) == ("nord", "big-model", "off")
    assert frame.keymap == {"app.quit": "f10"} and frame.home == Path(os.environ["ANTON_HOME"])
    with pytest.raises(SettingsError) as caught:  # the bad value is met when the runtime is built
        RuntimeStarter(read_env_layers()).build()
    assert caught.value.variable == "ANTON_MAX_TOKENS"


def test_settings_for_setup_leave_out_every_bad_value(monkeypatch, project_dir: Path) -> None:
    (project_dir / ".anton").mkdir()
    (project_dir / ".anton" / ".env").write_text("ANTON_MAX_TOKENS=0\n")
    monkeypatch.setenv("ANTON_MEMORY_MODE", "sometimes")
    monkeypatch.setenv("ANTON_THEME", "nord")
    settings, removals = RuntimeStarter(read_env_layers()).settings_for_setup()
    assert (settings.max_tokens, settings.memory_mode, settings.theme) == (8192, "autopilot", "nord")
    assert removals == {"ANTON_MAX_TOKENS": None}, "only the project file's bad value can be taken out by saving"


def test_a_scripted_session_offers_everything_the_runtime_asks_of_a_session() -> None:
    asked = {name for base in ChatSessionLike.__mro__ if base.__module__.startswith("anton_tui") for name in vars(base)}
    asked = {name for name in asked if not name.startswith("_")}
    assert {"turn", "ask_between_turns", "restore_held", "history_store", "learning", "llm"} <= asked
    assert sorted(name for name in asked if not hasattr(QuietSession(), name)) == []


async def test_skill_operations_write_rename_and_delete_through_the_runtime(started: Runtime) -> None:
    runtime = started
    root = runtime.paths.skills
    edits = runtime.skill_edits
    try:
        created = await edits.create("Sum a CSV", "When totals of a CSV column are asked for")
        assert (root / created.label / "SKILL.md").read_text().split("---\n")[-1].startswith("1. ")
        saved = await edits.save_part(created.label, "procedure", "SKILL.md", "1. Load\n2. Sum\n")
        assert (root / saved.label / "SKILL.md").read_text().endswith("---\n1. Load\n2. Sum\n")
        with pytest.raises(ValueError, match="procedure cannot be empty"):
            await edits.save_part(created.label, "procedure", "SKILL.md", "  \n")
        assert (root / saved.label / "SKILL.md").read_text().endswith("---\n1. Load\n2. Sum\n"), "nothing written"

        renamed = await edits.relabel(created.label, "csv-totals")
        assert renamed.warning is None and not (root / created.label).exists()
        assert (await runtime.skills.load("csv-totals")).declarative_md == "1. Load\n2. Sum\n"
        await edits.save(Skill(label="other", name="Other", when_to_use="x", declarative_md="1. x\n"))
        with pytest.raises(SkillRenameError, match="already exists"):
            await edits.relabel("csv-totals", "other")
        assert (root / "csv-totals").is_dir(), "a refused rename moves nothing"

        listing = await runtime.skills.listing()
        assert [skill.label for skill in listing.skills if not skill.read_only] == ["csv-totals", "other"]
        assert {skill.source for skill in listing.skills if skill.read_only} == {"builtin"}
        assert await edits.delete("csv-totals") and not (root / "csv-totals").exists()
    finally:
        await runtime.close()


async def test_entry_edits_go_through_the_shared_store(started: Runtime, anton_home: Path) -> None:
    runtime = started
    try:
        runtime.session.cortex.global_hc.encode_rule("Use UTC timestamps", "always", "high", "user")
        [rule] = (await runtime.memory.entries("rules")).tiers[0].entries
        assert await runtime.update_entry("global", "rules", rule.id, "Use UTC timestamps everywhere")
        assert "Use UTC timestamps everywhere" in (anton_home / "memory" / "rules.md").read_text()
        assert not await runtime.update_entry("global", "rules", rule.id, "again"), "that entry is gone now"
        [edited] = (await runtime.memory.entries("rules")).tiers[0].entries
        assert await runtime.delete_entry("global", "rules", edited.id)
        assert (await runtime.memory.entries("rules")).count == 0
    finally:
        await runtime.close()


async def test_entries_come_tier_by_tier_with_the_lines_their_own_file_could_not_read(
    quiet: Runtime, stores: MemoryStores
) -> None:
    stores.global_hc.encode_rule("Pin package versions", "always", source="user")
    stores.project_hc.encode_lesson("The API pages by 100 rows", topic="api")
    lessons = stores.project_hc.lessons_path
    lessons.write_bytes(lessons.read_bytes() + b"a line that is not an entry\n")
    before = lessons.read_bytes()

    rules = await quiet.memory.entries("rules")
    assert [(tier.scope, [e.text for e in tier.entries], tier.problems) for tier in rules.tiers] == [
        ("global", ["Pin package versions"], []),
        ("project", [], []),
    ]
    found = await quiet.memory.entries("lessons")
    [project] = [tier for tier in found.tiers if tier.scope == "project"]
    assert [e.text for e in project.entries] == ["The API pages by 100 rows"]
    assert [problem.path for problem in project.problems] == [lessons]
    assert lessons.read_bytes() == before, "a line that cannot be read is left as it is"


async def test_this_sessions_turns_and_deleting_one_from_the_episode_log(quiet: Runtime, stores: MemoryStores) -> None:
    episodic = stores.episodic
    episodic.start_session("20261120_080000")
    for turn, (question, answer) in enumerate([("first question", "first answer"), ("second", "")], start=1):
        episodic.log_turn(turn, "user", question)
        if answer:
            episodic.log_turn(turn, "assistant", answer)
    turns = await quiet.memory.session_turns()
    assert turns.session == "20261120_080000"
    assert [(t.turn, t.question, t.answer) for t in turns.turns] == [(1, "first question", "first answer"),
                                                                     (2, "second", "")]  # fmt: skip
    assert await quiet.delete_episode_turn("20261120_080000", 1) == 2
    assert [t.turn for t in (await quiet.memory.session_turns()).turns] == [2]
    assert "first question" not in episodic.session_path("20261120_080000").read_text()


async def test_a_typed_label_finds_the_skill_a_broken_one_or_the_closest(quiet: Runtime, stores: MemoryStores) -> None:
    SkillStore(stores.paths.skills).save(
        Skill(label="csv-summary", name="CSV summary", when_to_use="a CSV to sum up", declarative_md="1. Read\n")
    )
    (stores.paths.skills / "half_done").mkdir()
    (stores.paths.skills / "half_done" / "meta.json").write_text("{not json")

    exact = await quiet.skills.lookup("csv-summary")
    assert exact.exact and exact.skill is not None and exact.closest is None
    typo = await quiet.skills.lookup("csv-sumary")
    assert not typo.exact and typo.closest == "csv-summary" and typo.skill is not None
    broken = await quiet.skills.lookup("half_done")
    assert broken.exact and broken.skill is None and broken.problem is not None
    nothing = await quiet.skills.lookup("zzzz")
    assert nothing.skill is None and "csv-summary" in nothing.labels
    assert (await quiet.skills.lookup("../etc")).invalid
    assert "csv-summary" in await quiet.skills.labels()


async def test_a_slow_memory_file_never_holds_the_event_loop(
    quiet: Runtime, stores: MemoryStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anton_tui.memory.engrams.hippocampus import Hippocampus

    release = threading.Event()
    read = Hippocampus.get_rules

    def slow_read(hc: Hippocampus) -> list:
        assert release.wait(10), "never released"
        return read(hc)

    monkeypatch.setattr(Hippocampus, "get_rules", slow_read)
    reading = asyncio.create_task(quiet.memory.entries("rules"))
    started = asyncio.get_running_loop().time()
    for _ in range(5):  # the loop keeps running while the read waits on the disk
        await asyncio.sleep(0.01)
    assert asyncio.get_running_loop().time() - started < 5 and not reading.done()
    release.set()
    assert (await asyncio.wait_for(reading, 10)).count == 0
