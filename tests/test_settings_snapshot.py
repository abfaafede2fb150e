"""Start-up snapshots: kept per exact set of settings inputs, so that any change to a variable or a .env file is
validated again before the app draws anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anton_tui.config import load_settings
from anton_tui.settings_snapshot import (
    SNAPSHOTS_KEPT,
    SettingsSnapshot,
    recall_snapshot,
    remember_snapshot,
    snapshot_file,
)
from anton_tui.settings_sources import read_env_layers


def write_env(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def remember_current() -> SettingsSnapshot:
    snapshot = SettingsSnapshot.of(load_settings())
    remember_snapshot(read_env_layers(), snapshot)
    return snapshot


def test_the_same_inputs_recall_the_snapshot_of_the_validated_settings(anton_home: Path, project_dir: Path) -> None:
    write_env(project_dir / ".anton" / ".env", "ANTON_PLANNING_MODEL=claude-opus-4-1\nANTON_MEMORY_ENABLED=false\n")
    write_env(anton_home / ".env", 'ANTON_THEME=anton-light\nANTON_KEYMAP={"app.quit": "ctrl+x"}\n')
    assert recall_snapshot(read_env_layers()) is None, "nothing was validated yet"

    remember_current()
    snapshot = recall_snapshot(read_env_layers())
    assert snapshot == SettingsSnapshot(
        home=anton_home,
        project_dir=project_dir,
        theme="anton-light",
        planning_provider="anthropic",
        planning_model="claude-opus-4-1",
        effective_memory_mode="off",
        episodic_memory=True,
        keymap={"app.quit": "ctrl+x"},
    )


@pytest.mark.parametrize(
    "change",
    ["project file", "global file", "environment", "SDK's own key variable"],
)
def test_any_change_to_the_inputs_misses(
    change: str, anton_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(project_dir / ".anton" / ".env", "ANTON_PLANNING_MODEL=claude-opus-4-1\n")
    remember_current()
    if change == "project file":
        write_env(project_dir / ".anton" / ".env", "ANTON_PLANNING_MODEL=claude-opus-4-2\n")
    elif change == "global file":
        write_env(anton_home / ".env", "ANTON_MAX_TOKENS=0\n")  # invalid: it must be validated before the UI
    elif change == "environment":
        monkeypatch.setenv("ANTON_ACC_MODE", "active")
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-another")
    assert recall_snapshot(read_env_layers()) is None


def test_variables_settings_do_not_read_leave_the_snapshot_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    remember_current()
    monkeypatch.setenv("SHLVL", "7")
    monkeypatch.setenv("OLDPWD", "/somewhere/else")
    assert recall_snapshot(read_env_layers()) is not None


def test_the_file_holds_no_secret_and_keeps_the_most_recent_snapshots(
    anton_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTON_ANTHROPIC_API_KEY", "sk-ant-very-secret-value")
    for n in range(SNAPSHOTS_KEPT + 3):
        monkeypatch.setenv("ANTON_MAX_TOOL_ROUNDS", str(n + 1))
        remember_current()
    stored = json.loads(snapshot_file(anton_home).read_text(encoding="utf-8"))
    assert len(stored) == SNAPSHOTS_KEPT
    assert "very-secret" not in snapshot_file(anton_home).read_text(encoding="utf-8")
    assert recall_snapshot(read_env_layers()) is not None, "the latest is kept"
    monkeypatch.setenv("ANTON_MAX_TOOL_ROUNDS", "1")
    assert recall_snapshot(read_env_layers()) is None, "the oldest were dropped"


def test_an_unreadable_snapshot_file_is_a_miss_and_is_replaced(anton_home: Path) -> None:
    write_env(snapshot_file(anton_home), "{not json")
    assert recall_snapshot(read_env_layers()) is None
    remember_current()
    assert recall_snapshot(read_env_layers()) is not None


def test_a_home_that_cannot_be_written_only_loses_the_snapshot(anton_home: Path) -> None:
    write_env(anton_home / "cache", "a file where the cache folder would go")
    remember_current()  # no error
    assert recall_snapshot(read_env_layers()) is None
