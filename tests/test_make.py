"""The Makefile as a first-time user meets it: setup shows progress, `make test` lints and type-checks first, `make
run` leaves nothing for git to list, and `make run` draws the app at 80×24 (in tmux, when the machine has it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def dry_run_of_setup() -> list[str]:
    """The commands `make setup` runs when the install is due (`-W pyproject.toml` pretends the file changed)."""
    done = subprocess.run(["make", "-n", "-W", "pyproject.toml", "setup"], cwd=ROOT, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_first_setup_shows_pips_progress_and_says_what_it_does() -> None:
    lines = dry_run_of_setup()
    install = [line for line in lines if "pip install" in line and "-e" in line]
    assert install and all("--quiet" not in line and " -q" not in line for line in install)
    assert any(line.startswith("@echo") or line.startswith("echo") for line in lines), "a line says what is happening"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_runs_the_linters_and_the_type_checker_before_the_tests() -> None:
    done = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith(".venv/bin/")]
    assert [line.split()[:3] for line in lines] == [
        [".venv/bin/ruff", "check", "anton_tui"],
        [".venv/bin/ruff", "format", "--check"],
        [".venv/bin/mypy"],
        [".venv/bin/python", "-m", "pytest"],
    ]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_folder_make_run_creates_in_the_clone_is_ignored_by_git() -> None:
    done = subprocess.run(["git", "check-ignore", "-q", ".anton/memory/rules.md"], cwd=ROOT)
    assert done.returncode == 0, ".anton/ is listed in .gitignore"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run ARGS=\"--folder" in readme


@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("make") is None, reason="needs tmux and make")
@pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="make setup has not run in this clone")
def test_make_run_draws_the_demo_at_80x24_in_tmux(tmp_path: Path, project_dir: Path) -> None:
    session = f"anton-tui-test-{os.getpid()}"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTON_", "TMUX"))}
    env |= {"ANTON_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    command = f"make -s run ARGS='--demo --folder {project_dir}'"
    subprocess.run(["tmux", "-L", session, "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command],
                   cwd=ROOT, env=env, check=True)  # fmt: skip
    try:
        screen = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            screen = subprocess.run(["tmux", "-L", session, "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True).stdout  # fmt: skip
            if "Demo replay" in screen and "next pane" in screen:
                break
            time.sleep(0.2)
        lines = screen.splitlines()
        assert "Demo replay" in screen, screen
        assert "Chat" in screen and "Scratchpad" in screen and "Memory" in screen, screen
        assert "Traceback" not in screen and "Error" not in screen, screen
        assert max(len(line) for line in lines) <= 80 and len(lines) <= 24
    finally:
        subprocess.run(["tmux", "-L", session, "send-keys", "-t", session, "C-q"], capture_output=True)
        deadline = time.monotonic() + 10  # let the app quit by itself, so that the demo removes its folder
        while time.monotonic() < deadline:
            if subprocess.run(["tmux", "-L", session, "has-session", "-t", session], capture_output=True).returncode:
                break
            time.sleep(0.2)
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)
