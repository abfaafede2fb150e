"""Settings loading, .env precedence and reporting, and the project .env writer; the workspace layout."""

from __future__ import annotations

import datetime
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from anton_tui.config import Settings, SettingsError, load_settings, read_env_file, write_project_env
from anton_tui.paths import AntonPaths
from anton_tui.settings_sources import SETTING_KINDS, FirstFrame, env_names, read_env_layers


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _environ(home: Path, project: Path, **extra: str) -> dict[str, str]:
    return {"ANTON_HOME": str(home), "ANTON_PROJECT_DIR": str(project), **extra}


def test_defaults_without_any_file(anton_home: Path, project_dir: Path) -> None:
    settings = load_settings()
    assert settings.home == anton_home
    assert settings.project_dir == project_dir
    assert (settings.memory_mode, settings.effective_memory_mode, settings.acc_mode) == ("autopilot",) * 2 + ("passive",)
    assert settings.planning_model == "claude-sonnet-4-6"
    assert settings.coding_model == "claude-haiku-4-5-20251001"
    assert settings.max_tokens == 8192 and settings.max_tool_rounds == 25
    assert settings.theme == "anton-dark" and settings.keymap == {}
    assert settings.env_warnings == []
    assert not settings.has_api_key("planning")


def test_environment_beats_project_file_beats_global_file(anton_home: Path, project_dir: Path) -> None:
    _write(anton_home / ".env", "ANTON_MEMORY_MODE=off\nANTON_THEME=from-global\nANTON_PLANNING_MODEL=global-model\n")
    _write(project_dir / ".anton" / ".env", "ANTON_MEMORY_MODE=copilot\nANTON_THEME=from-project\n")
    environ = _environ(anton_home, project_dir, ANTON_THEME="from-env")

    settings = load_settings(environ=environ)

    assert settings.theme == "from-env"
    assert settings.memory_mode == "copilot"
    assert settings.planning_model == "global-model"
    assert settings.source_of("theme") == "the environment"
    assert settings.source_of("memory_mode") == str(project_dir / ".anton" / ".env")
    assert settings.source_of("planning_model") == str(anton_home / ".env")
    assert settings.source_of("max_tokens") == "default"


def test_project_file_can_move_home_but_global_file_cannot(tmp_path: Path, project_dir: Path) -> None:
    other_home = tmp_path / "other-home"
    _write(other_home / ".env", "ANTON_THEME=other\nANTON_HOME=/nowhere\n")
    _write(project_dir / ".anton" / ".env", f"ANTON_HOME={other_home}\n")

    settings = load_settings(environ={"ANTON_PROJECT_DIR": str(project_dir)})

    assert settings.home == other_home
    assert settings.theme == "other"


def test_sdk_key_names_are_accepted_and_anton_names_win(anton_home: Path, project_dir: Path) -> None:
    settings = load_settings(environ=_environ(anton_home, project_dir, ANTHROPIC_API_KEY="sk-ant-plain"))
    assert settings.anthropic_api_key.get_secret_value() == "sk-ant-plain"
    assert settings.has_api_key("planning")

    both = _environ(anton_home, project_dir, ANTHROPIC_API_KEY="sk-plain", ANTON_ANTHROPIC_API_KEY="sk-anton")
    assert load_settings(environ=both).anthropic_api_key.get_secret_value() == "sk-anton"

    _write(project_dir / ".anton" / ".env", "OPENAI_API_KEY=sk-openai-from-file\n")
    settings = load_settings(environ=_environ(anton_home, project_dir, ANTON_CODING_PROVIDER="openai"))
    assert settings.openai_api_key.get_secret_value() == "sk-openai-from-file"
    assert settings.has_api_key("coding")
    assert "sk-openai-from-file" not in repr(settings)


def test_openai_compatible_server_with_a_url_needs_no_key(anton_home: Path, project_dir: Path) -> None:
    environ = _environ(anton_home, project_dir, ANTON_PLANNING_PROVIDER="openai-compatible")
    assert not load_settings(environ=environ).has_api_key("planning")
    environ["ANTON_OPENAI_BASE_URL"] = "http://localhost:11434/v1"
    assert load_settings(environ=environ).has_api_key("planning")


def test_memory_disabled_makes_the_effective_mode_off(anton_home: Path, project_dir: Path) -> None:
    settings = load_settings(environ=_environ(anton_home, project_dir, ANTON_MEMORY_ENABLED="false"))
    assert settings.memory_mode == "autopilot"
    assert settings.effective_memory_mode == "off"


