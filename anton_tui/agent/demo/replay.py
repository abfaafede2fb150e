"""A model provider that replays a recorded conversation instead of calling an API.

It is stateless: the position in the recording is read from the request itself (how many user prompts so far,
how many model answers since the last one), so the real session, tools and scratchpads run exactly as they would
with a live model. Structured-output requests (the learning loops) are answered from the recording by tool name.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

from anton_tui.llm.errors import LLMError
from anton_tui.llm.events import LLMResponse, StreamComplete, StreamEvent, Usage
from anton_tui.llm.provider import LLMRequest, ResponseBuilder

END_OF_RECORDING = (
    "That is the end of the recorded demo. To talk to the real agent, open /setup, add an API key, and start "
    "`anton-tui` again."
)


def _is_user_prompt(message: dict[str, Any]) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content or [])


def position(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(turn index, round index within the turn) of the answer the request asks for."""
    prompts = [i for i, message in enumerate(messages) if _is_user_prompt(message)]
    if not prompts:
        return 0, 0
    answers = sum(1 for message in messages[prompts[-1] :] if message.get("role") == "assistant")
    return len(prompts) - 1, answers


class ReplayProvider:
    name = "demo"
    display_name = "Demo replay"

    def __init__(self, recording: dict[str, Any], *, chunk_delay: float = 0.015) -> None:
        self.recording = recording
        self.chunk_delay = chunk_delay

    def user_prompt(self, turn_index: int) -> str | None:
        turns = self.recording["turns"]
        return turns[turn_index]["user"] if turn_index < len(turns) else None

    def _round(self, request: LLMRequest) -> dict[str, Any]:
        turn, answer = position(request.messages)
        turns = self.recording["turns"]
        if turn < len(turns) and answer < len(turns[turn]["rounds"]):
            return turns[turn]["rounds"][answer]
        return {"text": END_OF_RECORDING, "tool_calls": []}

    def _structured(self, request: LLMRequest) -> dict[str, Any]:
        name = (request.tool_choice or {}).get("name", "")
        recorded = self.recording.get("structured", {})
        if name not in recorded:
            raise LLMError(
                provider=self.display_name,
                model=request.model,
                kind="structured_output",
                message=f"the recording has no answer for '{name}'",
            )
        return {"text": "", "tool_calls": [{"name": name, "input": recorded[name]}]}

    async def stream(self, request: LLMRequest) -> AsyncGenerator[StreamEvent, None]:
        forced = (request.tool_choice or {}).get("type") == "tool"
        reply = self._structured(request) if forced else self._round(request)
        builder = ResponseBuilder()
        words = reply["text"].split(" ")
        for i, word in enumerate(words):
            yield builder.add_text(word if i == len(words) - 1 else word + " ")
            if self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
        turn, answer = position(request.messages)
        for n, call in enumerate(reply["tool_calls"]):
            tool_id = f"toolu_demo_{turn}_{answer}_{n}"
            yield builder.start_tool(tool_id, call["name"])
            yield builder.add_tool_json(tool_id, json.dumps(call["input"]))
            yield builder.end_tool(tool_id)
        builder.input_tokens = sum(len(json.dumps(m)) for m in request.messages) // 4
        builder.output_tokens = len(json.dumps(reply)) // 4
        yield StreamComplete(builder.finish())

    async def complete(self, request: LLMRequest) -> LLMResponse:
        response = LLMResponse("", [], Usage())
        async for event in self.stream(request):
            if isinstance(event, StreamComplete):
                response = event.response
        return response

    async def aclose(self) -> None:
        return None
