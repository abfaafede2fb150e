"""What a cell leaves behind stays its own, and a pad cannot exhaust the machine: a thread's prints after its cell
ended are shown under that cell and never handed to the model as another cell's output, and a cell that starts more
processes than a pad may run has its pad stopped with everything it started, whoever runs the app (root included).
Real pad processes."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from anton_tui.scratchpad.events import CellFinished, CellOutput
from anton_tui.scratchpad.formatting import format_cell_result
from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager
from tests.test_scratchpad_lifecycle import wait_until_gone

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts processes through /proc")


@pytest.fixture
async def pads(tmp_path: Path):
    manager = ScratchpadManager(tmp_path, tmp_path / "venvs", ScratchpadLimits(memory_limit_mb=None, max_processes=24))
    yield manager
    await manager.close_all()


async def test_a_threads_prints_after_its_cell_ended_are_shown_under_it_and_never_given_to_the_model(pads) -> None:
    pad = await pads.get_or_create("main")
    events: list = []
    first = await pad.execute(
        "import threading, time\n"
        "def later():\n"
        "    time.sleep(0.6)\n"
        "    print('printed by the thread of cell 1')\n"
        "threading.Thread(target=later).start()\n"
        "print('cell 1 done')",
        on_event=events.append,
    )
    second = await pad.execute("import time\ntime.sleep(1.5)\nprint('cell 2 output')", on_event=events.append)
    assert second.stdout == "cell 2 output\n"
    assert "cell 1" not in format_cell_result(second)
    assert "printed by the thread" not in format_cell_result(first)
    assert "printed by the thread of cell 1" in first.after_end
    finished = next(i for i, e in enumerate(events) if isinstance(e, CellFinished) and e.index == 1)
    late = [e for e in events[finished:] if isinstance(e, CellOutput) and e.index == 1]
    assert "printed by the thread of cell 1" in "".join(e.text for e in late), "shown to the user under cell 1"


async def test_what_a_left_running_process_prints_between_cells_is_not_the_next_cells_output(pads) -> None:
    pad = await pads.get_or_create("main")
    first = await pad.execute("import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.4; echo from the process'])")
    await asyncio.sleep(1.2)  # it prints while no cell runs
    second = await pad.execute("print('cell 2 output')")
    assert second.stdout == "cell 2 output\n"
    assert "from the process" in first.after_end


async def test_a_cell_that_starts_too_many_processes_has_its_pad_stopped_whoever_runs_the_app(pads, tmp_path) -> None:
    pad = await pads.get_or_create("main")
    cell = await pad.execute(
        "import os, time\n"
        "for i in range(150):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    with open('forked.txt', 'a') as f:\n"
        "        f.write(f'{pid}\\n')\n"
        "time.sleep(30)",
        estimated_seconds=60,
    )
    assert cell.status == "killed"
    assert "more than 24 processes, the most one scratchpad may run" in (cell.error or "")
    forked = [int(line) for line in (tmp_path / "forked.txt").read_text().split()]
    assert len(forked) >= 24
    assert wait_until_gone(forked, 10) == [], "every process the pad started was ended"
    again = await pad.execute("print('a fresh pad')")
    assert again.stdout == "a fresh pad\n" and "fresh" in (again.notice or "")
