"""Builds a ready-to-use ChatSession from settings: memory stores, scratchpads, tools and the learning loops."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anton_tui.agent.context_fit import ContextKeeper
from anton_tui.agent.history_store import HistoryStore
from anton_tui.agent.learning import attach_learning
from anton_tui.agent.session import ChatSession
from anton_tui.agent.tools.memorize import MEMORIZE_TOOL
from anton_tui.agent.tools.recall import RECALL_TOOL
from anton_tui.agent.tools.recall_skill import RECALL_SKILL_TOOL
from anton_tui.agent.tools.registry import ToolRegistry
from anton_tui.agent.tools.scratchpad import SCRATCHPAD_TOOL
from anton_tui.agent.tools.skill_resource import READ_SKILL_RESOURCE_TOOL
from anton_tui.agent.turn_memory import TurnMemory
from anton_tui.redact import Redactor

if TYPE_CHECKING:
    from pydantic import SecretStr

    from anton_tui.config import Settings
    from anton_tui.llm.client import LLMClient
    from anton_tui.memory.stores import MemoryStores


def build_tools(*, episodic_enabled: bool) -> ToolRegistry:
    tools = [SCRATCHPAD_TOOL, MEMORIZE_TOOL, RECALL_SKILL_TOOL, READ_SKILL_RESOURCE_TOOL]
    if episodic_enabled:
        tools.insert(2, RECALL_TOOL)
    return ToolRegistry(tools)


def _secret(value: SecretStr | None) -> str:
    return value.get_secret_value() if value is not None else ""


def make_redactor(settings: Settings) -> Redactor:
    """The session's redactor: it knows the configured keys by name, wherever they were set (environment or .env)."""
    return Redactor(
        {"ANTHROPIC_API_KEY": _secret(settings.anthropic_api_key), "OPENAI_API_KEY": _secret(settings.openai_api_key)}
    )


def make_llm_bridge(current_llm: Callable[[], LLMClient]):
    """What `get_llm()` inside a scratchpad cell talks to: the session's current coding model."""

    async def bridge(request: dict[str, Any]) -> dict[str, Any]:
        prompt = str(request.get("prompt", ""))
        response = await current_llm().code(
            system=str(request.get("system") or "You are a helpful assistant."),
            messages=[{"role": "user", "content": prompt}],
            max_tokens=int(request.get("max_tokens") or 1024),
        )
        return {"text": response.text}

    return bridge


def context_keeper(settings: Settings) -> ContextKeeper:
    return ContextKeeper(window=settings.context_window, share=settings.context_pressure_threshold)


def build_session(
    settings: Settings, *, llm: LLMClient | None = None, stores: MemoryStores | None = None
) -> ChatSession:
    """A session for `settings`; with `stores`, its memory is that set of stores (the one the app shows)."""
    from anton_tui.llm.client import LLMClient
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.reconsolidator import needs_reconsolidation, reconsolidate
    from anton_tui.memory.learners.acc import AnteriorCingulate
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.paths import AntonPaths
    from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

    paths = AntonPaths.from_settings(settings)
    paths.ensure_workspace()
    if needs_reconsolidation(paths.project_dir):
        reconsolidate(paths.project_dir)
    llm = llm or LLMClient.from_settings(settings)
    if stores is None:
        from anton_tui.paths import managed_dir

        stores = MemoryStores.from_paths(paths, episodic_enabled=settings.episodic_memory,
                                         managed_dir=managed_dir(settings.managed_memory))  # fmt: skip
    episodic = stores.episodic
    if settings.episodic_memory:
        episodic.start_session()
    cortex = Cortex(
        stores.global_hc,
        stores.project_hc,
        mode=settings.effective_memory_mode,
        llm=llm,
        episodic=episodic if settings.episodic_memory else None,
        managed_hc=stores.managed,  # read-only, read first (memory/engrams.managed.py)
        shared=stores.shared,  # a scope with a remote: the "shared across people" notice
    )
    scratchpads = ScratchpadManager(paths.project_dir, paths.venvs, ScratchpadLimits.from_settings(settings))
    redactor = make_redactor(settings)
    cortex.redactor = redactor
    session = ChatSession(
        llm=llm,
        project_dir=paths.project_dir,
        tools=build_tools(episodic_enabled=settings.episodic_memory),
        cortex=cortex,
        episodic=episodic if settings.episodic_memory else None,
        skills=stores.skills,
        scratchpads=scratchpads,
        acc=AnteriorCingulate(),
        acc_mode=settings.acc_mode,
        max_tool_rounds=settings.max_tool_rounds,
        redactor=redactor,
        history_store=HistoryStore(paths.episodes) if settings.episodic_memory else None,
        context=context_keeper(settings),
    )
    session.turn_memory = TurnMemory(
        home=paths.home, project_dir=paths.project_dir, budget_tokens=settings.memory_budget_tokens
    )
    scratchpads.llm_bridge = make_llm_bridge(lambda: session.llm)
    attach_learning(session, settings)
    session.trust_gate = settings.trust_gate
    attach_reflection(session, settings, stores, cortex)
    return session


