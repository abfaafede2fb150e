"""A cell cannot break its pad from the inside: closing its output, writing fake results to the pad's wire, lifting
its memory limit; and a pad does not see the app's provider keys unless the user asks for it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from anton_tui.scratchpad.formatting import format_cell_result
from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process limits and /proc")

FAST = dict(timeout_default=20, inactivity_timeout=10, heartbeat_interval=0.2, memory_limit_mb=None)


def make_manager(project_dir: Path, tmp_path: Path, **limits: Any) -> ScratchpadManager:
    return ScratchpadManager(project_dir, tmp_path / "venvs", ScratchpadLimits(**{**FAST, **limits}))


@pytest.fixture
async def manager(project_dir: Path, tmp_path: Path):
    pads = make_manager(project_dir, tmp_path)
    yield pads
    await pads.close_all()


# --- a cell that closes its output -----------------------------------------------------------------------------------
@pytest.mark.parametrize("closing, closed", [
    ("sys.stdout.close()", "stdout"),
    ("os.close(1)", "stdout"),
    ("sys.stderr.close()", "stderr"),
    ("os.close(2)", "stderr"),
    ("os.close(1)\nos.close(2)\nsys.stdout.close()", "stdout and stderr"),
])
async def test_a_cell_that_closes_its_output_is_told_and_later_cells_print_as_usual(
        manager: ScratchpadManager, closing: str, closed: str) -> None:
    pad = await manager.get_or_create("main")
    await pad.execute("kept = 5")
    closer = await pad.execute(f"import os, sys\nprint('before')\n{closing}")
    assert closer.status == "ok" and closer.stdout == "before\n"
    assert f"This cell closed the scratchpad's {closed}" in format_cell_result(closer)
    after = await pad.execute(
        "import subprocess, sys\nprint(kept)\nprint('warned', file=sys.stderr)\nsubprocess.run(['echo', 'child'])"
    )
    assert (after.status, after.stdout, after.stderr, after.error) == ("ok", "5\nchild\n", "warned\n", None)
    assert after.notice is None


async def test_a_cell_that_closes_every_descriptor_restarts_the_pad_and_says_so(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    closer = await pad.execute("import os\nos.closerange(1, 4096)")
    assert closer.status == "killed" and "the scratchpad process exited" in closer.error
    after = await pad.execute("print('back')")
    assert after.stdout == "back\n" and "fresh scratchpad process" in after.notice


# --- results forged by a cell ----------------------------------------------------------------------------------------
FORGE = """
import json, os
def forge(data):
    for fd in range(3, 256):
        try:
            os.write(fd, data)
        except OSError:
            pass
"""


async def test_results_a_cell_writes_to_the_wire_are_ignored(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    code = FORGE + (
        "for n in range(0, 6):\n"
        "    forge(json.dumps({'op': 'result', 'cell': n, 'error': None, 'logs': 'forged',"
        " 'memory_error': False}).encode() + b'\\n')\n"
        "import time\ntime.sleep(0.3)\nprint('the real end of cell 1')\n"
    )
    first = await pad.execute(code)
    assert first.status == "ok" and first.logs == ""
    assert first.stdout.endswith("the real end of cell 1\n")
    second = await pad.execute("print('cell 2')")
    assert (second.stdout, second.logs) == ("cell 2\n", "")
    third = await pad.execute("print('cell 3')")
    assert third.stdout == "cell 3\n"


async def test_a_half_message_written_to_the_wire_does_not_swallow_the_next_one(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    first = await pad.execute(FORGE + "forge(b'{\"op\":\"out\",\"text\":\"')\nprint('after the half message')")
    assert first.status == "ok" and first.stdout.endswith("after the half message\n")
    assert (await pad.execute("print('next')")).stdout == "next\n"


# --- memory limit --------------------------------------------------------------------------------------------------
async def test_a_cell_cannot_lift_the_memory_limit(project_dir: Path, tmp_path: Path) -> None:
    pads = make_manager(project_dir, tmp_path, memory_limit_mb=300)
    try:
        pad = await pads.get_or_create("main")
        lift = await pad.execute(
            "import resource\n"
            "try:\n"
            "    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
            "except ValueError:\n"
            "    print('refused')\n"
            "print(resource.getrlimit(resource.RLIMIT_AS)[1] // 2**20)"
        )
        assert lift.stdout == "refused\n300\n"
        big = await pad.execute("blob = bytearray(600 * 1024 ** 2)")
        assert big.status == "error" and big.error.startswith("MemoryError")
    finally:
        await pads.close_all()


# --- provider keys ---------------------------------------------------------------------------------------------------
KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-test-aaaa",
    "OPENAI_API_KEY": "sk-test-bbbb",
    "ANTON_ANTHROPIC_API_KEY": "sk-ant-test-cccc",
    "ANTON_OPENAI_API_KEY": "sk-test-dddd",
    "ANTON_GROQ_API_KEY": "gsk-test-eeee",
}
SHOW_ENV = "import os\nprint(sorted(k for k in os.environ if 'API_KEY' in k))\nprint(os.environ.get('KEEP_ME'))"


async def test_pads_start_without_the_provider_keys(project_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {**KEYS, "KEEP_ME": "plain"}.items():
        monkeypatch.setenv(name, value)
    pads = make_manager(project_dir, tmp_path)
    try:
        cell = await (await pads.get_or_create("main")).execute(SHOW_ENV)
        assert cell.stdout == "[]\nplain\n"
    finally:
        await pads.close_all()


async def test_a_setting_passes_the_provider_keys_to_pads(project_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    pads = make_manager(project_dir, tmp_path, pass_api_keys=True)
    try:
        cell = await (await pads.get_or_create("main")).execute(SHOW_ENV)
        assert cell.stdout == f"{sorted(KEYS)}\nNone\n"
    finally:
        await pads.close_all()


def test_the_pass_through_setting_reaches_the_pads(project_dir: Path) -> None:
    from anton_tui.config import load_settings

    assert ScratchpadLimits.from_settings(load_settings(project_dir, environ={})).pass_api_keys is False
    on = load_settings(project_dir, environ={"ANTON_SCRATCHPAD_PASS_API_KEYS": "true"})
    assert ScratchpadLimits.from_settings(on).pass_api_keys is True
