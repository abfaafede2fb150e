"""Crash-safe saving: `anton-tui ask` processes continuing one conversation are killed with SIGKILL at random moments
of their turns (20 runs: while starting, streaming, running a cell, saving). After each kill the saved conversation
loads, and it holds every message finished before the kill: all that the model had been sent, every answer the
process had reported, and everything the file held before."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from anton_tui.agent.history_store import HistoryStore, check_history
from anton_tui.agent.messages import message_text
from tests.fakellm import Reply, ToolCallSpec
from tests.fakellm.script import RecordedRequest
from tests.session_helpers import EMPTY_ANSWERS, PLANNER, forced_tool

RUNS = 20
SEED = 29


def shape(message: dict[str, Any]) -> tuple:
    """What identifies a message whatever the wire did to it (empty text blocks are not sent)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    calls = tuple(b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use")
    results = tuple(b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result")
    return message.get("role"), message_text(message), calls, results


def script(request: RecordedRequest) -> Reply | None:
    """Each turn: a streamed text with a cell and a recall, then a text with another cell, then the answer."""
    tokens = len(json.dumps(request.body)) // 4
    name = forced_tool(request)
    if name in EMPTY_ANSWERS:
        return Reply.tool_call(name, EMPTY_ANSWERS[name])
    if request.model != PLANNER:
        return None
    rounds = 0
    for message in reversed(request.messages):
        content = message.get("content")
        if message["role"] == "user" and not (isinstance(content, list) and
                                              any(b.get("type") == "tool_result" for b in content)):
            break
        rounds += message["role"] == "assistant"
    slow = {"chunk_size": 6, "chunk_delay": 0.01, "usage": (tokens, 50)}
    cell = "import time\ntime.sleep(0.15)\nprint('rows', 42)"
    if rounds == 0:
        return Reply(content="Reading the rows now, then checking my notes. " * 2,
                     calls=[ToolCallSpec("scratchpad", {"action": "exec", "name": "main", "code": cell}),
                            ToolCallSpec("recall", {"query": "rows"})], **slow)  # fmt: skip
    if rounds == 1:
        return Reply(content="Once more to be sure. " * 3,
                     calls=[ToolCallSpec("scratchpad", {"action": "exec", "name": "main", "code": cell})], **slow)
    return Reply.text("There are 42 rows; both reads agree. " * 4, **slow)


class Run:
    """One `anton-tui ask --json` process, its stdout read as it comes."""

    def __init__(self, message: str, env: dict[str, str], continuing: bool) -> None:
        args = [sys.executable, "-m", "anton_tui", "ask", message, "--json", *(["--continue"] if continuing else [])]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        stdin=subprocess.DEVNULL, env=env, text=True)  # fmt: skip
        self.lines: list[dict] = []
        self.turn_started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                continue
            if self.lines[-1].get("type") == "turn_started":
                self.turn_started.set()

    def kill_after(self, seconds: float) -> bool:
        """SIGKILL after `seconds` (unless it ended first); True when it was killed."""
        try:
            self.process.wait(timeout=seconds)
            killed = False
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            killed = True
        self._reader.join(timeout=5)
        return killed

    def answers(self) -> list[str]:
        return [line["text"] for line in self.lines if line.get("type") == "assistant_message_done"]


def test_a_conversation_killed_at_any_moment_loads_with_every_finished_message(fake_llm, project_dir):
    fake_llm.responder = script
    env = {**os.environ, **fake_llm.env(), "ANTON_MEMORY_MODE": "autopilot", "ANTON_CONTEXT_WINDOW": "1000000"}
    episodes = project_dir / ".anton" / "episodes"
    store = HistoryStore(episodes)
    rng = random.Random(SEED)
    began = time.monotonic()
    full = Run("Run 0: count the rows", env, continuing=False)
    assert full.turn_started.wait(120)
    start_time = time.monotonic() - began
    assert not full.kill_after(120), "an uninterrupted turn finishes"
    turn_time = time.monotonic() - began - start_time
    (path,) = episodes.glob("*_history.json")
    session_id = path.name.removesuffix("_history.json")
    saved = store.load(session_id)[0]
    killed = mid_turn = 0
    for number in range(1, RUNS + 1):
        before = saved
        seen = len(fake_llm.requests)
        run = Run(f"Run {number}: count the rows again", env, continuing=True)
        if number % 5 == 0:  # while it starts (resuming, the turn's first save)
            killed += run.kill_after(rng.uniform(0.2, start_time * 1.2))
        else:  # while the turn runs: streaming, running cells, saving
            run.turn_started.wait(120)
            killed += run.kill_after(rng.uniform(0.0, turn_time))

        raw = path.read_bytes()
        assert check_history(json.loads(raw)) is None, f"run {number}: the file is a valid history"
        saved = store.load(session_id)[0]
        shapes = [shape(message) for message in saved]
        assert shapes[: len(before)] == [shape(message) for message in before], f"run {number} lost earlier messages"
        sent = [r for r in fake_llm.requests[seen:] if r.model == PLANNER]
        if sent:  # everything the model was sent had been finished, so it is saved
            last = [shape(message) for message in sent[-1].messages]
            assert shapes[: len(last)] == last, f"run {number}: a message the model had been sent is missing"
        texts = {message_text(m) for m in saved if m["role"] == "assistant"}
        assert set(run.answers()) <= texts, f"run {number}: an answer reported before the kill is missing"
        mid_turn += run.process.returncode == -signal.SIGKILL and 0 < len(run.answers()) < 3
    assert killed >= RUNS // 2, "most runs were killed"
    assert mid_turn >= 3, "some of them between the answers of one turn"
    assert not [p for p in Path(episodes).iterdir() if p.name.endswith("_history.json") and p != path]
