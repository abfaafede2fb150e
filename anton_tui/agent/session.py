"""A conversation with the agent: history, system prompt, and the turn loop that calls the model and its tools.

`ChatSession.turn(text)` is an async iterator of typed events (see `agent.events`); whoever drives it (the TUI, a
headless test, the demo) renders them. Work that must not delay the reply (the cerebellum's post-mortem,
consolidation, identity extraction, compaction) runs after the turn as background tasks whose events arrive on
`ChatSession.background_events`. In the brain analogy this is the prefrontal executive: it plans, delegates to
working memory (scratchpads), and lets the learning systems watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.agent import conversations, prompts
from anton_tui.agent.acc_feedback import AccFeedback
from anton_tui.agent.background import BackgroundWork
from anton_tui.agent.context_fit import ContextKeeper
from anton_tui.agent.context_report import ContextReports
from anton_tui.agent.conversations import SavedConversation
from anton_tui.agent.event_route import EventRoute
from anton_tui.agent.events import ErrorOccurred, MemoryWritten, SessionEvent, TurnFinished, TurnStarted
from anton_tui.agent.memory_writes import MemoryWrites
from anton_tui.agent.model_round import ModelRound
from anton_tui.agent.system_prompt import SystemPrompt
from anton_tui.agent.tool_round import ToolRound
from anton_tui.agent.tools.context import ScratchpadObserver
from anton_tui.agent.tools.registry import ToolRegistry
from anton_tui.agent.trust_gate import TrustGate
from anton_tui.agent.turn_memory import TurnMemory
from anton_tui.agent.turn_notes import user_content
from anton_tui.redact import Redactor

if TYPE_CHECKING:
    from anton_tui.agent.conversation_shelf import ConversationShelf
    from anton_tui.agent.conversation_summary import ConversationSummaries
    from anton_tui.agent.conversations import Resumed, TranscriptEntry, UserTurn
    from anton_tui.agent.history_store import HistoryStore
    from anton_tui.agent.learning import LearningLoops
    from anton_tui.agent.ledger import FoldedTurn, Ledger
    from anton_tui.agent.trust_gate import HeldWhy
    from anton_tui.llm.client import LLMClient
    from anton_tui.llm.events import LLMResponse
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.memory.history.origin import Origin
    from anton_tui.memory.learners.acc import AnteriorCingulate
    from anton_tui.memory.reflection.wiring import ReflectionParts
    from anton_tui.memory.skills.store import SkillStore
    from anton_tui.memory.trust import HeldMemories
    from anton_tui.scratchpad.runtime import ScratchpadManager

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnEndHook:
    """Work to start when a turn ends: `run(session, turn)` copies what it needs at once and returns the slow part,
    which runs in the background. A hook that `skip_on_cancel` does not run after a cancelled turn; `on_cancel` runs
    instead."""

    name: str
    run: Callable[[ChatSession, int], Coroutine[Any, Any, None]]
    skip_on_cancel: bool = False
    on_cancel: Callable[[], None] | None = None


class ChatSession:
    """One conversation with the agent (see the module docstring). The turn loop is its own; the jobs around it
    belong to the objects it holds: `events` (where its events go, the running turn's task), `prompt` (the system
    prompt and the tool definitions), `model_round` (one request to the model, streamed and counted), `tool_round`
    (the model's tool calls run, every call answered), `trust` (the trust gate and the memories held for review),
    `memory_writes` (the one path into memory, and the questions about what was held), `acc_feedback` (the ACC's
    nudges and rules), `conversation` (its saved file, resume and rewind) and `background` (the work that outlives
    a turn)."""

    def __init__(
        self,
        *,
        llm: LLMClient,
        project_dir: Path,
        tools: ToolRegistry,
        cortex: Cortex | None = None,
        episodic: EpisodicMemory | None = None,
        skills: SkillStore | None = None,
        scratchpads: ScratchpadManager | None = None,
        acc: AnteriorCingulate | None = None,
        acc_mode: str = "off",
        max_tool_rounds: int = 25,
        redactor: Redactor | None = None,
        history_store: HistoryStore | None = None,
        context: ContextKeeper | None = None,
    ) -> None:
        self.llm = llm
        self.project_dir = Path(project_dir)
        self.tools = tools
        self.cortex = cortex
        self.episodic = episodic
        self.skills = skills
        self.scratchpads = scratchpads
        self.max_tool_rounds = max_tool_rounds
        self.redact = redactor or Redactor()
        self.history: list[dict[str, Any]] = []
        self.context = context or ContextKeeper()  # keeps requests within the model's context window
        self.context_reports = ContextReports()  # what each turn's request carried of memory and skills
        self.turn_memory = TurnMemory(home=None, project_dir=self.project_dir)  # memory, memory files, skills given
        self.turn_count = 0
        self.scratchpad_observers: list[ScratchpadObserver] = []  # the cerebellum watches every cell
        self.turn_end_hooks: list[TurnEndHook] = []
        self.learning: LearningLoops | None = None  # attached by the factory, if any
        self.events = EventRoute()
        self.background = BackgroundWork(self.emit)
        self.trust = TrustGate()
        self.memory_writes = MemoryWrites(self, self.trust, self.background)
        self.acc_feedback = AccFeedback(self, acc, acc_mode)
        self.conversation = SavedConversation(self, self.context_reports, history_store)
        self.prompt = SystemPrompt(self)
        self.model_round = ModelRound(self)
        self.tool_round = ToolRound(self, acc=self.acc_feedback, trust=self.trust, memory_writes=self.memory_writes,
                                    observers=self.scratchpad_observers)  # fmt: skip
        self.summaries: ConversationSummaries | None = None  # conversations that end in a summary (factory)
        self.reflection: ReflectionParts | None = None  # the review pipeline and the reflection chain (factory)

    # ----------------------------------------------------------------- public API

    @property
    def running(self) -> bool:
        return self.events.running

    @property
    def background_events(self) -> asyncio.Queue[SessionEvent]:
        """Events from work that outlives a turn: background memory writes and confirmations asked between turns."""
        return self.events.between_turns

    async def turn(self, user_text: str, notes: Sequence[str] = ()) -> AsyncIterator[SessionEvent]:
        """One turn; `notes` (files mentioned, commands run) go into the user message after the typed text."""
        if self.running:
            raise RuntimeError("A turn is already running; cancel it or wait for it to finish.")
        async with contextlib.aclosing(self.events.stream(self._run_turn(user_text, notes))) as events:
            async for event in events:
                yield event

    def cancel(self) -> bool:
        """Stop the running turn at once; the history stays consistent. Returns False when nothing was running."""
        return self.events.cancel()

    async def warm_up(self) -> None:
        """Pay slow first-time costs in the background: the secret patterns, and the episode search index's catch-up
        with what was written since it was last used (checked through its SQLite file alone when there is none).
        What only a turn needs waits until the user starts typing: `warm_up_model`, `warm_up_recall`."""
        from anton_tui.redact import preload

        await asyncio.to_thread(preload)  # the secret patterns, read by the first tool result
        if self.episodic is not None:
            from anton_tui.memory.episodes.index import IndexUnavailable

            try:
                await asyncio.to_thread(partial(self.episodic.index.refresh, ready_to_search=False))
            except IndexUnavailable:
                pass  # another process is building it; recall falls back to scanning meanwhile

    async def warm_up_recall(self) -> None:
        """Load what a recall needs (the turn index's library and word analysers: some 7 MB the screen does not
        need) and the summaries and reflections a recall searches too."""
        if self.episodic is not None:
            from anton_tui.memory.episodes.index import preload

            await asyncio.to_thread(preload)
            if self.episodic.documents is not None:
                await asyncio.to_thread(self.episodic.documents.documents)

    async def warm_up_model(self) -> None:
        """Import the LLM SDK (some 50 MB and a second or so) and build the ranking index of the rules and lessons
        in worker threads, so the first turn does not wait: nothing on the screen needs either, so they wait until
        the user starts writing."""
        await self.llm.warm_up()
        if self.cortex is not None:
            await asyncio.to_thread(self.turn_memory.warm_up, self.cortex)

    # -- the user's own hands on the scratchpads (the UI's cancel / reset / remove); the ACC does not see these --

    def cancel_cell(self, pad: str) -> bool:
        scratchpad = self.scratchpads.get(pad) if self.scratchpads is not None else None
        return scratchpad.cancel() if scratchpad is not None else False

    async def reset_pad(self, pad: str) -> bool:
        scratchpad = self.scratchpads.get(pad) if self.scratchpads is not None else None
        if scratchpad is None:
            return False
        await scratchpad.reset()
        return True

    async def remove_pad(self, pad: str) -> bool:
        return await self.scratchpads.remove(pad) if self.scratchpads is not None else False

    async def wait_background(self, timeout: float | None = None) -> None:
        """Wait for the learning work started by past turns (used by tests and on shutdown)."""
        await self.background.wait(timeout)

    def start_background(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        return self.background.start(coro, name)

    async def close(self) -> None:
        self.background.cancel_all()
        if self.scratchpads is not None:
            await self.scratchpads.close_all()
        await self.llm.aclose()
        if self.episodic is not None:  # stops an index build at its next step, so quitting does not wait for it
            await asyncio.to_thread(self.episodic.close)
        if self.cortex is not None:
            await asyncio.to_thread(self.cortex.close)

    def system_prompt(self) -> str:
        """The system prompt for the current turn (see `SystemPrompt.build`)."""
        return self.prompt.build()

    def tool_definitions(self) -> list[dict[str, Any]]:
        return self.prompt.tool_definitions()

    # ----------------------------------------------------------------- the parts, under the session's names

    @property
    def session_id(self) -> str | None:
        """The id shared by this conversation's episode log and history file (None when episodic memory is off)."""
        return self.episodic.session_id if self.episodic is not None else None

    @property
    def history_store(self) -> HistoryStore | None:
        """Where the conversation is saved after every turn (None: not saved)."""
        return self.conversation.store

    @history_store.setter
    def history_store(self, store: HistoryStore | None) -> None:
        self.conversation.store = store

    @property
    def summary(self) -> str | None:
        """The record that stands for the earlier turns, when the history starts with one."""
        return self.conversation.summary

    def new_conversation(self) -> None:
        """Start a new conversation under a new session id; see `SavedConversation.start_new`. The one that ends
        is summarised in the background."""
        ended = self._ending()
        self.turn_memory.forget_conversation()  # the skills preloaded for the old conversation go with it
        self.conversation.start_new()
        self.trust.new_conversation()
        if self.summaries is not None:
            self.summaries.started_new(ended)
            self.summaries.ended(ended)

    def save_history(self) -> Path | None:
        """Save the conversation now (done after every turn). Returns the file, or None when not saved."""
        return self.conversation.save()

    async def resume(self, session_id: str) -> Resumed:
        """Continue a saved conversation (this program's or Anton's); see `SavedConversation.resume`. The one that
        ends is summarised in the background."""
        ended = self._ending()
        resumed = await self.conversation.resume(session_id)
        self.trust.new_conversation()
        if self.summaries is not None:
            self.summaries.resumed()
            if ended != session_id:
                self.summaries.ended(ended)
        return resumed

    def _ending(self) -> str | None:
        """The conversation in progress, when it holds anything to summarise."""
        if self.session_id is None or not conversations.last_user_text(self.history):
            return None
        return self.session_id

    def user_turns(self) -> list[UserTurn]:
        return self.conversation.user_turns()

    def transcript(self) -> list[TranscriptEntry]:
        """The conversation as the chat shows it (for a resumed one): typed messages, answers, tool calls."""
        return self.conversation.transcript()

    def rewind(self, index: int) -> str:
        """Drop the user message at history `index` and all after it; returns its text."""
        return self.conversation.rewind(index)

    def delete_saved(self, session_id: str) -> list[Path]:
        """Move a saved conversation to the trash (kept 30 days); not the one in progress."""
        return self.conversation.delete(session_id)

    def conversation_shelf(self) -> ConversationShelf | None:
        """The project's saved conversations to handle (rename, fork, delete, export); None when none are saved."""
        return self.conversation.shelf()

    def ledgers(self) -> list[Ledger]:
        """What this conversation's summaries folded, oldest first (see `agent.ledger`)."""
        return list(self.conversation.ledgers.ledgers)

    def unfold(self, number: int) -> FoldedTurn:
        """Bring folded turn `number` back, word for word, in the next request; see `LedgerBook.unfold`."""
        return self.conversation.ledgers.unfold(number)

    @property
    def trust_gate(self) -> bool:
        """Whether learned memories from untrusted turns, and instruction-like ones, wait for review."""
        return self.trust.enabled

    @trust_gate.setter
    def trust_gate(self, enabled: bool) -> None:
        self.trust.enabled = enabled

    @property
    def pending_confirmations(self) -> list[Engram]:
        """The memories waiting for the user's review, oldest first."""
        return self.trust.pending

    @property
    def held_why(self) -> dict[Engram, HeldWhy]:
        """Those of them the trust gate held, with why."""
        return self.trust.why

    def restore_held(self, held: HeldMemories) -> int:
        """Bring back what waited for review when the app last closed (kept in `held` from now on); how many."""
        return self.trust.restore(held)

    def encode_through_gate(self, engrams: list[Engram], producer: str) -> list[Engram]:
        """The one path of every producer into memory; returns what waits for the user. See `MemoryWrites`."""
        return self.memory_writes.encode_through_gate(engrams, producer)

    def producing(self, producer: str, *, why: str = "") -> AbstractContextManager[Origin]:
        """Memory writes inside this block are recorded in the history as made by `producer` in this turn."""
        return self.memory_writes.producing(producer, why=why)

    def ask_between_turns(self) -> None:
        """Ask about the memories waiting for review now, on `background_events` (restored ones, say)."""
        self.memory_writes.ask_between_turns()

    # ----------------------------------------------------------------- the turn

    async def _run_turn(self, user_text: str, notes: Sequence[str] = ()) -> None:
        self.memory_writes.begin_turn()
        try:
            await self._turn_body(user_text, notes)
        finally:
            self.memory_writes.turn_closed()  # a cancelled turn did not ask: it is asked between turns

    async def _turn_body(self, user_text: str, notes: Sequence[str] = ()) -> None:
        self.tool_round.new_turn()
        self.turn_count += 1
        turn = self.turn_count
        self.trust.begin_turn(turn)
        self.model_round.new_turn()
        self.emit(TurnStarted(turn=turn, user_text=user_text))
        self.context.new_turn()
        self.acc_feedback.new_turn()
        self.log_episode("user", user_text, model=self.llm.planning.model)
        message = {"role": "user", "content": user_content(user_text, [*notes, *self.conversation.unfold_notes()])}
        self.history.append(message)
        self.conversation.ledgers.turn_began(message)
        self.conversation.save(durable=False)  # every finished message is saved at once: a crash loses none
        stop_reason, text = "end_turn", ""
        try:
            text, stop_reason = await self._tool_loop()
        except asyncio.CancelledError:
            self._on_cancelled()
            self.conversation.save()
            self.emit(TurnFinished(turn=turn, stop_reason="cancelled", text=self.model_round.partial_text))
            self._finish_learning(turn, cancelled=True)
            raise
        except Exception as exc:
            from anton_tui.llm.errors import LLMError

            if not isinstance(exc, LLMError):
                log.exception("turn failed")
            text = self.model_round.partial_text
            self.emit(ErrorOccurred(message=str(exc) or type(exc).__name__, retryable=True))
            stop_reason = "error"
        if text:
            self.log_episode("assistant", text[:2000])
        self.acc_feedback.end_turn()
        self.conversation.save()
        self.emit(TurnFinished(turn=turn, stop_reason=stop_reason, text=text))
        self._finish_learning(turn, cancelled=False)
        await self.memory_writes.end_turn()

    async def _tool_loop(self) -> tuple[str, str]:
        if self.summaries is not None and self.turn_count == 1:  # the previous conversation's summary, if it comes
            await self.summaries.wait_for_previous()
        system = self.system_prompt()
        if self.cortex is not None and self.turn_memory.selection is not None:  # counted in the background
            self.start_background(asyncio.to_thread(self.cortex.record_prompt, self.turn_memory.selection), "counters")
        tools = self.tool_definitions()
        texts: list[str] = []
        for round_idx in range(1, self.max_tool_rounds + 1):
            response = await self._model_round(system, tools)
            if response.text:
                texts.append(response.text)
            skills, fresh = await self.tool_round.skill_sentinels(response.text)
            if not response.tool_calls:
                if not fresh:
                    return "\n\n".join(texts), "end_turn"
                self.history.append({"role": "user", "content": skills})  # the skill, for the model's next step
                continue
            results = await self.tool_round.run(response.tool_calls, round_idx)
            results.extend(skills)
            results.extend(self.acc_feedback.round_nudges())
            self.history.append({"role": "user", "content": results})
            self.conversation.save(durable=False)
        return await self._cap_postmortem(system, tools, texts)

    async def _model_round(self, system: str, tools: list[dict[str, Any]]) -> LLMResponse:
        self.tool_round.repair()  # every tool call in the history answered before the request
        return await self.model_round.run(system, self.prompt.sized(system), tools)

    async def _cap_postmortem(self, system: str, tools: list[dict[str, Any]], texts: list[str]) -> tuple[str, str]:
        self.acc_feedback.observe(
            "cap_exhausted", {"cap": self.max_tool_rounds}, severity=9, round_idx=self.max_tool_rounds
        )
        note = {"type": "text", "text": prompts.CAP_POSTMORTEM.format(cap=self.max_tool_rounds)}
        self.history[-1]["content"].append(note)
        response = await self._model_round(system, tools)
        if response.tool_calls:
            self.history.append(self.tool_round.not_run(response.tool_calls))
            self.history.append({"role": "assistant", "content": [{"type": "text", "text": response.text or ""}]})
        if response.text:
            texts.append(response.text)
        return "\n\n".join(texts), "cap_exhausted"

    def _on_cancelled(self) -> None:
        """Leave a history the next request can use as it is: no unanswered tool call, no two prompts in a row."""
        partial = self.model_round.partial_text.strip()
        if partial:
            self.history.append({"role": "assistant", "content": [{"type": "text", "text": partial}]})
            self.log_episode("assistant", partial[:2000])
        self.tool_round.close_cancelled()

    def _finish_learning(self, turn: int, *, cancelled: bool) -> None:
        """Start the turn-end hooks in the background; on cancel, `skip_on_cancel` hooks run their `on_cancel()`."""
        for hook in list(self.turn_end_hooks):
            if cancelled and hook.skip_on_cancel:
                if hook.on_cancel is not None:
                    hook.on_cancel()
                continue
            self.background.start(hook.run(self, turn), hook.name)

    # ----------------------------------------------------------------- plumbing

    def emit(self, event: SessionEvent) -> None:
        """Send an event to whoever watches: the running turn's stream, or the background queue between turns."""
        if isinstance(event, MemoryWritten):  # for the ledger of the turn, should it be summarised
            self.conversation.ledgers.memory_written(event.engrams, event.producer)
        self.events.send(event)

    def log_episode(self, role: str, content: str, **meta: Any) -> None:
        """Add a line to the episode log of this turn, scrubbed of secrets (nothing when episodic memory is off)."""
        if self.episodic is None:
            return
        if self.trust.turn_trust.untrusted:
            meta = {**meta, "trust": "untrusted"}  # a later recall of these lines taints that turn too
        self.episodic.log_turn(self.turn_count, role, self.redact(content), **meta)
