"""Shared fixtures: every test runs against a temporary ANTON_HOME and project folder, never the user's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def anton_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "anton-home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    for key in list(os.environ):
        if key.startswith("ANTON_") or key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ANTON_HOME", str(home))
    monkeypatch.setenv("ANTON_PROJECT_DIR", str(project))
    # Skills of other tools are read from the home folder (~/.claude/skills, ~/.agents/skills): point it at an empty
    # one, keeping the real download caches so package installs stay warm.
    real_home = Path.home()
    for key, default in (("XDG_CACHE_HOME", real_home / ".cache"), ("UV_CACHE_DIR", real_home / ".cache" / "uv")):
        monkeypatch.setenv(key, os.environ.get(key, str(default)))
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    return home


@pytest.fixture
def project_dir(anton_home: Path) -> Path:
    return Path(os.environ["ANTON_PROJECT_DIR"])


from tests.fakellm.fixtures import fake_llm  # noqa: E402,F401  (the scripted local LLM server)
from tests.sync_machines import bare, pair  # noqa: E402,F401  (two machines sharing memory through a bare repository)
