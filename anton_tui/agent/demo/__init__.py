"""The demo: a recorded conversation replayed through the real session, in a throw-away home and project folder.

It keeps the user's copilot mode (so its confirmation modal shows) and otherwise runs in autopilot, since it is there
to show memory at work. Nothing touches the user's own `~/.anton`: the demo gets a temporary home (with one saved skill to recall) and a
temporary project folder where its scratchpad cells really run and its memories are really written.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.agent.demo.replay import ReplayProvider
    from anton_tui.agent.session import ChatSession
    from anton_tui.config import Settings

DEMO_MODEL = "recorded-demo"
DEMO_BANNER = "Demo replay: the model's side of this conversation is a recording. The code really runs."


def load_recording() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("recording.json").read_text(encoding="utf-8"))


@dataclass
class DemoSession:
    session: ChatSession
    provider: ReplayProvider
    settings: Settings
    root: Path
    stores: Any = None
    _next_turn: int = field(default=0, repr=False)

    def next_prompt(self) -> str | None:
        """The next recorded user message, to pre-fill the prompt with."""
        return self.provider.user_prompt(self.session.turn_count)

    async def close(self) -> None:
        await self.session.close()
        shutil.rmtree(self.root, ignore_errors=True)


def _seed_skill(skills_dir: Path, recorded: dict[str, Any]) -> None:
    from anton_tui.memory.skills.store import Skill, SkillStore

    SkillStore(skills_dir).save(Skill(**recorded))


def build_demo(settings: Settings, *, chunk_delay: float = 0.015) -> DemoSession:
    from anton_tui.agent.demo.replay import ReplayProvider
    from anton_tui.agent.factory import build_session
    from anton_tui.llm.client import LLMClient, ModelRole
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.paths import AntonPaths

    recording = load_recording()
    root = Path(tempfile.mkdtemp(prefix="anton-demo-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)  # also when the app does not close cleanly
    home, project = root / "home", root / "project"
    home.mkdir()
    project.mkdir()
    demo_settings = settings.model_copy(
        update={
            "home": home,
            "project_dir": project,
            "memory_mode": "copilot" if settings.memory_mode == "copilot" else "autopilot",
            "memory_enabled": True,
            "episodic_memory": True,
            "acc_mode": "active",
            "planning_model": DEMO_MODEL,
            "coding_model": DEMO_MODEL,
        }
    )
    _seed_skill(home / "skills", recording["skill"])
    provider = ReplayProvider(recording, chunk_delay=chunk_delay)
    role = ModelRole(provider, DEMO_MODEL, 4096)
    stores = MemoryStores.from_paths(AntonPaths.from_settings(demo_settings))
    session = build_session(demo_settings, llm=LLMClient(role, role), stores=stores)
    return DemoSession(session=session, provider=provider, settings=demo_settings, root=root, stores=stores)
