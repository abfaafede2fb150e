"""A fake Anthropic/OpenAI server for tests: scripted replies, recorded requests, real HTTP."""

from tests.fakellm.script import RecordedRequest, Reply, ToolCallSpec
from tests.fakellm.server import FakeLLMServer, fast_retry_policy
from tests.fakellm.wire import split_chunks

__all__ = ["FakeLLMServer", "RecordedRequest", "Reply", "ToolCallSpec", "fast_retry_policy", "split_chunks"]
