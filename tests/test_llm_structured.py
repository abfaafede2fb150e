"""Structured output: forced tool calls validated into pydantic models, with one firmer retry."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from anton_tui.llm import LLMError
from anton_tui.llm.structured import build_structured_tool, unwrap_structured_response
from tests.fakellm import FakeLLMServer, Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401

ASK = [{"role": "user", "content": "Alice is a data engineer in Berlin who prefers Polars."}]


class Identity(BaseModel):
    """Facts about the user worth keeping."""

    name: str
    role: str
    city: str | None = None


class Fact(BaseModel):
    text: str
    confidence: str = Field(pattern="^(low|medium|high)$")


FORCED = {
    "anthropic": lambda name: {"type": "tool", "name": name},
    "openai": lambda name: {"type": "function", "function": {"name": name}},
}


@pytest.fixture(params=["anthropic", "openai"])
async def client(request, fake_llm: FakeLLMServer):  # noqa: F811
    llm = fake_llm.llm_client(provider=request.param, max_tokens=4096)
    llm.api = request.param
    yield llm
    await llm.aclose()


async def test_generate_object_forces_the_tool_and_validates_the_answer(client, fake_llm):
    fake_llm.queue(Reply.tool_call("Identity", {"name": "Alice", "role": "data engineer", "city": "Berlin"}))

    identity = await client.generate_object(Identity, system="Extract the user's identity.", messages=ASK)

    assert identity == Identity(name="Alice", role="data engineer", city="Berlin")
    sent = fake_llm.last_request
    assert sent.model == "planner" and sent.tool_names == ["Identity"]
    assert sent.tool_choice == FORCED[client.api]("Identity")
    assert sent.max_tokens == 4096
    tool = sent.body["tools"][0]
    schema = tool["input_schema"] if client.api == "anthropic" else tool["function"]["parameters"]
    assert schema == Identity.model_json_schema()


async def test_a_list_of_models_comes_back_through_an_items_wrapper(client, fake_llm):
    facts = [{"text": "prefers Polars", "confidence": "high"}, {"text": "lives in Berlin", "confidence": "medium"}]
    fake_llm.queue(Reply.tool_call("Fact_array", {"items": facts}), model="coder")

    result = await client.generate_object_code(list[Fact], system="List facts.", messages=ASK, max_tokens=300)

    assert result == [Fact(**f) for f in facts]
    sent = fake_llm.last_request
    assert sent.model == "coder" and sent.tool_choice == FORCED[client.api]("Fact_array")
    assert sent.max_tokens == 300


async def test_text_instead_of_the_tool_is_retried_once_with_a_bigger_budget(client, fake_llm):
    fake_llm.queue(
        Reply.text("Sure! Alice is a data engineer based in Berlin."),
        Reply.tool_call("Identity", {"name": "Alice", "role": "data engineer"}),
    )

    identity = await client.generate_object(Identity, system="Extract.", messages=ASK, max_tokens=512)

    assert identity.name == "Alice"
    first, second = fake_llm.requests
    assert (first.max_tokens, second.max_tokens) == (512, 1024)
    assert second.tool_choice == FORCED[client.api]("Identity")
    assert second.system.startswith("Extract.") and "only by calling the Identity tool" in second.system
    assert second.messages[-1] == first.messages[-1]


async def test_text_twice_raises_one_clear_error(client, fake_llm):
    fake_llm.queue(Reply.text("Alice, data engineer."), Reply.text("As I said: Alice."))

    with pytest.raises(LLMError) as caught:
        await client.generate_object(Identity, system="Extract.", messages=ASK, max_tokens=512)

    error = caught.value
    assert error.kind == "structured_output" and error.model == "planner"
    message = str(error)
    assert message.startswith(("Anthropic (planner):", "OpenAI-compatible server at"))
    assert "answered with text instead of calling the Identity tool" in message and "\n" not in message
    assert len(fake_llm.requests) == 2


async def test_a_tool_call_cut_off_at_max_tokens_is_retried(client, fake_llm):
    fake_llm.queue(
        Reply.malformed_tool_call("Identity", '{"name": "Alice", "ro', stop_reason="max_tokens"),
        Reply.tool_call("Identity", {"name": "Alice", "role": "engineer"}),
    )

    identity = await client.generate_object(Identity, system="", messages=ASK, max_tokens=64)

    assert identity.role == "engineer"
    assert [r.max_tokens for r in fake_llm.requests] == [64, 128]


async def test_a_schema_mismatch_is_retried_with_the_validation_problem_named(client, fake_llm):
    fake_llm.queue(
        Reply.tool_call("Fact_array", {"items": [{"text": "likes tea", "confidence": "very"}]}),
        Reply.tool_call("Fact_array", {"items": [{"text": "likes tea", "confidence": "high"}]}),
    )

    facts = await client.generate_object(list[Fact], system="Facts.", messages=ASK)

    assert facts == [Fact(text="likes tea", confidence="high")]
    retry = fake_llm.requests[1]
    assert "did not match the schema" in retry.system and "items.0.confidence" in retry.system
    assert retry.max_tokens == 8192  # doubled from the role's 4096


async def test_a_refused_forced_tool_choice_falls_back_to_asking(client, fake_llm):
    fake_llm.queue(
        Reply.error(400, "tool_choice of type 'tool' is not supported by this model"),
        Reply.tool_call("Identity", {"name": "Alice", "role": "engineer"}),
    )

    identity = await client.generate_object(Identity, system="", messages=ASK)

    assert identity.name == "Alice"
    refused, retry = fake_llm.requests
    assert refused.tool_choice is not None and retry.tool_choice is None
    assert retry.tool_names == ["Identity"] and "only by calling the Identity tool" in retry.system


def test_structured_tool_helpers_round_trip_a_list():
    tool, validator, is_list = build_structured_tool(list[Identity])

    assert is_list and tool["name"] == "Identity_array"
    assert tool["input_schema"]["required"] == ["items"]
    assert "Facts about the user" in tool["description"]
    value = unwrap_structured_response({"items": [{"name": "A", "role": "B"}]}, validator, is_list)
    assert value == [Identity(name="A", role="B")]
    with pytest.raises(TypeError):
        build_structured_tool(dict)
