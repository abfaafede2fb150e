"""Provider-neutral access to the planning and coding models (Anthropic and OpenAI-compatible)."""

from anton_tui.llm.client import LLMClient, ModelRole
from anton_tui.llm.errors import LLMError
from anton_tui.llm.events import (
    LLMResponse,
    StreamComplete,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolUseDelta,
    ToolUseEnd,
    ToolUseStart,
    Usage,
)
from anton_tui.llm.provider import LLMProvider, LLMRequest, RetryPolicy

__all__ = [
    "LLMClient",
    "LLMError",
    "LLMProvider",
    "LLMRequest",
    "LLMResponse",
    "ModelRole",
    "RetryPolicy",
    "StreamComplete",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolUseDelta",
    "ToolUseEnd",
    "ToolUseStart",
    "Usage",
]
