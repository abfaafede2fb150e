"""The Runtime, headless: one set of memory stores for the session and the UI, the start from the raw settings, and
the operations the screens call (each leaves the files as a user would expect, and nothing half-done)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from anton_tui.memory.skills.store import Skill
from anton_tui.runtime import Runtime, RuntimeStarter
from anton_tui.runtime.skill_edits import SkillRenameError
from anton_tui.settings_sources import FirstFrame, SettingsError, read_env_layers


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-ant-test-not-used")
    return RuntimeStarter(read_env_layers()).build()


async def test_the_session_and_the_app_share_one_set_of_memory_stores(started: Runtime) -> None:
    runtime = started
    try:
        cortex = runtime.session.cortex
        assert cortex.global_hc is runtime.stores.global_hc and cortex.project_hc is runtime.stores.project_hc
        assert runtime.session.skills is runtime.stores.skills
        assert runtime.session.episodic is runtime.stores.episodic
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


async def test_skill_operations_write_rename_and_delete_through_the_runtime(started: Runtime) -> None:
    runtime = started
    root = runtime.stores.skills.root
    try:
        created = await runtime.create_skill("Sum a CSV", "When totals of a CSV column are asked for")
        assert (root / created.label / "SKILL.md").read_text().split("---\n")[-1].startswith("1. ")
        saved = await runtime.save_skill_part(created.label, "procedure", "SKILL.md", "1. Load\n2. Sum\n")
        assert (root / saved.label / "SKILL.md").read_text().endswith("---\n1. Load\n2. Sum\n")
        with pytest.raises(ValueError, match="procedure cannot be empty"):
            await runtime.save_skill_part(created.label, "procedure", "SKILL.md", "  \n")
        assert (root / saved.label / "SKILL.md").read_text().endswith("---\n1. Load\n2. Sum\n"), "nothing written"

        renamed = await runtime.rename_skill(created.label, "csv-totals")
        assert renamed.warning is None and not (root / created.label).exists()
        assert (await runtime.load_skill("csv-totals")).declarative_md == "1. Load\n2. Sum\n"
        await runtime.save_skill(Skill(label="other", name="Other", when_to_use="x", declarative_md="1. x\n"))
        with pytest.raises(SkillRenameError, match="already exists"):
            await runtime.rename_skill("csv-totals", "other")
        assert (root / "csv-totals").is_dir(), "a refused rename moves nothing"

        listing = await runtime.list_skills()
        assert [skill.label for skill in listing.skills if not skill.read_only] == ["csv-totals", "other"]
        assert {skill.source for skill in listing.skills if skill.read_only} == {"builtin"}
        assert await runtime.delete_skill("csv-totals") and not (root / "csv-totals").exists()
    finally:
        await runtime.close()


async def test_entry_edits_go_through_the_shared_store(started: Runtime, anton_home: Path) -> None:
    runtime = started
    try:
        runtime.stores.global_hc.encode_rule("Use UTC timestamps", "always", "high", "user")
        [(scope, rule)] = await runtime.entries("rules")
        assert scope == "global"
        assert await runtime.update_entry("global", "rules", rule.id, "Use UTC timestamps everywhere")
        assert "Use UTC timestamps everywhere" in (anton_home / "memory" / "rules.md").read_text()
        assert not await runtime.update_entry("global", "rules", rule.id, "again"), "that entry is gone now"
        [(_, edited)] = await runtime.entries("rules")
        assert await runtime.delete_entry("global", "rules", edited.id)
        assert await runtime.entries("rules") == []
    finally:
        await runtime.close()
