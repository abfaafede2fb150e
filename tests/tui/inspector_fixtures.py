"""Memory files in Anton's own format, written into temp folders, and a small app that shows the inspector.

Dates are fixed in the files so screenshots and assertions do not depend on the day the tests run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input

from anton_tui.paths import AntonPaths
from anton_tui.memory.stores import MemoryStores
from anton_tui.runtime import Runtime
from anton_tui.tui.widgets.inspector import InspectorPane

from ..runtime_sessions import QuietSession
from .app_support import AppSettings

GLOBAL_RULES = """\
# Rules

## Always
- Use httpx instead of requests <!-- confidence:high source:user ts:2026-11-22 -->
- Keep scratchpad cells small and print progress <!-- confidence:medium source:llm ts:2026-11-20 -->

## Never
- Never print credentials <!-- confidence:high source:user ts:2026-11-21 -->

## When
"""

PROJECT_RULES = """\
# Rules

## Always

## Never

## When
- If paginated API → use async + progress() <!-- confidence:medium source:consolidation ts:2026-11-22 -->
"""

GLOBAL_LESSONS = """\
# Lessons
- pandas read_csv needs encoding='utf-8-sig' for BOM files <!-- ts:2026-11-18 -->
"""

PROJECT_LESSONS = """\
# Lessons
- CoinGecko rate-limits at 50/min <!-- topic:api-coingecko ts:2026-11-22 -->
- scratchpad cells should call progress() <!-- topic:scratchpad ts:2026-11-22 -->
- The sales CSV uses semicolons as separators <!-- topic:data ts:2026-11-19 -->
"""

GLOBAL_PROFILE = """\
# Profile
- Name: Jorge
- Timezone: PST
- Works mostly in Python
"""

SESSION = "20261122_042512"
EPISODES = [
    ("2026-11-22T04:25:12.244081+00:00", 1, "user", "Fetch bitcoin prices for last week", {}),
    ("2026-11-22T04:25:12.244732+00:00", 1, "tool_call", "{'action': 'exec', 'name': 'main', 'code': 'print(1)'}",
     {"tool": "scratchpad", "datasources": []}),
    ("2026-11-22T04:25:12.244846+00:00", 1, "scratchpad", "1\n", {"description": "print one"}),
    ("2026-11-22T04:25:13.100000+00:00", 1, "assistant",
     "Bitcoin closed at 91,200 USD on Friday.\nThe week's low was on Monday.", {}),
    ("2026-11-22T04:26:40.000000+00:00", 2, "user", "thanks, now plot ethereum", {}),
    ("2026-11-22T04:26:41.000000+00:00", 2, "assistant", "Here is the ethereum chart.", {}),
]  # fmt: skip


def stage(recommended: int = 0, used: int = 0, last_used: str = "") -> dict:
    return {"recommended": recommended, "used": used, "last_used": last_used, "confidence": 0.0}


def write_anton_skill(root: Path, label: str, name: str, when: str, recalls: int, stages: list[dict]) -> None:
    folder = root / label
    folder.mkdir(parents=True)
    meta = {
        "label": label, "name": name, "description": f"{name} procedure", "when_to_use": when,
        "created_at": "2026-11-01T09:00:00+00:00", "provenance": "manual",
        "stage_1_present": True, "stage_2_present": False, "stage_3_present": False,
    }  # fmt: skip
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    (folder / "declarative.md").write_text("1. Load\n2. describe()")
    stats = {"total_recalls": recalls, **{f"stage_{n}": s for n, s in enumerate(stages, start=1)}}
    (folder / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")


def write_skill_md(root: Path, label: str, description: str, recalls: int, stages: list[dict]) -> None:
    folder = root / label
    folder.mkdir(parents=True)
    display_name = label.replace("-", " ").title()
    (folder / "SKILL.md").write_text(
        f"---\nname: {label}\ndescription: {description}\nmetadata:\n  display_name: {display_name}\n"
        "  provenance: manual\n  created_at: '2026-11-02T10:00:00+00:00'\n---\n1. Fetch\n2. Plot"
    )
    stats = {"total_recalls": recalls, **{f"stage_{n}": s for n, s in enumerate(stages, start=1)}}
    (folder / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")


def seed_memory(paths: AntonPaths) -> None:
    paths.global_memory.mkdir(parents=True, exist_ok=True)
    paths.project_memory.mkdir(parents=True, exist_ok=True)
    (paths.global_memory / "rules.md").write_text(GLOBAL_RULES)
    (paths.project_memory / "rules.md").write_text(PROJECT_RULES)
    (paths.global_memory / "lessons.md").write_text(GLOBAL_LESSONS)
    (paths.project_memory / "lessons.md").write_text(PROJECT_LESSONS)
    (paths.global_memory / "profile.md").write_text(GLOBAL_PROFILE)


def seed_skills(paths: AntonPaths) -> None:
    empty = stage()
    csv_stages = [stage(1, 0, "2026-11-22T04:23:52.710133+00:00"), empty, empty]
    scrape_stages = [stage(4, 3, "2026-11-20T08:00:00+00:00"), stage(2, 1, "2026-11-21T08:00:00+00:00"), empty]
    chart_stages = [stage(3, 2, "2026-11-19T12:30:00+00:00"), empty, stage(1, 1, "2026-11-19T12:31:00+00:00")]
    write_anton_skill(paths.skills, "csv_summary", "CSV Summary", "user asks to summarize a csv", 1, csv_stages)
    write_anton_skill(paths.skills, "web_scrape", "Web scraping", "user wants data from a web page", 7, scrape_stages)
    write_skill_md(paths.skills, "btc-chart", "Plot a price chart. user asks for a chart", 3, chart_stages)


def seed_episodes(paths: AntonPaths) -> None:
    paths.episodes.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"ts": ts, "session": SESSION, "turn": turn, "role": role, "content": content, "meta": meta},
                   ensure_ascii=False)
        for ts, turn, role, content, meta in EPISODES
    ]  # fmt: skip
    (paths.episodes / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def seeded_stores(tmp_path: Path, *, skills: bool = True, episodes: bool = True) -> MemoryStores:
    paths = AntonPaths(tmp_path / "home", tmp_path / "project")
    seed_memory(paths)
    if skills:
        seed_skills(paths)
    if episodes:
        seed_episodes(paths)
    return MemoryStores.from_paths(paths)


def runtime_over(stores: MemoryStores) -> Runtime:
    """A Runtime over `stores` whose session is never asked anything: the inspector only reads memory."""
    return Runtime(AppSettings(stores.paths.home, stores.paths.project_dir), QuietSession(), stores=stores)


class InspectorHost(App):
    """The inspector alone on a screen; records notifications so tests can read what the user was told."""

    def __init__(self, stores: MemoryStores) -> None:
        super().__init__()
        self.stores = stores
        self.notes: list[tuple[str, str, str]] = []  # (severity, title, message)

    def compose(self) -> ComposeResult:
        yield InspectorPane(runtime_over(self.stores), id="inspector")

    @property
    def pane(self) -> InspectorPane:
        return self.query_one(InspectorPane)

    def notify(self, message, *, title="", severity="information", **kwargs) -> None:
        self.notes.append((severity, str(title), str(message)))
        super().notify(message, title=title, severity=severity, **kwargs)


async def settle(pilot: Pilot) -> None:
    """Wait until every worker finished and its message was applied; switch off cursor blinking."""
    app = pilot.app
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()
    for field in app.query(Input):
        field.cursor_blink = False
    await pilot.pause()


async def wait_until(pilot: Pilot, condition, timeout: float = 3.0, step: float = 0.05) -> float:
    """Pause in small steps until `condition()` holds; returns the seconds it took (fails after `timeout`)."""
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(step)
    return time.perf_counter() - start


def table_rows(table) -> list[list[str]]:
    """What a DataTable shows, as plain strings per cell."""
    return [[str(value) for value in table.get_row_at(index)] for index in range(table.row_count)]


def column(table, index: int) -> list[str]:
    return [row[index] for row in table_rows(table)]


async def type_text(pilot: Pilot, text: str) -> None:
    await pilot.press(*("space" if char == " " else char for char in text))
