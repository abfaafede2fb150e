"""The command line: --version and --help answer without loading anything heavy; bad settings exit with code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anton_tui import __version__
from anton_tui.cli import SETTINGS_ERROR_EXIT, build_parser, main

HEAVY = ("textual", "anthropic", "openai", "watchdog", "inotify_simple", "pydantic")

# Runs the real entry point in a fresh interpreter and reports what it printed, its exit code and what it imported.
_PROBE = """
import contextlib, io, json, sys
from anton_tui.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "modules": sorted(sys.modules)}))
"""


def _probe(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=60, env=os.environ.copy()
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _heavy_loaded(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_fast_paths_import_nothing_heavy(flag: str) -> None:
    report = _probe(flag)
    assert report["code"] == 0
    assert _heavy_loaded(report["modules"]) == []
    if flag == "--version":
        assert report["out"].strip() == f"anton-tui {__version__}"
    else:
        for option in ("--demo", "--folder", "--theme", "--version"):
            assert option in report["out"]


def test_installed_command_prints_version() -> None:
    command = Path(sys.executable).parent / "anton-tui"
    if not command.exists():
        pytest.skip("anton-tui is not installed in this interpreter's environment")
    result = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout.strip()) == (0, f"anton-tui {__version__}")


def test_arguments_are_parsed() -> None:
    args = build_parser().parse_args(["-f", "/tmp/somewhere", "--theme", "light", "--demo"])
    assert (args.folder, args.theme, args.demo) == (Path("/tmp/somewhere"), "light", True)
    defaults = build_parser().parse_args([])
    assert (defaults.folder, defaults.theme, defaults.demo) == (None, None, False)


def test_invalid_setting_prints_one_line_and_exits_2(project_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env_file = project_dir / ".anton" / ".env"
    env_file.parent.mkdir()
    env_file.write_text("ANTON_ACC_MODE=shouty\n")

    assert main([]) == SETTINGS_ERROR_EXIT == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "ANTON_ACC_MODE='shouty'" in err and str(env_file) in err and "off, passive, active" in err


def test_invalid_setting_exit_code_from_a_real_process(project_dir: Path) -> None:
    env = {**os.environ, "ANTON_MEMORY_MODE": "sometimes"}
    result = subprocess.run(
        [sys.executable, "-m", "anton_tui"], capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "anton-tui: ANTON_MEMORY_MODE='sometimes' (from the environment) is not valid: "
        "expected one of autopilot, copilot, off"
    ]


def test_missing_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--folder", str(tmp_path / "missing")])
    assert caught.value.code == 2
    assert "missing: no such folder" in capsys.readouterr().err
