"""`!` commands: output streamed while the command runs, exit codes, stopping the whole process group, and what
the agent is shown of it (capped, secrets taken out)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from anton_tui.agent.shell import ShellFinished, ShellOutput, ShellRecord, ShellStarted, cap_output, run_shell
from anton_tui.redact import Redactor


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of a process we do not wait for counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


async def test_output_arrives_before_the_command_ends_in_the_workspace_folder(tmp_path: Path) -> None:
    tmp_path = tmp_path / "workspace"
    tmp_path.mkdir()
    (tmp_path / "here.txt").write_text("x", encoding="utf-8")
    events = run_shell("ls; echo err >&2; sleep 0.5; echo done; exit 3", tmp_path)
    started = time.monotonic()
    seen: list[tuple[float, object]] = []
    async for event in events:
        seen.append((time.monotonic() - started, event))
    assert isinstance(seen[0][1], ShellStarted) and seen[0][1].cwd == str(tmp_path)
    text = "".join(e.text for _, e in seen if isinstance(e, ShellOutput))
    assert text == "here.txt\nerr\ndone\n"
    first_output = next(t for t, e in seen if isinstance(e, ShellOutput))
    end, finished = seen[-1]
    assert first_output < end - 0.3, "the first lines came while the command was still sleeping"
    assert isinstance(finished, ShellFinished) and finished.exit_code == 3 and not finished.cancelled


async def test_closing_the_stream_kills_the_command_and_what_it_started(tmp_path: Path) -> None:
    events = run_shell("sleep 30 & echo $!; sleep 30", tmp_path)
    child = None
    async for event in events:
        if isinstance(event, ShellOutput):
            child = int(event.text.strip())
            break
    assert child is not None and alive(child)
    started = time.monotonic()
    await events.aclose()
    assert time.monotonic() - started < 3
    for _ in range(50):
        if not alive(child):
            break
        await asyncio.sleep(0.05)
    assert not alive(child), "the background sleep of the command's group was killed too"


def test_the_agents_copy_is_capped_and_redacted() -> None:
    long = "".join(f"line {i}\n" for i in range(5000))
    capped = cap_output(long, cap=900)
    assert capped.startswith("line 0\n") and capped.endswith("line 4999\n") and "characters left out" in capped
    assert len(capped) < 1000
    key = "sk-ant-api03-" + "A1b2C3d4" * 11
    record = ShellRecord(f"curl -H 'x-api-key: {key}' example.org", f"token={key}\n", 0)
    note = record.note(Redactor({"ANTHROPIC_API_KEY": key}, environ={}))
    assert key not in note and "[ANTHROPIC_API_KEY]" in note
    assert "exit code 0" in note and note.splitlines()[1].startswith("$ curl")
    assert "stopped by the user" in ShellRecord("sleep 9", "", None, cancelled=True).note()
    assert "(no output)" in ShellRecord("true", "", 0).note()
