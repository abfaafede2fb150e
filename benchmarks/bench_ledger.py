"""What summarising keeps: a scripted 300-turn conversation with scratchpad cells, `!` commands and `@` files runs
through the real session, SDK and scratchpads against the local fake LLM server, with a window large enough that
each summary folds more than the summariser's input holds (the coding model here has the 32,768-character input of
an unknown model, so the turns it is shown are clipped in the middle). Reported, for the commands, cells and user
messages of the folded turns:

- the share held by the ledgers (100% by construction: the ledger is copied from the folded turns);
- the share the summary text names (the command, the cell's `print('T017'…)` line, the message's ticket `T017`),
  each checked in the summary that folded it, run twice: the summariser shown the ledger (as the app does) and not.

Offline no model runs, so the summary is written by a stand-in that names everything it is shown that the user
wrote or that names an action (the user's messages and their notes, tool calls, the ledger's lines), never the
assistant's prose or tool output: a summariser with perfect recall and no length limit. Its figures say what the
request puts within the summariser's reach, not what a model writes. With ``ANTON_BENCH_SUMMARY_MODEL`` set (a
Claude model with ANTHROPIC_API_KEY, or an OpenAI one with OPENAI_API_KEY), that model writes the summaries instead
and the figures are that model's.

Run alone with ``python -m benchmarks --only ledger``.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = 300
WINDOW = 40_000  # tokens of the planning model's window: each summary folds some 100,000 characters
SKIPPED_TAGS = ("[assistant]:", "[tool_result]:")


def stand_in_summary(request_text: str) -> str:
    """The offline summariser (see the module docstring): every line of the request the user wrote or that names an
    action, in order, once."""
    kept: dict[str, None] = {}
    skipping = False
    for line in request_text.splitlines():
        if line.startswith("["):
            skipping = line.startswith(SKIPPED_TAGS)
        if not skipping and line.strip():
            kept[line] = None
    return "\n".join(kept) or "## Goal\n- (nothing)"


def _live_coder(settings: Any) -> Any:
    """A real model for the summaries, when ANTON_BENCH_SUMMARY_MODEL names one (None otherwise)."""
    model = os.environ.get("ANTON_BENCH_SUMMARY_MODEL")
    if not model:
        return None
    from anton_tui.llm.anthropic_provider import AnthropicProvider
    from anton_tui.llm.client import ModelRole
    from anton_tui.llm.openai_provider import OpenAIProvider

    if model.startswith("claude"):
        backend: Any = AnthropicProvider(api_key=os.environ["ANTHROPIC_API_KEY"])
    else:
        backend = OpenAIProvider(api_key=os.environ["OPENAI_API_KEY"])
    return ModelRole(backend, model, 4096)


async def converse(scratch: Path, show_ledger: bool) -> dict[str, Any]:
    from anton_tui.agent.events import HistorySummarised, MemoryConfirmationNeeded
    from anton_tui.agent.factory import build_session
    from anton_tui.config import load_settings
    from tests.conversation_script import request_text, responder, scripted_turns, ticket
    from tests.fakellm import FakeLLMServer

    project = scratch / ("with" if show_ledger else "without")
    project.mkdir()
    os.environ["ANTON_PROJECT_DIR"] = str(project)
    turns = scripted_turns(TURNS, project)
    with FakeLLMServer() as fake:
        fake.responder = responder(turns, "planner", lambda request: stand_in_summary(request_text(request)))
        environ = {**os.environ, **fake.env(), "ANTON_CONTEXT_WINDOW": str(WINDOW), "ANTON_MEMORY_MODE": "autopilot"}
        settings = load_settings(environ=environ)
        llm = fake.llm_client(max_tokens=2048)
        live = _live_coder(settings)
        if live is not None:
            llm.coding = live
        session = build_session(settings, llm=llm)
        session.context.show_ledger = show_ledger
        await session.warm_up_model()
        summaries: list[HistorySummarised] = []
        began = time.perf_counter()
        for turn in turns:
            async for event in session.turn(turn.text, notes=turn.notes):
                if isinstance(event, HistorySummarised):
                    summaries.append(event)
                elif isinstance(event, MemoryConfirmationNeeded):
                    event.future.set_result(list(event.engrams))
            await session.wait_background()
        elapsed = time.perf_counter() - began
        await session.close()

    by_number = {turn.number: turn for turn in turns}
    held = named = 0
    counts = {"commands": [0, 0, 0], "cells": [0, 0, 0], "user messages": [0, 0, 0]}  # folded, in ledger, named
    for event in summaries:
        ledger = event.ledger
        assert ledger is not None
        record = event.summary
        numbers = [number for number, _ in ledger.user_messages]
        for number in numbers:
            turn = by_number[number]
            checks = [("user messages", True, ticket(number) in record)]
            if turn.command:
                in_ledger = any(c.command == turn.command for c in ledger.commands)
                checks.append(("commands", in_ledger, turn.command in record))
            if turn.cell:
                in_ledger = any(c.code == turn.cell for c in ledger.cells)
                checks.append(("cells", in_ledger, f"print('{ticket(number)}'" in record))
            for kind, in_ledger, in_record in checks:
                counts[kind][0] += 1
                counts[kind][1] += in_ledger
                counts[kind][2] += in_record
                held += in_ledger
                named += in_record
    return {"summaries": len(summaries), "counts": counts, "seconds": elapsed}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="anton-bench-ledger-") as scratch:
        os.environ["ANTON_HOME"] = str(Path(scratch) / "home")
        (Path(scratch) / "home").mkdir()
        results = {}
        for show_ledger in (False, True):
            results[show_ledger] = asyncio.run(converse(Path(scratch), show_ledger))
    who = os.environ.get("ANTON_BENCH_SUMMARY_MODEL") or "the offline stand-in (see the module docstring)"
    print(f"{TURNS} scripted turns, window {WINDOW:,} tokens; summaries written by {who}")
    failed = False
    for show_ledger, result in results.items():
        print(f"summariser {'shown' if show_ledger else 'not shown'} the ledger: {result['summaries']} summaries "
              f"in {result['seconds']:.0f} s")  # fmt: skip
        for kind, (folded, in_ledger, in_record) in result["counts"].items():
            print(f"  {kind:<14} folded {folded:>4}  in a ledger {in_ledger / max(folded, 1):>6.1%}  "
                  f"named by the summary {in_record / max(folded, 1):>6.1%}")  # fmt: skip
            failed |= in_ledger != folded
    if failed:
        print("FAIL: a folded command, cell or message is missing from its ledger")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