def test_invalid_mode_in_project_file_names_variable_value_choices_and_file(anton_home: Path, project_dir: Path) -> None:
    env_file = _write(project_dir / ".anton" / ".env", "# mine\nANTON_MEMORY_MODE=autopliot\n")
    before = env_file.read_bytes()

    with pytest.raises(SettingsError) as caught:
        load_settings()

    message = str(caught.value)
    assert "\n" not in message
    assert "ANTON_MEMORY_MODE" in message and "autopliot" in message
    assert "autopilot, copilot, off" in message
    assert str(env_file) in message
    assert env_file.read_bytes() == before


def test_invalid_number_from_the_environment_says_so(anton_home: Path, project_dir: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(environ=_environ(anton_home, project_dir, ANTON_CELL_TOTAL_MAX="an hour"))
    assert "ANTON_CELL_TOTAL_MAX='an hour'" in str(caught.value)
    assert "the environment" in str(caught.value)
    assert "whole number" in str(caught.value)


def test_context_settings_are_read_and_bad_values_explained(anton_home: Path, project_dir: Path) -> None:
    settings = load_settings(environ=_environ(anton_home, project_dir, ANTON_CONTEXT_WINDOW="16384",
                                              ANTON_CONTEXT_PRESSURE_THRESHOLD="0.6"))
    assert (settings.context_window, settings.context_pressure_threshold) == (16384, 0.6)
    assert load_settings(environ=_environ(anton_home, project_dir)).context_window is None
    with pytest.raises(SettingsError) as caught:
        load_settings(environ=_environ(anton_home, project_dir, ANTON_CONTEXT_WINDOW="big"))
    assert "ANTON_CONTEXT_WINDOW='big'" in str(caught.value) and "whole number greater than 0" in str(caught.value)
    with pytest.raises(SettingsError) as caught:
        load_settings(environ=_environ(anton_home, project_dir, ANTON_CONTEXT_PRESSURE_THRESHOLD="1.5"))
    assert "a number between 0 and 1" in str(caught.value)


def test_keymap_is_read_as_json(anton_home: Path, project_dir: Path) -> None:
    environ = _environ(anton_home, project_dir, ANTON_KEYMAP='{"app.quit": "ctrl+q,f10"}')
    assert load_settings(environ=environ).keymap == {"app.quit": "ctrl+q,f10"}
    with pytest.raises(SettingsError, match="ANTON_KEYMAP"):
        load_settings(environ=_environ(anton_home, project_dir, ANTON_KEYMAP="ctrl+q"))


def test_missing_project_folder_is_a_settings_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="ANTON_PROJECT_DIR.*no-such-folder"):
        load_settings(project_dir=tmp_path / "no-such-folder")


def test_malformed_line_is_reported_skipped_and_left_intact(anton_home: Path, project_dir: Path) -> None:
    text = 'ANTON_THEME=kept\nthis is not a setting\nANTHROPIC_API_KEY="sk-unterminated\nANTON_MEMORY_MODE=copilot\n'
    env_file = _write(project_dir / ".anton" / ".env", text)

    settings = load_settings()

    assert settings.theme == "kept" and settings.memory_mode == "copilot"
    assert settings.anthropic_api_key is None
    warnings = settings.env_warnings
    assert len(warnings) == 2
    assert all("\n" not in w and str(env_file) in w for w in warnings)
    assert "line 2" in warnings[0] and "line 3" in warnings[1]
    assert "sk-unterminated" not in " ".join(warnings)
    assert env_file.read_text() == text


def test_undecodable_file_is_reported_not_used(anton_home: Path) -> None:
    env_file = anton_home / ".env"
    env_file.write_bytes(b"ANTON_THEME=\xff\xfe\n")
    settings = load_settings()
    assert settings.theme == "anton-dark"
    assert any("UTF-8" in w for w in settings.env_warnings)
    assert env_file.read_bytes() == b"ANTON_THEME=\xff\xfe\n"


