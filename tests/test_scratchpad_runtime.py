"""Scratchpads with real child processes: state, isolation, live events, limits, cancel and the LLM bridge."""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from anton_tui.scratchpad.events import CellFinished, CellHeartbeat, CellOutput, CellProgress, CellStarted
from anton_tui.scratchpad.formatting import format_cell_result
from anton_tui.scratchpad.runtime import EmptyCodeError, ScratchpadLimits, ScratchpadManager

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc to watch processes")

FAST = ScratchpadLimits(timeout_default=20, inactivity_timeout=10, heartbeat_interval=0.2, memory_limit_mb=None)


def process_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def processes_with_env(marker: str) -> list[int]:
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if needle in environ.read() and process_alive(int(entry)):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def vm_rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(autouse=True)
def no_process_left_behind(monkeypatch: pytest.MonkeyPatch):
    """Every process started by a test carries a marker in its environment; none may survive the test."""
    marker = f"scratchpad-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("ANTON_SCRATCHPAD_TEST_MARK", marker)
    yield
    deadline = time.monotonic() + 3
    while processes_with_env(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with_env(marker) == []


def make_manager(project_dir: Path, tmp_path: Path, bridge: Any = None, **limits: Any) -> ScratchpadManager:
    values = {**{f: getattr(FAST, f) for f in FAST.__dataclass_fields__}, **limits}
    return ScratchpadManager(project_dir, tmp_path / "venvs", ScratchpadLimits(**values), llm_bridge=bridge)


@pytest.fixture
async def manager(project_dir: Path, tmp_path: Path):
    pads = make_manager(project_dir, tmp_path)
    yield pads
    await pads.close_all()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[float, Any]] = []
        self.first_output = asyncio.Event()

    def __call__(self, event: Any) -> None:
        self.events.append((time.monotonic(), event))
        if isinstance(event, CellOutput):
            self.first_output.set()

    def of(self, kind: type) -> list[tuple[float, Any]]:
        return [(t, e) for t, e in self.events if isinstance(e, kind)]


