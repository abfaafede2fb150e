"""Per-pad environments: an install lands in one pad only, bad requirements are refused, plain pads make none."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from anton_tui.scratchpad.runtime import InvalidRequirementError, ScratchpadLimits, ScratchpadManager

# Tiny, pure Python, and not installed alongside the app (checked below), so only an install can provide it.
PACKAGE = "tomli_w"


def registry_problem(tmp: str) -> str | None:
    """Why the package registry cannot serve PACKAGE here, or None when it can."""
    try:
        probe = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q",
             "-d", tmp, PACKAGE],
            capture_output=True, text=True, timeout=60,
        )
    except subprocess.TimeoutExpired:
        return "the package registry did not answer within 60 s"
    if probe.returncode != 0:
        return "the package registry is unreachable: " + (probe.stderr.strip().splitlines() or ["?"])[-1]
    return None


def processes_with_env(marker: str) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if marker.encode() in environ.read() and int(entry) != os.getpid():
                    found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.fixture(autouse=True)
def no_process_left_behind(monkeypatch: pytest.MonkeyPatch):
    marker = f"scratchpad-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("ANTON_SCRATCHPAD_TEST_MARK", marker)
    yield
    deadline = time.monotonic() + 3
    while processes_with_env(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with_env(marker) == []


@pytest.fixture
async def manager(project_dir: Path, tmp_path: Path):
    pads = ScratchpadManager(project_dir, tmp_path / "venvs", ScratchpadLimits(memory_limit_mb=None))
    yield pads
    await pads.close_all()


@pytest.mark.network
async def test_install_reaches_only_the_pad_that_asked(manager: ScratchpadManager, tmp_path: Path,
                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    problem = registry_problem(str(tmp_path_factory.mktemp("probe")))
    if problem:
        pytest.skip(problem)
    a = await manager.get_or_create("a")
    b = await manager.get_or_create("b")
    before = await a.execute(f"state = 1\nimport importlib.util\nprint(importlib.util.find_spec('{PACKAGE}'))")
    assert before.stdout == "None\n", "the test package must not already be importable"

    message = await a.install([PACKAGE])
    assert message.startswith(f"Installed {PACKAGE} into scratchpad 'a'")
    assert "restarted on its own environment" in message

    venv = tmp_path / "venvs" / "a"
    used = await a.execute(
        f"import sys, {PACKAGE}, yaml\nprint(sys.prefix)\nprint({PACKAGE}.dumps({{'k': 1}}).strip())"
    )
    assert used.status == "ok", used.error
    assert used.stdout.splitlines() == [str(venv), "k = 1"]  # its own venv, and the app's libraries still there
    assert "NameError" in (await a.execute("state")).error  # the restart dropped the old namespace

    other = await b.execute(f"import {PACKAGE}")
    assert f"ModuleNotFoundError: No module named '{PACKAGE}'" in other.error
    assert not (tmp_path / "venvs" / "b").exists()

    again = await a.install([PACKAGE])
    assert again.startswith(f"{PACKAGE}: already available to scratchpad 'a'")


async def test_invalid_requirements_are_refused_before_anything_happens(manager: ScratchpadManager,
                                                                        tmp_path: Path) -> None:
    pad = await manager.get_or_create("main")
    for bad in (["--index-url", "http://example.com"], ["pkg @ file:///etc/passwd"], ["../elsewhere"], []):
        with pytest.raises(InvalidRequirementError):
            await pad.install(bad)
    assert not (tmp_path / "venvs").exists() and pad.pid is None


async def test_a_pad_without_installs_runs_on_the_apps_python(manager: ScratchpadManager, tmp_path: Path) -> None:
    pad = await manager.get_or_create("plain")
    cell = await pad.execute("import sys\nprint(sys.executable)")
    assert cell.stdout.strip() == sys.executable
    assert not (tmp_path / "venvs").exists()