def test_settings_alone_hold_the_defaults_made_real(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-direct")
    monkeypatch.setenv("ANTON_ACC_MODE", "active")
    settings = Settings()
    assert settings.home == tmp_path / ".anton"  # the default goes through the same reading as a set value
    assert settings.anthropic_api_key is None and settings.acc_mode == "passive"  # only load_settings reads sources
    assert load_settings(environ={"ANTHROPIC_API_KEY": "sk-direct"}).has_key("anthropic")


# --- write_project_env ---------------------------------------------------------------------------------------------


def test_write_creates_file_with_header_and_private_mode(tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    path = write_project_env(project, {"ANTON_MEMORY_MODE": "copilot"})
    assert path == project / ".anton" / ".env"
    assert path.read_text() == "# Anton environment variables\nANTON_MEMORY_MODE=copilot\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_write_keeps_other_lines_and_comments_byte_identical(project_dir: Path) -> None:
    original = (
        "# Anton environment variables\r\n"
        "# keys below\n"
        "export OTHER = 'spaced value'  # trailing note\n"
        "\n"
        "ANTON_MEMORY_MODE=autopilot\n"
        "not a setting at all\n"
        "ANTON_THEME=old # inline\n"
        "   \n"
        "ANTON_EPISODIC_MEMORY=true\n"
        "ANTON_THEME=duplicate"
    )
    env_file = _write(project_dir / ".anton" / ".env", "")
    env_file.write_bytes(original.encode())

    write_project_env(
        project_dir,
        {"ANTON_MEMORY_MODE": "copilot", "ANTON_THEME": "light", "ANTON_EPISODIC_MEMORY": None, "ANTON_NEW": "x y"},
    )

    expected = (
        "# Anton environment variables\r\n"
        "# keys below\n"
        "export OTHER = 'spaced value'  # trailing note\n"
        "\n"
        "ANTON_MEMORY_MODE=copilot\n"
        "not a setting at all\n"
        "ANTON_THEME=light\n"
        "   \n"
        "ANTON_NEW='x y'\n"
    )
    assert env_file.read_bytes() == expected.encode()
    values, warnings = read_env_file(env_file)
    assert values == {"OTHER": "spaced value", "ANTON_MEMORY_MODE": "copilot", "ANTON_THEME": "light", "ANTON_NEW": "x y"}
    assert len(warnings) == 1


@pytest.mark.parametrize("value", ["sk-ant-api03-AbC_12", "has space", "it's", 'say "hi" # not a comment', "back\\slash", "$HOME"])
def test_written_values_read_back_exactly(project_dir: Path, value: str) -> None:
    write_project_env(project_dir, {"ANTON_ANTHROPIC_API_KEY": value})
    settings = load_settings()
    assert settings.anthropic_api_key.get_secret_value() == value


@pytest.mark.parametrize("bad", ["line1\nANTON_MEMORY_MODE=off", "carriage\rreturn"])
def test_write_rejects_line_breaks_and_leaves_file_untouched(project_dir: Path, bad: str) -> None:
    env_file = _write(project_dir / ".anton" / ".env", "# mine\nANTON_THEME=dark\n")
    before = env_file.read_bytes()
    with pytest.raises(ValueError, match="ANTON_THEME"):
        write_project_env(project_dir, {"ANTON_MEMORY_MODE": "copilot", "ANTON_THEME": bad})
    assert env_file.read_bytes() == before
    assert sorted(p.name for p in env_file.parent.iterdir()) == [".env"]


def test_write_rejects_a_bad_key_name(project_dir: Path) -> None:
    with pytest.raises(ValueError, match="not a valid variable name"):
        write_project_env(project_dir, {"BAD KEY": "x"})
    assert not (project_dir / ".anton" / ".env").exists()


def test_concurrent_writers_lose_no_key(project_dir: Path, tmp_path: Path) -> None:
    script = (
        "import sys, time\nfrom pathlib import Path\nfrom anton_tui.config import write_project_env\n"
        "project, tag, gate = sys.argv[1], sys.argv[2], Path(sys.argv[3])\n"
        "(gate.parent / f'ready-{tag}').touch()\n"
        "while not gate.exists(): time.sleep(0.001)\n"
        "for i in range(30): write_project_env(project, {f'K_{tag}_{i}': str(i)})\n"
    )
    gate = tmp_path / "go"
    tags = ("a", "b", "c")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(project_dir), tag, str(gate)]) for tag in tags]
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"ready-{tag}").exists() for tag in tags) and time.monotonic() < deadline:
        time.sleep(0.01)
    gate.touch()  # all writers start together, so their read-modify-write cycles overlap
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    values, _ = read_env_file(project_dir / ".anton" / ".env")
    assert len(values) == 90


# --- AntonPaths ----------------------------------------------------------------------------------------------------


def test_paths_follow_the_settings(anton_home: Path, project_dir: Path) -> None:
    paths = AntonPaths.from_settings(load_settings())
    assert paths.global_memory == anton_home / "memory"
    assert paths.skills == anton_home / "skills"
    assert paths.themes == anton_home / "themes"
    assert paths.project_memory == project_dir / ".anton" / "memory"
    assert paths.episodes == project_dir / ".anton" / "episodes"
    assert paths.venvs == project_dir / ".anton" / "scratchpad-venvs"
    assert paths.project_env == project_dir / ".anton" / ".env"
    assert paths.anton_md == project_dir / ".anton" / "anton.md"