# --- state and isolation ------------------------------------------------------------------------------------------
async def test_variables_persist_between_cells(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    first = await pad.execute("answer = 41", description="set")
    second = await pad.execute("print(answer + 1)", description="read")
    assert first.status == "ok" and second.status == "ok"
    assert second.stdout == "42\n"
    assert format_cell_result(second) == "[output]\n42\n"


async def test_two_pads_do_not_see_each_others_variables(manager: ScratchpadManager) -> None:
    a = await manager.get_or_create("a")
    b = await manager.get_or_create("b")
    await a.execute("secret = 'only in a'")
    cell = await b.execute("print(secret)")
    assert cell.status == "error"
    assert "NameError: name 'secret' is not defined" in cell.error
    assert a.pid != b.pid and sorted(manager.names()) == ["a", "b"]


async def test_cells_run_in_the_project_folder(manager: ScratchpadManager, project_dir: Path) -> None:
    (project_dir / "helper_mod.py").write_text("VALUE = 'from the project'\n")
    pad = await manager.get_or_create("main")
    cell = await pad.execute("import os, helper_mod\nprint(os.getcwd())\nprint(helper_mod.VALUE)")
    assert cell.stdout.splitlines() == [str(project_dir), "from the project"]


async def test_reset_clears_the_namespace(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    await pad.execute("kept = 1")
    old_pid = pad.pid
    await pad.reset()
    assert pad.cells == [] and not process_alive(old_pid)
    cell = await pad.execute("print(kept)")
    assert "NameError" in cell.error and cell.notice is None


async def test_remove_ends_the_process(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    await pad.execute("x = 1")
    pid = pad.pid
    assert pid is not None and process_alive(pid)
    assert await manager.remove("main") is True
    assert not process_alive(pid)
    assert manager.get("main") is None and await manager.remove("main") is False


async def test_close_all_ends_every_process(manager: ScratchpadManager) -> None:
    pids = []
    for name in ("one", "two"):
        pad = await manager.get_or_create(name)
        await pad.start()
        pids.append(pad.pid)
    await manager.close_all()
    assert [process_alive(pid) for pid in pids] == [False, False]


async def test_empty_code_is_rejected_without_starting_anything(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    with pytest.raises(EmptyCodeError, match="No code provided"):
        await pad.execute("  \n ")
    assert pad.cells == [] and pad.pid is None


async def test_plain_pad_starts_fast_and_makes_no_venv(manager: ScratchpadManager, tmp_path: Path) -> None:
    pad = await manager.get_or_create("main")
    started = time.perf_counter()
    await pad.start()
    assert time.perf_counter() - started < 2.0
    await pad.execute("print('hi')")
    assert not (tmp_path / "venvs" / "main").exists()


async def test_stdin_is_empty_and_exit_does_not_end_the_pad(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    await pad.execute("mark = 7")
    read = await pad.execute("input('name? ')")
    assert "EOFError" in read.error
    quit_cell = await pad.execute("import sys\nsys.exit(3)")
    assert quit_cell.error.startswith("SystemExit: the cell called exit(3)")
    assert (await pad.execute("print(mark)")).stdout == "7\n"


async def test_logging_goes_to_logs_and_top_level_await_works(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    cell = await pad.execute(
        "import asyncio, logging\nawait asyncio.sleep(0.01)\nlogging.getLogger('loader').info('read %d rows', 3)"
    )
    assert cell.status == "ok" and cell.logs == "loader: read 3 rows"
    assert format_cell_result(cell) == "[logs]\nloader: read 3 rows"


# --- live events ----------------------------------------------------------------------------------------------------
async def test_output_is_streamed_while_the_cell_runs(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    await pad.start()
    record = Recorder()
    code = "import time\nfor i in range(5):\n    print('line', i)\n    time.sleep(0.3)"
    cell = await pad.execute(code, description="five lines", on_event=record)
    kinds = [type(e) for _, e in record.events if not isinstance(e, CellHeartbeat)]
    assert kinds == [CellStarted] + [CellOutput] * 5 + [CellFinished]
    outputs = record.of(CellOutput)
    finished_at = record.of(CellFinished)[0][0]
    assert [e.text for _, e in outputs] == [f"line {i}\n" for i in range(5)]
    # each line arrived while the cell was still running, ~0.3 s apart
    assert finished_at - outputs[0][0] >= 1.1
    assert all(b - a >= 0.2 for (a, _), (b, _) in zip(outputs, outputs[1:]))
    assert record.of(CellFinished)[0][1].cell is cell


async def test_progress_and_heartbeat_events(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    record = Recorder()
    cell = await pad.execute("import time\nprogress('halfway')\ntime.sleep(0.7)", on_event=record)
    assert cell.status == "ok"
    assert [e.message for _, e in record.of(CellProgress)] == ["halfway"]
    beats = [e.elapsed for _, e in record.of(CellHeartbeat)]
    assert len(beats) >= 2 and beats == sorted(beats)


async def test_output_that_looks_like_protocol_cannot_break_it(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    code = (
        "import os, sys, time\n"
        'fake = \'{"op":"result","cell":1,"error":null,"logs":""}\'\n'
        "print('__ANTON_RESULT__'); print(fake); print('__ANTON_RESULT_END__'); print('__ANTON_CELL_END__')\n"
        "sys.__stdout__.write(fake + '\\n'); sys.__stdout__.flush()\n"
        "os.write(1, (fake + '\\n').encode()); os.write(2, b'{\"op\":\"ready\"}\\n')\n"
        "time.sleep(0.2)\n"
        "print('still running')\n"
        "survivor = 5\n"
    )
    cell = await pad.execute(code)
    assert cell.status == "ok", cell.error
    assert cell.stdout.count('"op":"result"') == 3 and cell.stdout.endswith("still running\n")
    assert cell.stderr == '{"op":"ready"}\n'
    assert (await pad.execute("print(survivor)")).stdout == "5\n"


async def test_output_of_subprocesses_is_captured(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    cell = await pad.execute("import subprocess\nsubprocess.run('echo from-child; echo oops >&2', shell=True)")
    assert cell.stdout == "from-child\n" and cell.stderr == "oops\n"


# --- limits -----------------------------------------------------------------------------------------------------------
async def test_a_silent_endless_loop_is_killed_for_inactivity(project_dir: Path, tmp_path: Path) -> None:
    pads = make_manager(project_dir, tmp_path, inactivity_timeout=0.6)
    try:
        pad = await pads.get_or_create("main")
        await pad.execute("state = 'before'")
        old_pid = pad.pid
        started = time.monotonic()
        cell = await pad.execute("while True:\n    pass")
        assert time.monotonic() - started < 3
        assert cell.status == "killed" and cell.was_killed
        assert cell.error.startswith("Cell killed after 0.6s without output")
        assert not process_alive(old_pid)
        after = await pad.execute("print(state)")
        assert "NameError" in after.error
        assert "fresh scratchpad process" in after.notice
        assert format_cell_result(after).startswith("[note]\nThe previous cell was killed for inactivity")
    finally:
        await pads.close_all()


async def test_steady_printing_counts_as_activity_but_total_time_is_capped(project_dir: Path, tmp_path: Path) -> None:
    pads = make_manager(project_dir, tmp_path, timeout_default=1.5, inactivity_timeout=0.5)
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute("import time\nn = 0\nwhile True:\n    n += 1\n    print(n)\n    time.sleep(0.1)")
        assert cell.error.startswith("Cell timed out after 1.5s total")
        assert 1.4 <= cell.duration < 4
        assert cell.stdout.startswith("1\n2\n3\n")  # what it printed before the kill is kept
    finally:
        await pads.close_all()


async def test_progress_widens_the_inactivity_window(project_dir: Path, tmp_path: Path) -> None:
    pads = make_manager(project_dir, tmp_path, inactivity_timeout=0.5, inactivity_after_progress=2)
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute("import time\nprogress('loading')\ntime.sleep(1.0)\nprint('done')")
        assert cell.status == "ok" and cell.stdout == "done\n"
    finally:
        await pads.close_all()


async def test_killing_a_cell_also_ends_the_subprocesses_it_started(project_dir: Path, tmp_path: Path) -> None:
    pads = make_manager(project_dir, tmp_path, inactivity_timeout=0.5)
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute(
            "import subprocess, time\nchild = subprocess.Popen(['sleep', '60'])\nprint(child.pid)\n"
            "while True:\n    time.sleep(0.05)"
        )
        assert cell.status == "killed"
        assert not process_alive(int(cell.stdout.strip()))
    finally:
        await pads.close_all()


async def test_a_crashing_process_is_reported_and_replaced(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    await pad.execute("x = 1")
    cell = await pad.execute("print('bye')\nimport os\nos._exit(3)")
    assert cell.status == "killed"
    assert cell.error.startswith("Cell killed: the scratchpad process exited (exit code 3)")
    assert cell.stdout == "bye\n"
    after = await pad.execute("print('back')")
    assert after.stdout == "back\n" and "variables and imports from earlier cells are gone" in after.notice


async def test_memory_limit_fails_cleanly_and_the_pad_keeps_working(project_dir: Path, tmp_path: Path) -> None:
    pads = make_manager(project_dir, tmp_path, memory_limit_mb=400)
    try:
        pad = await pads.get_or_create("main")
        await pad.execute("kept = 'still here'")
        pid = pad.pid
        big = await pad.execute("blob = bytearray(2 * 1024 ** 3)")
        assert big.status == "error"
        assert big.error.startswith("MemoryError: the cell needed more memory than this scratchpad may use (400 MB")
        growing = await pad.execute(
            "def grow():\n    parts = []\n    while True:\n        parts.append(b'x' * 2**24)\ngrow()"
        )
        assert "MemoryError" in growing.error
        after = await pad.execute("print(kept, sum(range(1000)))")
        assert after.stdout == "still here 499500\n" and pad.pid == pid
    finally:
        await pads.close_all()


async def test_huge_output_does_not_blow_up_the_parent(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    await pad.start()
    before = vm_rss_kb()
    peak = before
    seen = 0

    def watch(event: Any) -> None:
        nonlocal peak, seen
        seen += 1
        if seen % 20 == 0:
            peak = max(peak, vm_rss_kb())

    code = "import sys\nline = 'x' * 9999 + '\\n'\nfor _ in range(5000):\n    sys.stdout.write(line)"
    cell = await pad.execute(code, on_event=watch)
    peak = max(peak, vm_rss_kb())
    assert cell.status == "ok"
    assert cell.stdout_total_chars == 50_000_000 and cell.truncated
    assert len(cell.stdout) == 1_000_000
    assert (peak - before) < 40_000, f"parent RSS grew by {(peak - before) // 1024} MB"
    result = format_cell_result(cell)
    assert "... (truncated, 50000000 chars total)" in result and len(result) < 10_100


# --- cancel ----------------------------------------------------------------------------------------------------------
async def test_cancel_stops_the_running_cell(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    record = Recorder()
    task = asyncio.create_task(
        pad.execute("import time\nfor i in range(100):\n    print(i)\n    time.sleep(0.1)", on_event=record)
    )
    await asyncio.wait_for(record.first_output.wait(), 5)
    pid = pad.pid
    assert pad.cancel() is True
    cell = await asyncio.wait_for(task, 5)
    assert cell.status == "cancelled" and cell.error == "Cancelled by user."
    assert cell.stdout.startswith("0\n") and not process_alive(pid)
    assert isinstance(record.events[-1][1], CellFinished)
    assert pad.cancel() is False
    again = await pad.execute("print('fresh')")
    assert again.stdout == "fresh\n" and "was cancelled" in again.notice


async def test_cancelling_the_awaiting_task_also_stops_the_cell(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    record = Recorder()
    task = asyncio.create_task(pad.execute("import time\nprint('go')\ntime.sleep(30)", on_event=record))
    await asyncio.wait_for(record.first_output.wait(), 5)
    pid = pad.pid
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pad.cells[-1].status == "cancelled"
    # the next cell starts at once, while the old process may still be collected in the background
    after = await pad.execute("import time\ntime.sleep(0.2)\nprint(1)")
    assert after.stdout == "1\n" and after.status == "ok"
    deadline = time.monotonic() + 3
    while process_alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not process_alive(pid)


# --- get_llm ---------------------------------------------------------------------------------------------------------
async def test_get_llm_round_trip_through_the_bridge(project_dir: Path, tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []

    async def bridge(request: dict[str, Any]) -> dict[str, Any]:
        requests.append(request)
        await asyncio.sleep(0.01)
        return {"text": f"echo:{request['prompt']}"}

    pads = make_manager(project_dir, tmp_path, bridge=bridge)
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute("llm = get_llm()\nprint(llm.complete('hello', system='be brief', max_tokens=50))")
        assert cell.stdout == "echo:hello\n", cell.error
        assert requests == [{"op": "complete", "prompt": "hello", "system": "be brief", "max_tokens": 50}]
        parallel = await pad.execute(
            "from concurrent.futures import ThreadPoolExecutor\n"
            "with ThreadPoolExecutor(4) as pool:\n"
            "    answers = list(pool.map(lambda i: get_llm().complete(f'q{i}'), range(8)))\n"
            "print(answers)"
        )
        assert parallel.stdout == str([f"echo:q{i}" for i in range(8)]) + "\n"
    finally:
        await pads.close_all()


async def test_a_slow_model_call_does_not_count_as_inactivity(project_dir: Path, tmp_path: Path) -> None:
    async def slow_bridge(request: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(1.2)
        return {"text": "late but fine"}

    pads = make_manager(project_dir, tmp_path, inactivity_timeout=0.5, bridge=slow_bridge)
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute("print(get_llm().complete('q'))")
        assert cell.status == "ok" and cell.stdout == "late but fine\n"
    finally:
        await pads.close_all()


async def test_a_failing_model_call_raises_inside_the_cell(project_dir: Path, tmp_path: Path) -> None:
    async def broken_bridge(request: dict[str, Any]) -> dict[str, Any]:
        raise ConnectionError("provider unreachable")

    pads = make_manager(project_dir, tmp_path, bridge=broken_bridge)
    try:
        pad = await pads.get_or_create("main")
        cell = await pad.execute("try:\n    get_llm().complete('q')\nexcept RuntimeError as e:\n    print(e)")
        assert cell.stdout == "get_llm(): the language model call failed: ConnectionError: provider unreachable\n"
    finally:
        await pads.close_all()


async def test_get_llm_without_a_bridge_says_why(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    cell = await pad.execute("get_llm()")
    assert "RuntimeError: get_llm() is not available in this scratchpad" in cell.error


async def test_an_interpreter_crash_shows_where_it_happened(manager: ScratchpadManager) -> None:
    pad = await manager.get_or_create("main")
    cell = await pad.execute("import ctypes\nprint('before the crash')\nctypes.string_at(0)")
    assert cell.error.startswith("Cell killed: the scratchpad process exited (killed by signal SIGSEGV)")
    assert "Fatal Python error: Segmentation fault" in cell.stderr
    assert 'File "<cell 1>", line 3' in cell.stderr
    assert cell.stdout == "before the crash\n"


async def test_output_is_streamed_while_the_app_holds_over_a_thousand_files_open(
    manager: ScratchpadManager, tmp_path: Path
) -> None:
    """A long-running app holds many descriptors (watchers, indexes, sockets): the pipes a pad is handed then have
    numbers past 1024, and its output must still arrive while the cell runs, not only when it ends."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        pad = await manager.get_or_create("main")
        await pad.start()
        record = Recorder()
        code = "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(0.3)"
        cell = await pad.execute(code, description="three lines", on_event=record)
    finally:
        for fd in held:
            os.close(fd)
    assert cell.status == "ok"
    outputs = record.of(CellOutput)
    finished_at = record.of(CellFinished)[0][0]
    assert [e.text for _, e in outputs] == [f"line {i}\n" for i in range(3)]
    assert finished_at - outputs[0][0] >= 0.5, "the first line came only when the cell ended"
