"""A long conversation: request size and engine time per turn at turns 1, 100 and 300, and resuming it.

Runs 300 scripted turns through the real session, the real Anthropic SDK and the local fake LLM server, with the
planning model named ``claude-sonnet-4-6`` (a 200,000-token window; the budget is 70% of it). Each answer is about
4,000 characters and every fifth turn makes a tool call, so the history outgrows the budget and is summarised
along the way. The fake server charges 4 characters a token for everything sent, tools included, and answers at
once, so a turn's time is the engine's own work plus the SDK and the loopback HTTP. For each reported turn:
the request's size in bytes and tokens, the turn's wall time, and the parts the long history costs (sizing and
making room before the request; saving the history file after the turn). Then: listing the saved conversations
and resuming the 300-turn one into a fresh session. Fails (exit 1) if any request passed the budget.
Run alone with ``python -m benchmarks.bench_history``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

TURNS = 300
REPORT = (1, 100, 300)
MODEL = "claude-sonnet-4-6"
ANSWER = ("The numbers for this region line up with the previous run; " * 8 + "\n\n") * 8  # ~4,000 characters


def _timed(owner, name: str, sink: dict[int, float], turn_of) -> None:
    """Wrap owner.name (sync or async) so the time spent in it adds up per turn in `sink`."""
    original = getattr(owner, name)
    if asyncio.iscoroutinefunction(original):
        async def wrapper(*args, **kwargs):
            began = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                sink[turn_of()] = sink.get(turn_of(), 0.0) + time.perf_counter() - began
    else:
        def wrapper(*args, **kwargs):
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                sink[turn_of()] = sink.get(turn_of(), 0.0) + time.perf_counter() - began
    setattr(owner, name, wrapper)


async def run(scratch: Path) -> int:
    os.environ["ANTON_HOME"] = str(scratch / "home")
    os.environ["ANTON_PROJECT_DIR"] = str(scratch / "project")
    for folder in ("home", "project"):
        (scratch / folder).mkdir(exist_ok=True)
    from anton_tui.agent.events import HistorySummarised, HistoryTrimmed
    from anton_tui.agent.factory import build_session
    from anton_tui.agent.summarise import SUMMARY_SYSTEM
    from anton_tui.config import load_settings
    from tests.fakellm import FakeLLMServer, Reply, ToolCallSpec
    from tests.session_helpers import EMPTY_ANSWERS, forced_tool

    with FakeLLMServer() as fake:
        calls = {"n": 0}

        def respond(request):
            tokens = len(json.dumps(request.body)) // 4
            if request.system == SUMMARY_SYSTEM:
                return Reply.text("## Goal\n- compare regional figures\n## Completed\n- " + "region checked; " * 60,
                                  usage=(tokens, 400))
            name = forced_tool(request)
            if name in EMPTY_ANSWERS:
                return Reply.tool_call(name, EMPTY_ANSWERS[name], usage=(tokens, 20))
            last = request.messages[-1]
            answering_tool = isinstance(last.get("content"), list) and any(
                b.get("type") == "tool_result" for b in last["content"])
            calls["n"] += 1
            if calls["n"] % 5 == 0 and not answering_tool:
                return Reply(content="Checking my notes.", calls=[ToolCallSpec("recall_skill", {"label": "regions"})],
                             usage=(tokens, 50))
            return Reply.text(ANSWER, usage=(tokens, 1000))

        fake.responder = respond
        environ = {**os.environ, **fake.env(planning_model=MODEL, coding_model="claude-haiku-4-5-20251001")}
        settings = load_settings(environ=environ)
        session = build_session(settings, llm=fake.llm_client(planning_model=MODEL,
                                                              coding_model="claude-haiku-4-5-20251001",
                                                              max_tokens=8192))
        fit_time: dict[int, float] = {}
        save_time: dict[int, float] = {}
        _timed(session.context, "fit", fit_time, lambda: session.turn_count)
        _timed(session.conversation, "save", save_time, lambda: session.turn_count)
        budget = session.context.budget(session.llm)
        await session.warm_up()  # as the app does after its first frame: the SDK import is not a turn's cost
        wall: dict[int, float] = {}
        summaries, trims = [], []
        for turn in range(1, TURNS + 1):
            began = time.perf_counter()
            async for event in session.turn(f"Turn {turn}: how do the figures for region {turn % 17} compare?"):
                if isinstance(event, HistorySummarised):
                    summaries.append((turn, event.tokens_before, event.tokens_after))
                elif isinstance(event, HistoryTrimmed):
                    trims.append(turn)
            wall[turn] = time.perf_counter() - began
            await session.wait_background()
        planner = fake.requests_for(MODEL)
        sizes = [len(json.dumps(r.body)) for r in planner]
        worst = max(sizes) // 4
        session_id = session.session_id
        history_bytes = (session.history_store.history_path(session_id)).stat().st_size
        await session.close()

        print(f"planning model {MODEL}: window {session.context.window(session.llm):,} tokens, "
              f"budget {budget:,} tokens (70% of the window)")
        print("turn  request bytes  request tokens  turn ms  fit ms  save ms")
        last_request = {}
        for request in planner:
            number = _turn_of(request)
            if number:
                last_request[number] = request
        for turn in REPORT:
            request = last_request.get(turn)
            size = len(json.dumps(request.body)) if request else 0
            print(f"{turn:>4}  {size:>13,}  {size // 4:>14,}  {wall[turn] * 1000:>7.1f}  "
                  f"{fit_time.get(turn, 0) * 1000:>6.1f}  {save_time.get(turn, 0) * 1000:>7.1f}")
        late = [wall[t] * 1000 for t in range(TURNS - 49, TURNS + 1)]
        print(f"turns 251-300: median {statistics.median(late):.1f} ms, slowest {max(late):.1f} ms")
        print(f"largest request: {worst:,} tokens of {budget:,} ({worst / budget:.1%} of the budget)")
        print(f"summaries at turns {[s[0] for s in summaries]} "
              f"(tokens {', '.join(f'{b:,}->{a:,}' for _, b, a in summaries)}); trims at {trims or 'none'}")
        print(f"history file after {TURNS} turns: {history_bytes:,} bytes")

        from anton_tui.agent.history_store import HistoryStore

        store = HistoryStore(scratch / "project" / ".anton" / "episodes")
        began = time.perf_counter()
        rows = store.list_sessions()
        listed = time.perf_counter() - began
        resumed_session = build_session(settings, llm=fake.llm_client(planning_model=MODEL))
        began = time.perf_counter()
        resumed = await resumed_session.resume(session_id)
        resume_time = time.perf_counter() - began
        await resumed_session.close()
        print(f"list_sessions ({len(rows)} session): {listed * 1000:.1f} ms; resume of the {TURNS}-turn session "
              f"({resumed.messages} messages, {resumed.turns} typed turns kept): {resume_time * 1000:.1f} ms")
        if worst > budget:
            print("FAIL: a request passed the budget")
            return 1
    return 0


def _turn_of(request) -> int | None:
    """The turn number a planner request belongs to, read from its last typed question."""
    for message in reversed(request.messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.startswith("Turn "):
            return int(content[5:].split(":", 1)[0])
    return None


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="anton-bench-history-") as scratch:
        return asyncio.run(run(Path(scratch)))


if __name__ == "__main__":
    raise SystemExit(main())
