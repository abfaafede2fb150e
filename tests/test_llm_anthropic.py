"""The Anthropic provider, through the real SDK, against the local fake Messages API."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from pydantic import SecretStr

from anton_tui.llm import LLMClient, LLMError, ModelRole, RetryPolicy
from anton_tui.llm.anthropic_provider import AnthropicProvider
from anton_tui.llm.events import StreamComplete, TextDelta, ToolUseDelta, ToolUseEnd, ToolUseStart, Usage
from tests.fakellm import FakeLLMServer, Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401

MEMORIZE = {
    "name": "memorize",
    "description": "Store a fact for later sessions.",
    "input_schema": {
        "type": "object",
        "properties": {"text": {"type": "string"}, "scope": {"type": "string"}},
        "required": ["text"],
    },
}
HELLO = [{"role": "user", "content": "Hello!"}]


@pytest.fixture
async def client(fake_llm: FakeLLMServer):  # noqa: F811
    llm = fake_llm.llm_client(provider="anthropic")
    yield llm
    await llm.aclose()


async def collect(stream):
    events, error = [], None
    try:
        async for event in stream:
            events.append(event)
    except LLMError as exc:
        error = exc
    return events, error


async def test_text_answer_streams_as_several_deltas_and_completes_with_usage(client, fake_llm):
    answer = "Good morning! The weather in Lisbon is sunny and warm today."
    fake_llm.queue(Reply.text(answer, usage=(321, 17)))

    events, error = await collect(client.plan_stream(system="You are Anton.", messages=HELLO))

    assert error is None
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 3 and "".join(deltas) == answer
    assert isinstance(events[-1], StreamComplete)
    response = events[-1].response
    assert (response.text, response.usage, response.stop_reason) == (answer, Usage(321, 17), "end_turn")
    sent = fake_llm.last_request
    assert (sent.path, sent.model, sent.stream, sent.max_tokens) == ("/v1/messages", "planner", True, 1024)
    assert sent.system == "You are Anton." and sent.messages == HELLO
    assert sent.api_key == "test-key"


async def test_tool_call_round_trip_streams_arguments_and_sends_result_back(client, fake_llm):
    arguments = {"text": "The user prefers metric units and short answers.", "scope": "global"}
    fake_llm.queue(Reply.tool_call("memorize", arguments, text_before="I'll remember that."), Reply.text("Saved."))

    events, error = await collect(client.plan_stream(system="sys", messages=HELLO, tools=[MEMORIZE]))

    assert error is None
    kinds = [type(e).__name__ for e in events]
    start = kinds.index("ToolUseStart")
    assert set(kinds[:start]) == {"TextDelta"}
    assert kinds[-2:] == ["ToolUseEnd", "StreamComplete"]
    tool_deltas = [e for e in events if isinstance(e, ToolUseDelta)]
    assert len(tool_deltas) >= 2
    call = events[-1].response.tool_calls[0]
    assert events[start] == ToolUseStart(call.id, "memorize") and events[-2] == ToolUseEnd(call.id)
    assert "".join(d.json_delta for d in tool_deltas) and {d.id for d in tool_deltas} == {call.id}
    assert (call.input, call.parse_error, events[-1].response.stop_reason) == (arguments, None, "tool_use")

    result = {"type": "tool_result", "tool_use_id": call.id, "content": "Stored 1 rule.", "is_error": False}
    history = [*HELLO, events[-1].response.to_message(), {"role": "user", "content": [result]}]
    events, error = await collect(client.plan_stream(system="sys", messages=history, tools=[MEMORIZE]))

    assert error is None and events[-1].response.text == "Saved."
    sent = fake_llm.last_request
    assert sent.rejected is None
    assert sent.messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll remember that."},
            {"type": "tool_use", "id": call.id, "name": "memorize", "input": arguments},
        ],
    }
    assert sent.messages[2]["content"] == [result]
    assert sent.body["tools"] == [MEMORIZE]


async def test_rate_limit_is_retried_after_the_delay_the_server_asks_for(fake_llm):
    # Our own backoff would wait 6 s at least: far apart from the 10 ms the server asks for, however busy the machine.
    provider = AnthropicProvider(api_key="k", base_url=fake_llm.anthropic_base_url, retry=RetryPolicy(base_delay=8.0))
    llm = LLMClient(ModelRole(provider, "planner", 256))
    fake_llm.queue(Reply.error(429, retry_after_ms=10), Reply.text("Back again."))

    started = time.monotonic()
    events, error = await collect(llm.plan_stream(system="", messages=HELLO))
    elapsed = time.monotonic() - started
    await llm.aclose()

    assert error is None and events[-1].response.text == "Back again."
    assert len(fake_llm.requests) == 2
    assert elapsed < 3.0, "waited as the server asked, not our own backoff"


async def test_persistent_rate_limit_gives_up_with_one_clear_message(client, fake_llm):
    fake_llm.queue(*[Reply.error(429, "Number of requests has exceeded your rate limit", retry_after_ms=5)] * 3)

    with pytest.raises(LLMError) as caught:
        await client.plan(system="", messages=HELLO)

    assert caught.value.kind == "rate_limit"
    assert str(caught.value).startswith("Anthropic (planner): rate limited")
    assert "exceeded your rate limit" in str(caught.value) and "\n" not in str(caught.value)
    assert len(fake_llm.requests) == 3  # first try + two retries


async def test_connection_dropped_mid_stream_keeps_the_partial_text(client, fake_llm):
    full = "Here is a long explanation that will never arrive in full because the line drops."
    fake_llm.queue(Reply.drop_after_chunks(3, text=full))

    events, error = await collect(client.plan_stream(system="", messages=HELLO))

    received = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert error is not None and error.kind == "connection"
    assert error.partial_text == received and received and full.startswith(received) and received != full
    assert not any(isinstance(e, StreamComplete) for e in events)
    assert str(error).startswith("Anthropic (planner): the connection dropped mid-answer")
    assert len(fake_llm.requests) == 1  # text was already shown, so no silent retry


async def test_connection_dropped_before_any_text_is_retried_transparently(client, fake_llm):
    fake_llm.queue(Reply.drop_after_chunks(0), Reply.text("Second time lucky."))

    events, error = await collect(client.plan_stream(system="", messages=HELLO))

    assert error is None and events[-1].response.text == "Second time lucky."
    assert len(fake_llm.requests) == 2


async def test_rejected_key_says_how_to_set_it(client, fake_llm):
    fake_llm.queue(Reply.error(401))

    with pytest.raises(LLMError) as caught:
        await client.code(system="", messages=HELLO)

    message = str(caught.value)
    assert caught.value.kind == "auth" and message.startswith("Anthropic (coder): the API key was rejected")
    assert "ANTON_ANTHROPIC_API_KEY" in message and "/setup" in message
    assert len(fake_llm.requests) == 1


async def test_missing_key_fails_before_any_request(fake_llm):
    llm = LLMClient(ModelRole(AnthropicProvider(api_key=None, base_url=fake_llm.anthropic_base_url), "planner"))

    with pytest.raises(LLMError) as caught:
        await llm.plan(system="", messages=HELLO)

    assert caught.value.kind == "auth" and "ANTON_ANTHROPIC_API_KEY" in str(caught.value)
    assert fake_llm.requests == []


async def test_planning_and_coding_calls_go_to_their_own_models(client, fake_llm):
    fake_llm.queue(Reply.text("from the coder"), model="coder")
    fake_llm.queue(Reply.text("from the planner"), model="planner")

    coded = await client.code(system="Summarise.", messages=HELLO, max_tokens=99)
    planned = await client.plan(system="Chat.", messages=HELLO)

    assert (coded.text, planned.text) == ("from the coder", "from the planner")
    first, second = fake_llm.requests
    assert (first.model, first.stream, first.max_tokens) == ("coder", False, 99)
    assert (second.model, second.system) == ("planner", "Chat.")


async def test_empty_text_blocks_are_not_sent(client, fake_llm):
    fake_llm.queue(Reply.text("ok"))
    history = [*HELLO, {"role": "assistant", "content": [{"type": "text", "text": ""}]},
               {"role": "user", "content": "Still there?"}]

    response = await client.plan(system="", messages=history)

    assert response.text == "ok" and fake_llm.last_request.rejected is None
    assert fake_llm.last_request.messages[1]["content"] == [{"type": "text", "text": "(no content)"}]


async def test_nothing_scripted_fails_clearly_and_is_not_retried(client, fake_llm):
    with pytest.raises(LLMError) as caught:
        await client.plan(system="", messages=HELLO)

    assert "script ran out" in str(caught.value) and caught.value.kind == "server"
    assert len(fake_llm.requests) == 1


async def test_from_settings_uses_the_configured_key_url_and_models(fake_llm):
    settings = SimpleNamespace(
        planning_provider="anthropic", planning_model="big-model", coding_provider="anthropic",
        coding_model="small-model", max_tokens=2048, anthropic_api_key=SecretStr("sk-ant-from-settings"),
        anthropic_base_url=fake_llm.anthropic_base_url, openai_api_key=None, openai_base_url=None,
    )
    llm = LLMClient.from_settings(settings)
    fake_llm.queue(Reply.text("hi"), Reply.text("hello"))

    await llm.plan(system="", messages=HELLO)
    await llm.code(system="", messages=HELLO)
    await llm.aclose()

    assert llm.planning.provider is llm.coding.provider
    assert [(r.model, r.max_tokens, r.api_key) for r in fake_llm.requests] == [
        ("big-model", 2048, "sk-ant-from-settings"),
        ("small-model", 2048, "sk-ant-from-settings"),
    ]


async def test_unknown_provider_in_settings_is_reported_on_first_use():
    settings = SimpleNamespace(planning_provider="gemini", planning_model="m", coding_provider="anthropic",
                               coding_model="c", max_tokens=100, anthropic_api_key="k")
    llm = LLMClient.from_settings(settings)

    with pytest.raises(LLMError) as caught:
        await llm.plan(system="", messages=HELLO)

    assert caught.value.kind == "config" and "ANTON_PLANNING_PROVIDER" in str(caught.value)


async def test_a_server_that_stops_answering_times_out_and_is_retried(fake_llm):
    provider = AnthropicProvider(api_key="k", base_url=fake_llm.anthropic_base_url,
                                 retry=RetryPolicy(max_retries=1, base_delay=0.01), timeout=0.3)
    llm = LLMClient(ModelRole(provider, "planner", 100))
    fake_llm.queue(Reply.text("too late", delay=2), Reply.text("on time"))

    assert (await llm.plan(system="", messages=HELLO)).text == "on time"

    fake_llm.queue(Reply.text("too late", delay=2), Reply.text("too late", delay=2))
    with pytest.raises(LLMError) as caught:
        await llm.plan(system="", messages=HELLO)
    await llm.aclose()

    assert caught.value.kind == "timeout" and str(caught.value) == "Anthropic (planner): the request timed out."
    assert len(fake_llm.requests) == 4
