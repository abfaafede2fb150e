"""The fake LLM server refuses what the real APIs refuse, routes replies, and survives hang-ups."""

from __future__ import annotations

import asyncio
import time

import pytest

from anton_tui.llm import LLMError, TextDelta
from tests.fakellm import FakeLLMServer, Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401

HELLO = [{"role": "user", "content": "Hello!"}]
TOOL = {"name": "memorize", "description": "", "input_schema": {"type": "object", "properties": {}}}
DANGLING = [
    *HELLO,
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "memorize", "input": {}}]},
    {"role": "user", "content": "Never mind."},
]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_tool_call_left_without_its_result_is_refused_like_the_real_api(
    fake_llm: FakeLLMServer, provider  # noqa: F811
):
    llm = fake_llm.llm_client(provider=provider)
    fake_llm.queue(Reply.text("unused"))

    with pytest.raises(LLMError) as caught:
        await llm.plan(system="", messages=DANGLING, tools=[TOOL])
    await llm.aclose()

    assert caught.value.kind == "bad_request" and "toolu_1" in str(caught.value)
    assert fake_llm.last_request.rejected and fake_llm.pending() == 1  # the scripted reply is still there
    assert len(fake_llm.requests) == 1


async def test_replies_for_a_model_come_first_then_the_shared_queue_then_the_responder(fake_llm):  # noqa: F811
    llm = fake_llm.llm_client(provider="anthropic")
    fake_llm.queue(Reply.text("shared"))
    fake_llm.queue(Reply.text("for the coder"), model="coder")
    fake_llm.responder = lambda request: Reply.text(f"dynamic answer for {request.model}")

    answers = [(await llm.code(system="", messages=HELLO)).text for _ in range(3)]
    await llm.aclose()

    assert answers == ["for the coder", "shared", "dynamic answer for coder"]


async def test_abandoning_a_stream_hangs_up_promptly_and_the_next_call_works(fake_llm):  # noqa: F811
    llm = fake_llm.llm_client(provider="openai")
    fake_llm.queue(Reply.text("a slow answer that takes a long while to arrive", chunk_delay=0.3), Reply.text("next"))

    stream = llm.plan_stream(system="", messages=HELLO)
    started = time.monotonic()
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await asyncio.wait_for(stream.aclose(), timeout=2)

    assert time.monotonic() - started < 1.0  # the full answer would take about two seconds
    abandoned = fake_llm.last_request
    deadline = time.monotonic() + 2
    while abandoned.outcome == "pending" and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert abandoned.outcome == "client hung up"
    assert (await llm.plan(system="", messages=HELLO)).text == "next"
    await llm.aclose()