def test_ensure_workspace_creates_anton_layout(anton_home: Path, project_dir: Path) -> None:
    paths = AntonPaths(anton_home, project_dir)
    created = paths.ensure_workspace()

    assert set(created) == {paths.project_anton, paths.project_memory, paths.anton_md, paths.project_env}
    assert paths.project_memory.is_dir()
    today = datetime.date.today().isoformat()
    assert paths.anton_md.read_text().startswith(f"# Anton Workspace\n\nCreated: {today}\n\n<!-- ")
    assert "Anton reads this file at the start of every conversation. -->" in paths.anton_md.read_text()
    assert paths.project_env.read_text() == "# Anton environment variables\n"
    assert stat.S_IMODE(paths.project_env.stat().st_mode) == 0o600


def test_ensure_workspace_never_overwrites(anton_home: Path, project_dir: Path) -> None:
    paths = AntonPaths(anton_home, project_dir)
    _write(paths.anton_md, "# My project\nnotes\n")
    _write(paths.project_env, "ANTON_THEME=mine\n")
    os.chmod(paths.project_env, 0o640)

    created = paths.ensure_workspace()

    assert created == [paths.project_memory]
    assert paths.anton_md.read_text() == "# My project\nnotes\n"
    assert paths.project_env.read_text() == "ANTON_THEME=mine\n"
    assert stat.S_IMODE(paths.project_env.stat().st_mode) == 0o640
    assert paths.ensure_workspace() == []


# --- one reading of each setting -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "effective"), [(" yes ", "copilot"), ("Off", "off"), ("0", "off"), ("TRUE", "copilot")])
def test_the_first_frame_and_the_settings_read_a_setting_alike(
    anton_home: Path, project_dir: Path, raw: str, effective: str
) -> None:
    environ = _environ(anton_home, project_dir, ANTON_MEMORY_MODE="copilot", ANTON_MEMORY_ENABLED=raw,
                       ANTON_KEYMAP='{"app.quit": "f10"}')  # fmt: skip
    frame = FirstFrame.from_layers(read_env_layers(environ=environ))
    settings = load_settings(environ=environ)
    assert frame.effective_memory_mode == settings.effective_memory_mode == effective
    assert frame.keymap == settings.keymap == {"app.quit": "f10"}
    assert FirstFrame.of(settings) == frame


def test_a_value_the_settings_refuse_is_shown_as_typed_on_the_first_frame(anton_home: Path, project_dir: Path) -> None:
    environ = _environ(anton_home, project_dir, ANTON_PLANNING_PROVIDER="anthropik", ANTON_MEMORY_ENABLED="maybe")
    frame = FirstFrame.from_layers(read_env_layers(environ=environ))
    assert (frame.planning_provider, frame.effective_memory_mode) == ("anthropik", "autopilot")
    with pytest.raises(SettingsError, match="ANTON_MEMORY_ENABLED='maybe'.*true or false"):
        load_settings(environ=environ)
    del environ["ANTON_MEMORY_ENABLED"]
    with pytest.raises(SettingsError, match="ANTON_PLANNING_PROVIDER='anthropik'.*anthropic, openai, openai-compatible"):
        load_settings(environ=environ)


def test_every_setting_explains_a_bad_value_in_one_line(anton_home: Path, project_dir: Path) -> None:
    assert set(SETTING_KINDS) == set(Settings.model_fields), "each setting is read by setting_value"
    checked = 0
    for field_name, kind in SETTING_KINDS.items():
        if kind.allowed in ("text", "a folder"):
            continue  # any text is one
        variable = env_names(field_name)[0]
        with pytest.raises(SettingsError) as caught:
            load_settings(environ=_environ(anton_home, project_dir, **{variable: "-1.5 or so"}))
        message = str(caught.value)
        assert "\n" not in message and variable in message and kind.allowed in message, message
        assert "'-1.5 or so'" in message and "the environment" in message
        checked += 1
    assert checked >= 25


def test_a_count_of_minutes_may_be_zero_but_a_count_of_turns_may_not(anton_home: Path, project_dir: Path) -> None:
    settings = load_settings(environ=_environ(anton_home, project_dir, ANTON_MEMORY_SYNC_MINUTES="0",
                                              ANTON_COMPACTION_EVERY_TURNS="12.0"))  # fmt: skip
    assert (settings.memory_sync_minutes, settings.compaction_every_turns) == (0, 12)
    with pytest.raises(SettingsError, match="0 or more"):
        load_settings(environ=_environ(anton_home, project_dir, ANTON_MEMORY_SYNC_MINUTES="-5"))
    with pytest.raises(SettingsError, match="whole number greater than 0"):
        load_settings(environ=_environ(anton_home, project_dir, ANTON_COMPACTION_EVERY_TURNS="0"))