def attach_reflection(session: ChatSession, settings: Settings, stores: MemoryStores, cortex: Any) -> None:
    """The review pipeline every self-change takes, the reflection chain, the ACC's journal and the conversation
    summaries (`memory.reflection.wiring`), wired into the session's parts."""
    from anton_tui.memory.reflection.wiring import ReflectionParts

    parts = ReflectionParts.build(stores, cortex, settings, lambda: session.llm)
    session.reflection = parts
    session.memory_writes.review = parts.pipeline
    session.acc_feedback.journal = parts.journal
    session.trust.tainted_level = settings.review_tainted
    _attach_summaries(session)


def session_redactor(session: ChatSession) -> Callable[[str], str]:
    """The session's redactor as it is at each call (settings may replace it)."""

    def redact(text: str) -> str:
        return session.redact(text)

    return redact


def _attach_summaries(session: ChatSession) -> None:
    """Conversations end in a summary while they are saved (episodic memory on)."""
    from anton_tui.agent.conversation_summary import ConversationSummaries

    store, parts = session.history_store, session.reflection
    if store is None or parts is None:
        session.summaries = None
        return
    session.summaries = ConversationSummaries(parts.summaries, store, lambda: session.llm, session.background,
                                              redact=session_redactor(session), report=session.emit)  # fmt: skip


def apply_settings(session: ChatSession, settings: Settings, *, stores: MemoryStores | None = None) -> None:
    """Re-configure a running session after /setup: models and keys, memory mode, ACC mode, episodic memory.

    The conversation, the scratchpads and their variables are kept. With `stores`, episodic memory switched on is
    that set's episode log.
    """
    from anton_tui.llm.client import LLMClient
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.paths import AntonPaths

    if session.running:
        raise RuntimeError("Settings cannot change while a turn is running.")
    llm, previous = LLMClient.from_settings(settings), session.llm
    session.llm = llm
    session.start_background(previous.aclose(), "closing the previous model client")
    session.acc_feedback.mode = settings.acc_mode
    session.trust_gate = settings.trust_gate
    session.max_tool_rounds = settings.max_tool_rounds
    session.turn_memory.budget_tokens = settings.memory_budget_tokens
    session.redact = make_redactor(settings)
    if session.cortex is not None:
        session.cortex.redactor = session.redact
    if settings.episodic_memory and session.episodic is None:
        episodes = AntonPaths.from_settings(settings).episodes
        if stores is not None:
            episodic = stores.episodic
            episodic.enabled = True
        else:
            episodic = EpisodicMemory(episodes, enabled=True)
        episodic.start_session()
        session.episodic = episodic
        session.history_store = HistoryStore(episodes)
    elif not settings.episodic_memory:
        session.episodic = None
        session.history_store = None
        if stores is not None:
            stores.episodic.enabled = False
    keeper = context_keeper(settings)
    if previous.planning.model == llm.planning.model and session.context.window_override == settings.context_window:
        keeper.learned_window, keeper.sizer = session.context.learned_window, session.context.sizer
    session.context = keeper
    session.tools = build_tools(episodic_enabled=settings.episodic_memory)
    if session.cortex is not None:
        session.cortex.mode = settings.effective_memory_mode
        session.cortex.llm = llm
        session.cortex.episodic = session.episodic
    learning = session.learning
    if learning is not None and learning.cerebellum is not None:
        learning.cerebellum.llm = llm
    if session.reflection is not None:
        session.reflection.apply_settings(settings)
        session.trust.tainted_level = settings.review_tainted
        if (session.summaries is None) != (session.history_store is None):
            _attach_summaries(session)
