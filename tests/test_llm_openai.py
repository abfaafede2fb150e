"""The OpenAI provider (and OpenAI-compatible servers), through the real SDK, against the fake server."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import SecretStr

from anton_tui.llm import LLMClient, LLMError, ModelRole
from anton_tui.llm.events import StreamComplete, TextDelta, ToolUseDelta, ToolUseEnd, ToolUseStart, Usage
from anton_tui.llm.openai_provider import OpenAIProvider
from tests.fakellm import FakeLLMServer, Reply, fast_retry_policy
from tests.fakellm.fixtures import fake_llm  # noqa: F401

MEMORIZE = {
    "name": "memorize",
    "description": "Store a fact for later sessions.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
RUN = {
    "name": "scratchpad",
    "description": "Run Python code.",
    "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
}
HELLO = [{"role": "user", "content": "Hello!"}]


@pytest.fixture
async def client(fake_llm: FakeLLMServer):  # noqa: F811
    llm = fake_llm.llm_client(provider="openai")
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
    answer = "Sure. Python's sorted() returns a new list; list.sort() sorts in place."
    fake_llm.queue(Reply.text(answer, usage=(250, 21)))

    events, error = await collect(client.plan_stream(system="You are Anton.", messages=HELLO))

    assert error is None
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 3 and "".join(deltas) == answer
    response = events[-1].response
    assert (response.text, response.usage, response.stop_reason) == (answer, Usage(250, 21), "end_turn")
    sent = fake_llm.last_request
    assert (sent.path, sent.model, sent.stream) == ("/v1/chat/completions", "planner", True)
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.messages == [{"role": "system", "content": "You are Anton."}, *HELLO]


async def test_tool_call_round_trip_is_translated_both_ways(client, fake_llm):
    arguments = {"text": "The project uses Postgres 16."}
    fake_llm.queue(Reply.tool_call("memorize", arguments, text_before="Noting that."), Reply.text("Done."))

    events, error = await collect(client.plan_stream(system="sys", messages=HELLO, tools=[MEMORIZE]))

    assert error is None
    call = events[-1].response.tool_calls[0]
    assert (call.name, call.input, call.parse_error) == ("memorize", arguments, None)
    assert ToolUseStart(call.id, "memorize") in events and events[-2] == ToolUseEnd(call.id)
    assert len([e for e in events if isinstance(e, ToolUseDelta)]) >= 2
    assert events[-1].response.stop_reason == "tool_use"
    first = fake_llm.last_request
    assert first.body["tools"] == [
        {"type": "function", "function": {"name": "memorize", "description": MEMORIZE["description"],
                                          "parameters": MEMORIZE["input_schema"]}}
    ]

    result = {"type": "tool_result", "tool_use_id": call.id, "content": "disk full", "is_error": True}
    follow_up = {"role": "user", "content": [result, {"type": "text", "text": "Try again later."}]}
    history = [*HELLO, events[-1].response.to_message(), follow_up]
    events, error = await collect(client.plan_stream(system="sys", messages=history, tools=[MEMORIZE]))

    assert error is None and events[-1].response.text == "Done."
    sent = fake_llm.last_request
    assert sent.rejected is None
    assert sent.messages[2:] == [
        {"role": "assistant", "content": "Noting that.", "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": "memorize", "arguments": '{"text": "The project uses Postgres 16."}'}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "Error: disk full"},
        {"role": "user", "content": "Try again later."},
    ]


async def test_several_tool_calls_in_one_answer_arrive_in_order(client, fake_llm):
    fake_llm.queue(Reply.tool_calls([("memorize", {"text": "a"}), ("scratchpad", {"code": "print(1)"})]))

    events, error = await collect(client.plan_stream(system="", messages=HELLO, tools=[MEMORIZE, RUN]))

    assert error is None
    calls = events[-1].response.tool_calls
    assert [(c.name, c.input) for c in calls] == [("memorize", {"text": "a"}), ("scratchpad", {"code": "print(1)"})]
    order = [(type(e).__name__, getattr(e, "id", None)) for e in events if not isinstance(e, ToolUseDelta)]
    assert order == [("ToolUseStart", calls[0].id), ("ToolUseEnd", calls[0].id),
                     ("ToolUseStart", calls[1].id), ("ToolUseEnd", calls[1].id), ("StreamComplete", None)]


async def test_broken_tool_arguments_are_reported_not_raised(client, fake_llm):
    fake_llm.queue(Reply.malformed_tool_call("scratchpad", '{"code": "print(1)'))

    response = await client.plan(system="", messages=HELLO, tools=[RUN])

    call = response.tool_calls[0]
    assert call.input == {} and "not valid JSON" in call.parse_error


async def test_forced_tool_choice_becomes_a_function_choice(client, fake_llm):
    fake_llm.queue(Reply.tool_call("memorize", {"text": "x"}))

    await client.code(system="", messages=HELLO, tools=[MEMORIZE], tool_choice={"type": "tool", "name": "memorize"})

    assert fake_llm.last_request.tool_choice == {"type": "function", "function": {"name": "memorize"}}


async def test_rate_limit_then_success_is_retried(client, fake_llm):
    fake_llm.queue(Reply.error(429, retry_after_ms=10), Reply.text("Recovered."))

    events, error = await collect(client.plan_stream(system="", messages=HELLO))

    assert error is None and events[-1].response.text == "Recovered."
    assert len(fake_llm.requests) == 2


async def test_server_errors_are_retried_until_one_succeeds(client, fake_llm):
    fake_llm.queue(Reply.error(503), Reply.error(500), Reply.text("Third time."))

    response = await client.code(system="", messages=HELLO)

    assert response.text == "Third time." and len(fake_llm.requests) == 3


async def test_connection_dropped_mid_stream_keeps_the_partial_text(client, fake_llm):
    full = "Step one: open the file. Step two: read every line. Step three: count them."
    fake_llm.queue(Reply.drop_after_chunks(2, text=full))

    events, error = await collect(client.plan_stream(system="", messages=HELLO))

    received = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert error is not None and error.kind == "connection"
    assert error.partial_text == received and received and full.startswith(received) and received != full
    assert not any(isinstance(e, StreamComplete) for e in events)
    assert "(planner): the connection dropped mid-answer" in str(error)
    assert len(fake_llm.requests) == 1


async def test_rejected_key_says_how_to_set_it(client, fake_llm):
    fake_llm.queue(Reply.error(401))

    with pytest.raises(LLMError) as caught:
        await client.plan(system="", messages=HELLO)

    message = str(caught.value)
    assert caught.value.kind == "auth" and "(planner): the API key was rejected" in message
    assert "ANTON_OPENAI_API_KEY" in message and "/setup" in message
    assert len(fake_llm.requests) == 1


async def test_compatible_server_without_a_key_works(fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = OpenAIProvider(api_key=None, base_url=fake_llm.openai_base_url, retry=fast_retry_policy())
    llm = LLMClient(ModelRole(provider, "llama3.1:8b", 512))
    fake_llm.queue(Reply.text("Local model here."))

    response = await llm.plan(system="", messages=HELLO)
    await llm.aclose()

    assert response.text == "Local model here."
    sent = fake_llm.last_request
    assert sent.model == "llama3.1:8b" and sent.api_key == "not-needed"
    assert sent.body["max_tokens"] == 512 and "max_completion_tokens" not in sent.body
    assert provider.display_name == f"OpenAI-compatible server at {fake_llm.openai_base_url}"


async def test_official_openai_needs_a_key_and_uses_max_completion_tokens(fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keyless = OpenAIProvider(api_key=None, base_url=fake_llm.openai_base_url, compatible=False)
    with pytest.raises(LLMError) as caught:
        await LLMClient(ModelRole(keyless, "gpt-5")).plan(system="", messages=HELLO)
    assert caught.value.kind == "auth" and str(caught.value).startswith("OpenAI (gpt-5): no API key is set")
    assert "ANTON_OPENAI_API_KEY" in str(caught.value) and fake_llm.requests == []

    keyed = OpenAIProvider(api_key="sk-real", base_url=fake_llm.openai_base_url, compatible=False)
    fake_llm.queue(Reply.text("hi"))
    await LLMClient(ModelRole(keyed, "gpt-5", 300)).plan(system="", messages=HELLO)
    await keyed.aclose()
    assert fake_llm.last_request.body["max_completion_tokens"] == 300
    assert "max_tokens" not in fake_llm.last_request.body


async def test_from_settings_reaches_the_compatible_server_with_the_settings_key(fake_llm):
    settings = SimpleNamespace(
        planning_provider="openai-compatible", planning_model="qwen2.5", coding_provider="openai",
        coding_model="qwen2.5-small", max_tokens=700, anthropic_api_key=None, anthropic_base_url=None,
        openai_api_key=SecretStr("local-secret"), openai_base_url=fake_llm.openai_base_url,
    )
    llm = LLMClient.from_settings(settings)
    fake_llm.queue(Reply.text("plan"), model="qwen2.5")
    fake_llm.queue(Reply.text("code"), model="qwen2.5-small")

    assert (await llm.code(system="", messages=HELLO)).text == "code"
    assert (await llm.plan(system="", messages=HELLO)).text == "plan"
    await llm.aclose()

    assert [(r.model, r.api_key, r.max_tokens) for r in fake_llm.requests] == [
        ("qwen2.5-small", "local-secret", 700), ("qwen2.5", "local-secret", 700)]


async def test_compatible_provider_without_base_url_explains_the_fix():
    settings = SimpleNamespace(planning_provider="openai-compatible", planning_model="m",
                               coding_provider="openai-compatible", coding_model="m", max_tokens=10,
                               openai_api_key=None, openai_base_url=None)

    with pytest.raises(LLMError) as caught:
        await LLMClient.from_settings(settings).code(system="", messages=HELLO)

    assert caught.value.kind == "config" and "ANTON_OPENAI_BASE_URL" in str(caught.value)
