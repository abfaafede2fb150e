"""The two wire formats the fake server speaks, and the checks a real API would make first.

Anthropic Messages (`POST /v1/messages`) and OpenAI Chat Completions (`POST /v1/chat/completions`),
each streamed as server-sent events in the API's own event shapes or answered as one JSON body.
Requests that the real APIs would refuse (a tool result without its tool call, an empty text
block, a forced tool that was never offered) are refused here too, so tests catch them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tests.fakellm.script import Reply, ToolCallSpec

Event = tuple[bytes, bool]  # (encoded SSE event, carries answer content)


def split_chunks(text: str, size: int | None = None) -> list[str]:
    """How a text is cut into streamed pieces: several small ones, at most about eight."""
    if not text:
        return []
    size = size or max(3, -(-len(text) // 8))
    return [text[i : i + size] for i in range(0, len(text), size)]


def arguments_of(call: ToolCallSpec) -> str:
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(call.input)


def parsed_input(call: ToolCallSpec) -> dict[str, Any]:
    if call.raw_arguments is None:
        return call.input
    try:
        value = json.loads(call.raw_arguments)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def usage_for(reply: Reply, body: dict[str, Any]) -> tuple[int, int]:
    if reply.usage is not None:
        return reply.usage
    sent = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("system", "")))
    produced = len(reply.content) + sum(len(arguments_of(c)) for c in reply.calls)
    return max(1, sent // 4), max(1, produced // 4)


def _sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


# -- Anthropic ------------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    400: "invalid request", 401: "invalid x-api-key", 403: "this key may not use this model",
    404: "model not found", 413: "request too large", 429: "rate limit exceeded (scripted)",
    500: "internal server error (scripted)", 503: "service unavailable (scripted)",
    529: "overloaded (scripted)",
}


def anthropic_error(status: int, message: str | None, error_type: str | None = None) -> dict[str, Any]:
    kind = error_type or _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
    text = message or _DEFAULT_MESSAGES.get(status, f"error {status} (scripted)")
    return {"type": "error", "error": {"type": kind, "message": text}, "request_id": f"req_fake_{status}"}


def anthropic_message(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.content:
        content.append({"type": "text", "text": reply.content})
    for call in reply.calls:
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": parsed_input(call)})
    tokens_in, tokens_out = usage_for(reply, body)
    return {
        "id": f"msg_fake_{number:04d}", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": content, "stop_reason": reply.final_stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }


def anthropic_stream(reply: Reply, body: dict[str, Any], number: int) -> list[Event]:
    tokens_in, tokens_out = usage_for(reply, body)
    start = anthropic_message(reply, body, number)
    start.update(content=[], stop_reason=None, usage={"input_tokens": tokens_in, "output_tokens": 1})
    events: list[Event] = [(_sse({"type": "message_start", "message": start}, "message_start"), False)]
    index = 0
    if reply.content:
        events.append((_block_start(index, {"type": "text", "text": ""}), False))
        events.append((_sse({"type": "ping"}, "ping"), False))
        for piece in split_chunks(reply.content, reply.chunk_size):
            delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
            events.append((_sse(delta, "content_block_delta"), True))
        events.append((_block_stop(index), False))
        index += 1
    for call in reply.calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events.append((_block_start(index, block), False))
        for piece in split_chunks(arguments_of(call), max(8, len(arguments_of(call)) // 3)):
            delta = {"type": "content_block_delta", "index": index,
                     "delta": {"type": "input_json_delta", "partial_json": piece}}
            events.append((_sse(delta, "content_block_delta"), True))
        events.append((_block_stop(index), False))
        index += 1
    finish = {"type": "message_delta", "delta": {"stop_reason": reply.final_stop_reason, "stop_sequence": None},
              "usage": {"output_tokens": tokens_out}}
    events.append((_sse(finish, "message_delta"), False))
    events.append((_sse({"type": "message_stop"}, "message_stop"), False))
    return events


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    return _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")


def _block_stop(index: int) -> bytes:
    return _sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def validate_anthropic(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    tool_names = [t.get("name") for t in body.get("tools") or []]
    for t in body.get("tools") or []:
        if not isinstance(t.get("input_schema"), dict) or t["input_schema"].get("type") != "object":
            return f"tools.{t.get('name')}.input_schema: must be a JSON schema of type object"
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name") not in tool_names:
        return f"tool_choice: tool {choice.get('name')!r} is not among the tools offered"
    pending: list[str] = []  # tool_use ids awaiting results in the next user message
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: must be 'user' or 'assistant', got {role!r}"
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if isinstance(content, list) and not content:
            return f"messages.{i}: content must not be empty"
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if pending and (role != "user" or set(pending) - set(results)):
            return (f"messages.{i}: tool_use ids were found without tool_result blocks immediately after: "
                    f"{', '.join(sorted(set(pending) - set(results)))}")
        if set(results) - set(pending):
            return f"messages.{i}: unexpected tool_use_id in tool_result blocks: {sorted(set(results) - set(pending))}"
        for block in blocks:
            if block.get("type") == "text" and isinstance(content, list) and not str(block.get("text", "")).strip():
                return f"messages.{i}: text content blocks must contain non-whitespace text"
        pending = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
    return None


# -- OpenAI ---------------------------------------------------------------------------------

_OPENAI_ERRORS = {
    400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"), 429: ("requests", "rate_limit_exceeded"),
}
_OPENAI_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


def openai_error(status: int, message: str | None, error_type: str | None = None) -> dict[str, Any]:
    kind, code = _OPENAI_ERRORS.get(status, ("server_error", None))
    text = message or _DEFAULT_MESSAGES.get(status, f"error {status} (scripted)")
    if status == 401 and message is None:
        text = "Incorrect API key provided."
    return {"error": {"message": text, "type": error_type or kind, "param": None, "code": code}}


def _openai_tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_of(c)}}
            for c in reply.calls]


def openai_completion(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    tokens_in, tokens_out = usage_for(reply, body)
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None, "refusal": None}
    if reply.calls:
        message["tool_calls"] = _openai_tool_calls(reply)
    return {
        "id": f"chatcmpl-fake-{number:04d}", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": _OPENAI_FINISH.get(reply.final_stop_reason, "stop")}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out},
    }


def openai_stream(reply: Reply, body: dict[str, Any], number: int) -> list[Event]:
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    base = {"id": f"chatcmpl-fake-{number:04d}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model"), "system_fingerprint": None}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if include_usage:
            data["usage"] = None
        return _sse(data)

    events: list[Event] = [(chunk({"role": "assistant", "content": "", "refusal": None}), False)]
    for piece in split_chunks(reply.content, reply.chunk_size):
        events.append((chunk({"content": piece}), True))
    for index, call in enumerate(reply.calls):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        events.append((chunk({"tool_calls": [head]}), False))
        for piece in split_chunks(arguments_of(call), max(8, len(arguments_of(call)) // 3)):
            events.append((chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}), True))
    events.append((chunk({}, _OPENAI_FINISH.get(reply.final_stop_reason, "stop")), False))
    if include_usage:
        tokens_in, tokens_out = usage_for(reply, body)
        usage = {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}
        events.append((_sse({**base, "choices": [], "usage": usage}), False))
    events.append((_sse("[DONE]"), False))
    return events


def validate_openai(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must contain at least one message"
    if body.get("stream_options") is not None and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    tool_names = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    for t in body.get("tools") or []:
        if t.get("type") != "function" or not t.get("function", {}).get("name"):
            return "tools: each tool must be {'type': 'function', 'function': {'name': ...}}"
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("function", {}).get("name") not in tool_names:
        return f"tool_choice: function {choice.get('function', {}).get('name')!r} is not among the tools offered"
    if choice is not None and not body.get("tools"):
        return "'tool_choice' is only allowed when 'tools' are specified"
    pending: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"messages[{i}].role: invalid value {role!r}"
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                return (f"messages[{i}]: messages with role 'tool' must be a response to a preceeding message "
                        "with 'tool_calls'")
            pending.discard(message["tool_call_id"])
            continue
        if pending:
            return (f"messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages "
                    f"responding to each 'tool_call_id'; missing: {', '.join(sorted(pending))}")
        if role == "assistant":
            pending = {c.get("id") for c in message.get("tool_calls") or []}
            if message.get("content") is None and not pending:
                return f"messages[{i}].content: required unless tool_calls is set"
    return None
