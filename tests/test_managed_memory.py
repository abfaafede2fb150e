"""The managed tier (an administrator's read-only memory folder) and the "shared across people" notice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from dulwich.repo import Repo

from anton_tui.memory.sync import syncer as sync
from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.engrams.engram import MemoryFileError
from anton_tui.paths import MANAGED_MEMORY_DEFAULT, managed_dir
from anton_tui.memory.stores import MemoryStores
from anton_tui.paths import AntonPaths

MANAGED_RULES = "# Rules\n\n## Always\n- Ask before deleting customer data <!-- ts:2026-11-01 -->\n"
MANAGED_LESSONS = "- The staging db is reset nightly <!-- ts:2026-11-01 -->\n"


@pytest.fixture
def managed(tmp_path: Path) -> Path:
    folder = tmp_path / "etc-anton-memory"
    folder.mkdir()
    (folder / "rules.md").write_text(MANAGED_RULES)
    (folder / "lessons.md").write_text(MANAGED_LESSONS)
    (folder / "profile.md").write_text("- Name: Administrator\n")
    return folder


def stores_with(anton_home: Path, project_dir: Path, folder: Path | None) -> MemoryStores:
    return MemoryStores.from_paths(AntonPaths(anton_home, project_dir), managed_dir=folder)


def cortex_of(stores: MemoryStores) -> Cortex:
    return Cortex(stores.global_hc, stores.project_hc, managed_hc=stores.managed, shared=stores.shared)


def test_the_setting_and_the_system_wide_default(tmp_path: Path) -> None:
    assert managed_dir("/srv/team-memory") == Path("/srv/team-memory")
    assert managed_dir("off", system_default=tmp_path) is None
    assert managed_dir(None, system_default=tmp_path) == tmp_path  # the default folder exists: used
    assert managed_dir(None, system_default=tmp_path / "absent") is None
    assert MANAGED_MEMORY_DEFAULT == Path("/etc/anton/memory")


def test_managed_rules_and_lessons_come_first_with_the_precedence_line(anton_home, project_dir, managed) -> None:
    stores = stores_with(anton_home, project_dir, managed)
    stores.global_hc.encode_rule("use uv", "always")
    stores.global_hc.rewrite_identity(["Name: Ada"])
    text = cortex_of(stores).build_memory_context()
    order = [text.index(h) for h in ("## Learned memory status", "## Operator Memory — Rules",
                                     "## Operator Memory — Lessons", "## Shared Memory — Identity",
                                     "## Shared Memory — Global Rules")]  # fmt: skip
    assert order == sorted(order)
    assert "win over Shared Memory when the two conflict" in text
    assert text.count("apply to everyone and win over") == 1, "the line goes under the first operator heading only"
    assert "Ask before deleting customer data" in text and "staging db is reset nightly" in text
    assert "Administrator" not in text, "the managed profile.md is never read"
    assert "Learned memory is shared across people" in text


def test_no_notice_and_your_memory_without_sharing(anton_home, project_dir) -> None:
    stores = stores_with(anton_home, project_dir, None)
    stores.global_hc.encode_rule("use uv", "always")
    text = cortex_of(stores).build_memory_context()
    assert "## Your Memory — Global Rules" in text
    assert "Learned memory status" not in text and "Operator Memory" not in text


def test_a_scope_with_a_remote_brings_the_shared_notice(anton_home, project_dir, tmp_path) -> None:
    stores = stores_with(anton_home, project_dir, None)
    stores.global_hc.encode_lesson("the VPN drops hourly")
    cortex = cortex_of(stores)
    assert "Learned memory status" not in cortex.build_memory_context()
    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    sync.add_remote(stores, "global", str(bare))
    text = cortex.build_memory_context()
    assert text.lstrip().startswith("## Learned memory status\nLearned memory is shared across people")
    assert "The shared store contains saved memories" in text
    assert "## Shared Memory — Global Lessons" in text
    sync.remove_remote(stores, "global")
    assert "Learned memory status" not in cortex.build_memory_context()


def test_managed_memory_is_never_written(anton_home, project_dir, managed) -> None:
    stores = stores_with(anton_home, project_dir, managed)
    before = {p.name: p.read_bytes() for p in managed.iterdir()}
    cortex = cortex_of(stores)
    cortex.encode([Engram("Ask before deleting customer data twice", "always", "global"),
                   Engram("a lesson", "lesson", "project")])  # fmt: skip
    with pytest.raises(MemoryFileError, match="read-only"):
        stores.managed.encode_lesson("sneaked in")
    with pytest.raises(MemoryFileError):
        stores.managed.replace_bytes("rules", lambda _data: b"")
    assert [label for label, _hc in cortex.scopes()] == ["Global", "Project"], "compaction never sees it"
    assert {p.name: p.read_bytes() for p in managed.iterdir()} == before
    assert not (managed / ".git").exists()


def test_scratchpad_wisdom_puts_the_operator_first(anton_home, project_dir, managed) -> None:
    (managed / "lessons.md").write_text("- In the scratchpad, pin pandas to 2.2 <!-- ts:2026-11-01 -->\n")
    stores = stores_with(anton_home, project_dir, managed)
    stores.global_hc.encode_lesson("scratchpad cells time out after 2 minutes")
    wisdom = cortex_of(stores).get_scratchpad_context()
    assert wisdom.index("Operator (applies to everyone, wins on conflict):") < wisdom.index("pin pandas")
    assert wisdom.index("pin pandas") < wisdom.index("Your own:") < wisdom.index("time out after 2 minutes")


async def test_the_timer_syncs_shared_scopes_on_its_own(anton_home, project_dir, tmp_path) -> None:
    from types import SimpleNamespace

    from anton_tui.runtime import Runtime

    from tests.runtime_sessions import QuietSession

    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    stores = stores_with(anton_home, project_dir, None)
    stores.global_hc.encode_lesson("shared by the timer")
    sync.add_remote(stores, "global", str(bare))
    off = Runtime(SimpleNamespace(home=anton_home, project_dir=project_dir, memory_sync_minutes=0), QuietSession(),
                  stores=stores)  # fmt: skip
    await off.sync.start()
    assert not off.sync.timer_running, "off by default"
    runtime = Runtime(SimpleNamespace(home=anton_home, project_dir=project_dir, memory_sync_minutes=1), QuietSession(),
                      stores=stores)  # fmt: skip
    await runtime.sync.start()
    assert runtime.sync.timer_running, "on when set"
    await runtime.sync.stop()
    runtime.sync.start_timer(0.05)  # the same timer with a short period
    for _ in range(200):
        if runtime.sync.last:
            break
        await asyncio.sleep(0.05)
    await runtime.sync.stop()
    assert (bare / "refs" / "heads" / "main").exists()
    assert runtime.sync.last and runtime.sync.last[0].pushed


async def test_a_timed_sync_that_holds_back_a_secret_says_so_in_the_chat(anton_home, project_dir, tmp_path) -> None:
    from types import SimpleNamespace

    from anton_tui.agent.events import MemorySynced
    from anton_tui.runtime import Runtime

    from tests.runtime_sessions import QuietSession

    class Session(QuietSession):
        def __init__(self) -> None:
            super().__init__()
            self.background_events: asyncio.Queue = asyncio.Queue()

    bare = tmp_path / "team.git"
    bare.mkdir()
    Repo.init_bare(str(bare)).close()
    stores = stores_with(anton_home, project_dir, None)
    stores.global_hc.lessons_path.parent.mkdir(parents=True, exist_ok=True)
    stores.global_hc.lessons_path.write_text("- deploy with token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n")
    sync.add_remote(stores, "global", str(bare))
    session = Session()
    runtime = Runtime(SimpleNamespace(home=anton_home, project_dir=project_dir), session, stores=stores)
    runtime.sync.start_timer(0.05)
    event = await asyncio.wait_for(session.background_events.get(), 30)
    await runtime.sync.stop()
    assert isinstance(event, MemorySynced) and not event.ok
    assert "secret held back" in event.line
    assert "lessons.md:1" in event.detail and "ghp_" not in event.detail and "keep-local" in event.detail
    assert not (bare / "refs" / "heads" / "main").exists()


async def test_the_model_request_carries_the_operator_memory_first(fake_llm, anton_home, project_dir, managed) -> None:
    from tests.fakellm import Reply
    from tests.session_helpers import PLANNER, make_session, run_turn

    session = make_session(fake_llm, managed_memory=str(managed))
    session.cortex.global_hc.encode_rule("Answer in French", "always", "high", "user")
    fake_llm.queue(Reply.text("ok"), model=PLANNER)
    await run_turn(session, "hello")
    system = fake_llm.requests_for(PLANNER)[0].system
    assert system.index("## Learned memory status") < system.index("## Operator Memory — Rules")
    assert system.index("Ask before deleting customer data") < system.index("Answer in French")
    assert "## Shared Memory — Global Rules" in system
    await session.close()


@pytest.mark.parametrize("in_managed", [True, False])
async def test_the_acc_does_not_write_a_rule_the_operator_already_set(fake_llm, anton_home, project_dir, managed,
                                                                      in_managed: bool) -> None:  # fmt: skip
    from anton_tui.memory.learners.acc import AnteriorCingulate
    from tests.session_helpers import make_session

    probe = AnteriorCingulate()
    probe.observe("cap_exhausted", {"cap": 25}, severity=9)
    rule = probe.at_end_of_turn()[0].rule
    if in_managed:
        (managed / "rules.md").write_text(f"# Rules\n\n## Always\n- {rule} <!-- ts:2026-11-01 -->\n")
    session = make_session(fake_llm, managed_memory=str(managed), acc_mode="passive")
    session.acc_feedback.acc.observe("cap_exhausted", {"cap": 25}, severity=9)
    session.acc_feedback.end_turn()
    written = [e.text for e in session.cortex.global_hc.get_rules()]
    assert (rule in written) is not in_managed
    await session.close()
