"""Building real chat sessions against the fake LLM server, and driving their turns, for the learning-loop tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anton_tui.agent.events import MemoryConfirmationNeeded, SessionEvent
from anton_tui.agent.factory import build_session
from anton_tui.agent.session import ChatSession
from anton_tui.config import load_settings
from tests.fakellm import FakeLLMServer, Reply, ToolCallSpec

PLANNER = "planner"
CODER = "coder"


def make_settings(fake_llm: FakeLLMServer, *, provider: str = "anthropic", **overrides: Any):
    environ = {**os.environ, **fake_llm.env(provider=provider, planning_model=PLANNER, coding_model=CODER)}
    settings = load_settings(environ=environ)
    overrides.setdefault("episodic_memory", False)
    return settings.model_copy(update=overrides)


def make_session(fake_llm: FakeLLMServer, *, provider: str = "anthropic", limits: dict | None = None,
                 **overrides: Any) -> ChatSession:
    """A session built by the app's own factory, talking to the fake server; `limits` tightens the scratchpads."""
    settings = make_settings(fake_llm, provider=provider, **overrides)
    session = build_session(settings, llm=fake_llm.llm_client(provider=provider, planning_model=PLANNER,
                                                              coding_model=CODER))
    if limits:
        from dataclasses import replace

        session.scratchpads.limits = replace(session.scratchpads.limits, **limits)
    return session


Answer = Callable[[tuple], list]


async def run_turn(session: ChatSession, text: str, answer: Answer | None = None) -> list[SessionEvent]:
    """All events of one turn; a confirmation request is answered with `answer(engrams)` (default: keep none)."""
    events: list[SessionEvent] = []
    async for event in session.turn(text):
        events.append(event)
        if isinstance(event, MemoryConfirmationNeeded):
            event.future.set_result((answer or (lambda engrams: []))(event.engrams))
    return events


def exec_call(name: str, code: str, description: str = "", **extra: Any) -> ToolCallSpec:
    tool_input = {"action": "exec", "name": name, "code": code, "one_line_description": description, **extra}
    return ToolCallSpec("scratchpad", tool_input)


def exec_reply(name: str, code: str, description: str = "", **extra: Any) -> Reply:
    return Reply(calls=[exec_call(name, code, description, **extra)])


def of_type(events: list[Any], kind: type) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def coder_requests(fake_llm: FakeLLMServer) -> list:
    return fake_llm.requests_for(CODER)


def planner_requests(fake_llm: FakeLLMServer) -> list:
    return fake_llm.requests_for(PLANNER)


def forced_tool(request: Any) -> str | None:
    """The structured-output tool a recorded request forced, for either wire format."""
    choice = request.tool_choice
    if isinstance(choice, dict):
        return choice.get("name") or (choice.get("function") or {}).get("name")
    return None


def user_text_of(request: Any) -> str:
    """Everything the last user-side message(s) of a recorded request carried, as text, for either wire format."""
    messages = request.messages
    if request.api == "anthropic":
        content = messages[-1]["content"]
        if isinstance(content, str):
            return content
        parts = []
        for block in content:
            if block.get("type") == "text":
                parts.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                parts.append(inner if isinstance(inner, str) else str(inner))
        return "\n".join(parts)
    tail = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        tail.append(str(message.get("content") or ""))
    return "\n".join(reversed(tail))


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def settle(session: ChatSession, timeout: float = 10.0) -> None:
    await asyncio.wait_for(session.wait_background(), timeout)


EMPTY_ANSWERS = {
    "CerebellumReport": {"lessons": []},
    "ConsolidatedMemories": {"items": []},
    "IdentityFacts": {"facts": []},
    "CompactionResult": {"keep": []},
}


def quiet_coder(fake_llm: FakeLLMServer, **answers: Reply) -> None:
    """Answer coding-model requests by the tool they force: `answers[name]` if given, else an empty result."""

    def respond(request: Any) -> Reply | None:
        name = forced_tool(request)
        if request.model != CODER or name not in EMPTY_ANSWERS:
            return None
        return answers.get(name) or Reply.tool_call(name, EMPTY_ANSWERS[name])

    fake_llm.responder = respond


def answer_summaries(fake_llm: FakeLLMServer, records: list, **answers: Reply) -> None:
    """Like `quiet_coder`, and the history summariser gets `records` in turn (texts or `Reply`s)."""
    from anton_tui.agent.summarise import SUMMARY_SYSTEM

    quiet_coder(fake_llm, **answers)
    structured = fake_llm.responder
    pending = list(records)

    def respond(request: Any) -> Reply | None:
        if request.model == CODER and request.system == SUMMARY_SYSTEM and pending:
            record = pending.pop(0)
            return record if isinstance(record, Reply) else Reply.text(record)
        return structured(request)

    fake_llm.responder = respond
