"""The `fake_llm` pytest fixture: a fresh fake LLM server per test, stopped afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakellm.server import FakeLLMServer


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
