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
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.agent import conversations, prompts
from anton_tui.agent.acc_feedback import AccFeedback
from anton_tui.agent.background import BackgroundWork
from anton_tui.agent.context_fit import ContextKeeper
from anton_tui.agent.context_report import ContextReports, context_report, report_from_selection
from anton_tui.agent.conversations import SavedConversation
from anton_tui.agent.events import (
    AssistantMessageDone,
    AssistantTextDelta,
    ErrorOccurred,
    HistoryRepaired,
    MemoryWritten,
    SessionEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from anton_tui.agent.history import close_interrupted_round, seal_dangling_tool_uses
from anton_tui.agent.memory_writes import MemoryWrites
from anton_tui.agent.tools.context import ScratchpadObserver, ToolContext
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
    from anton_tui.agent.tools.registry import ToolResult
    from anton_tui.agent.trust_gate import HeldWhy
    from anton_tui.llm.client import LLMClient
    from anton_tui.llm.events import LLMResponse, ToolCall
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.engrams.engram import Engram
    from anton_tui.memory.engrams.selection import MemorySelection
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.memory.history.origin import Origin
    from anton_tui.memory.learners.acc import AnteriorCingulate
    from anton_tui.memory.reflection.wiring import ReflectionParts
    from anton_tui.memory.skills.store import SkillStore
    from anton_tui.memory.trust import HeldMemories
    from anton_tui.scratchpad.runtime import ScratchpadManager

log = logging.getLogger(__name__)

DATASOURCE_PATTERN = r"\bDS_([A-Z0-9_]+?)__"


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
    """One conversation with the agent (see the module docstring). The jobs around the turn loop belong to the
    objects it holds: `trust` (the trust gate and the memories held for review), `memory_writes` (the one path into
    memory, and the questions about what was held), `acc_feedback` (the ACC's nudges and rules), `conversation`
    (its saved file, resume and rewind) and `background` (the work that outlives a turn)."""

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
        self._skills_warned = False
        self._tool_limit: tuple[str, tuple[str, ...]] | None = None  # a recalled skill's allowed-tools, this turn
        self.scratchpads = scratchpads
        self.max_tool_rounds = max_tool_rounds
        self.redact = redactor or Redactor()
        self.history: list[dict[str, Any]] = []
        self.context = context or ContextKeeper()  # keeps requests within the model's context window
        self.context_reports = ContextReports()  # what each turn's request carried of memory and skills
        self.turn_memory = TurnMemory(home=None, project_dir=self.project_dir)  # memory, memory files, skills given
        self.turn_count = 0
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self.scratchpad_observers: list[ScratchpadObserver] = []  # the cerebellum watches every cell
        self.turn_end_hooks: list[TurnEndHook] = []
        self.learning: LearningLoops | None = None  # attached by the factory, if any
        self._emit: Callable[[SessionEvent], None] = self._emit_background
        self._task: asyncio.Task[None] | None = None
        self._background_queue: asyncio.Queue[SessionEvent] | None = None
        self._partial_text = ""
        self._round_results: list[dict[str, Any]] = []
        self.background = BackgroundWork(self.emit)
        self.trust = TrustGate()
        self.memory_writes = MemoryWrites(self, self.trust, self.background)
        self.acc_feedback = AccFeedback(self, acc, acc_mode)
        self.conversation = SavedConversation(self, self.context_reports, history_store)
        self.summaries: ConversationSummaries | None = None  # conversations that end in a summary (factory)
        self.reflection: ReflectionParts | None = None  # the review pipeline and the reflection chain (factory)

    # ----------------------------------------------------------------- public API

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def background_events(self) -> asyncio.Queue[SessionEvent]:
        """Events from work that outlives a turn: background memory writes and confirmations asked between turns."""
        if self._background_queue is None:
            self._background_queue = asyncio.Queue()
        return self._background_queue

    async def turn(self, user_text: str, notes: Sequence[str] = ()) -> AsyncIterator[SessionEvent]:
        """One turn; `notes` (files mentioned, commands run) go into the user message after the typed text."""
        if self.running:
            raise RuntimeError("A turn is already running; cancel it or wait for it to finish.")
        queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._emit = queue.put_nowait
        task = asyncio.create_task(self._run_turn(user_text, notes))
        self._task = task
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                else:
                    getter.cancel()
                while not queue.empty():
                    yield queue.get_nowait()
                if getter not in done:  # the turn has ended, and every event it sent is out
                    break
            if not task.cancelled() and (error := task.exception()) is not None:
                raise error
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self._emit = self._emit_background

    def cancel(self) -> bool:
        """Stop the running turn at once; the history stays consistent. Returns False when nothing was running."""
        task = self._task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def warm_up(self) -> None:
        """Pay the slow first-time costs in the background: the secret patterns and the episode search index (the
        LLM SDK and the memory's ranking index are `warm_up_model`'s, called when the user starts typing)."""
        from anton_tui.redact import preload

        await asyncio.to_thread(preload)  # the secret patterns, read by the first tool result
        if self.episodic is not None:
            from anton_tui.memory.episodes.index import IndexUnavailable

            try:
                await asyncio.to_thread(self.episodic.index.refresh)
            except IndexUnavailable:
                pass  # another process is building it; recall falls back to scanning meanwhile
            if self.episodic.documents is not None:  # the summaries and reflections recall searches too
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
        self.turn_memory.front()
        selection = self.turn_memory.choose(self.cortex, self.history, self.skills) if self.cortex is not None else None
        memory = selection.text if selection is not None else ""
        skills_section = ""
        if self.skills is not None:
            from anton_tui.memory.skills.store import procedural_memory_section

            try:
                skills_section = procedural_memory_section(self.skills.list_summaries())
            except OSError as exc:  # the turn goes on without the skill list; said once per session
                if not self._skills_warned:
                    self._skills_warned = True
                    reason = self.skills.listing_warning or f"the skills folder cannot be listed ({exc})"
                    self._emit(ErrorOccurred(f"{reason}; skills are left out of the prompt.", retryable=False))
        prompt = prompts.build_system_prompt(
            project_dir=self.project_dir, memory_context=memory, skills_section=skills_section
        )
        self._report_context(selection, skills_section, len(prompt))
        live = self.scratchpads.names() if self.scratchpads is not None else []
        note = self.conversation.pads_note(live)
        earlier = self.summaries.prompt_section(self.session_id) if self.summaries is not None else ""
        return "\n\n".join(part for part in (prompt, earlier, note) if part)

    def _report_context(self, selection: MemorySelection | None, skills_section: str, system_chars: int) -> None:
        """Record what this request carries of memory and skills (see `context_report`)."""
        wisdom = self.cortex.get_scratchpad_context() if self.cortex is not None else ""
        ratio = self.context.sizer.chars_per_token
        user_text = conversations.last_user_text(self.history)
        if selection is None:
            report = context_report(self.turn_count, "", skills_section, wisdom, system_chars, ratio, user_text)
        else:
            given = self.turn_memory
            report = report_from_selection(
                self.turn_count, selection, files=[(f.level, f.path.name, f.text) for f in given.files],
                preloaded=[str(m["content"]) for m in given.preloaded.values()], skills=skills_section, wisdom=wisdom,
                system_chars=system_chars, ratio=ratio, user_text=user_text,
            )  # fmt: skip
        self.context_reports.record(report)

    def tool_definitions(self) -> list[dict[str, Any]]:
        descriptions = {}
        scratchpad = self.tools.get("scratchpad")
        if scratchpad is not None and self.cortex is not None:
            wisdom = self.cortex.get_scratchpad_context()
            if wisdom:
                descriptions["scratchpad"] = scratchpad.description + wisdom
        return self.tools.definitions(descriptions)

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

    _ask_between_turns = ask_between_turns  # the name the Runtime called it by

    # ----------------------------------------------------------------- the turn

    async def _run_turn(self, user_text: str, notes: Sequence[str] = ()) -> None:
        self.memory_writes.begin_turn()
        try:
            await self._turn_body(user_text, notes)
        finally:
            self.memory_writes.turn_closed()  # a cancelled turn did not ask: it is asked between turns

    async def _turn_body(self, user_text: str, notes: Sequence[str] = ()) -> None:
        self._tool_limit = None
        self.turn_count += 1
        turn = self.turn_count
        self.trust.begin_turn(turn)
        self._partial_text = ""
        self._emit(TurnStarted(turn=turn, user_text=user_text))
        self.context.new_turn()
        self.acc_feedback.new_turn()
        self._log("user", user_text, model=self.llm.planning.model)
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
            self._emit(TurnFinished(turn=turn, stop_reason="cancelled", text=self._partial_text))
            self._finish_learning(turn, cancelled=True)
            raise
        except Exception as exc:
            from anton_tui.llm.errors import LLMError

            if not isinstance(exc, LLMError):
                log.exception("turn failed")
            text = self._partial_text
            self._emit(ErrorOccurred(message=str(exc) or type(exc).__name__, retryable=True))
            stop_reason = "error"
        if text:
            self._log("assistant", text[:2000])
        self.acc_feedback.end_turn()
        self.conversation.save()
        self._emit(TurnFinished(turn=turn, stop_reason=stop_reason, text=text))
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
            skills, fresh = await self._skill_sentinels(response.text)
            if not response.tool_calls:
                if not fresh:
                    return "\n\n".join(texts), "end_turn"
                self.history.append({"role": "user", "content": skills})  # the skill, for the model's next step
                continue
            self._round_results = results = []
            for call in response.tool_calls:
                results.append(await self._run_tool(call, round_idx))
            results.extend(skills)
            results.extend(self.acc_feedback.round_nudges())
            self._round_results = []
            self.history.append({"role": "user", "content": results})
            self.conversation.save(durable=False)
        return await self._cap_postmortem(system, tools, texts)

    async def _skill_sentinels(self, text: str) -> tuple[list[dict[str, Any]], bool]:
        """Text blocks with the recall of each skill the model named with ``[skill: label]``, and whether any of them
        brought a skill that was not in the conversation yet (see `turn_memory`)."""
        if "[skill:" not in (text or ""):
            return [], False
        messages = [*self.turn_memory.front_messages, *self.history]
        results = await asyncio.to_thread(self.turn_memory.sentinel_results, text, self.skills, messages)
        for result in results:
            if result.limits_tools is not None:
                self._tool_limit = result.limits_tools
        fresh = any(result.success and "# Skill recalled:" in result.text for result in results)
        return [{"type": "text", "text": result.text} for result in results], fresh

    def _sized(self, system: str) -> str:
        """The system prompt with the messages at the front of every request, for sizing the request."""
        return "\n".join([system, *(str(m["content"]) for m in self.turn_memory.front_messages)])

    async def _model_round(self, system: str, tools: list[dict[str, Any]]) -> LLMResponse:
        self._repair_history()
        self._partial_text = ""
        await self.context.fit(self, self._sized(system), tools)
        response = await self._stream_round(system, tools)
        if response is None:
            raise RuntimeError("The model's stream ended without a final response.")
        blocks: list[dict[str, Any]] = []
        if response.text:
            blocks.append({"type": "text", "text": response.text})
        for call in response.tool_calls:
            blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
        self.history.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        self.conversation.save(durable=False)
        self.context.look_ahead(self, self._sized(system), tools)
        self._partial_text = ""
        if response.text:
            self._emit(AssistantMessageDone(response.text))
        usage = response.usage
        self.context.sizer.observed(usage.input_tokens)
        self.total_input_tokens += usage.input_tokens
        self.total_output_tokens += usage.output_tokens
        self._emit(
            UsageUpdated(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_input_tokens=self.total_input_tokens,
                total_output_tokens=self.total_output_tokens,
            )
        )
        return response

    async def _stream_round(self, system: str, tools: list[dict[str, Any]]) -> LLMResponse | None:
        """One request, streamed; a "too long" refusal before any text makes room and sends it again."""
        from anton_tui.agent.context_window import request_chars
        from anton_tui.llm.errors import LLMError
        from anton_tui.llm.events import StreamComplete, TextDelta

        attempt = 0
        while True:
            messages = [*self.turn_memory.front_messages, *self.history]
            self.context.sizer.sent(request_chars(system, tools, messages))
            response = None
            try:
                async for event in self.llm.plan_stream(system=system, messages=messages, tools=tools):
                    if isinstance(event, TextDelta):
                        self._partial_text += event.text
                        self._emit(AssistantTextDelta(event.text))
                    elif isinstance(event, StreamComplete):
                        response = event.response
                return response
            except LLMError as err:
                if err.kind != "context_too_long" or self._partial_text:
                    raise
                attempt += 1
                if not await self.context.recover(self, self._sized(system), tools, attempt, err):
                    raise

    SKILL_TOOLS = ("recall_skill", "read_skill_resource")

    def _refused_by_skill(self, name: str) -> ToolResult | None:
        """A tool error when a skill recalled in this turn limits the tools (`allowed-tools`) and `name` is not one."""
        if self._tool_limit is None or name in self.SKILL_TOOLS:
            return None
        label, allowed = self._tool_limit
        if name in allowed:
            return None
        from anton_tui.agent.tools.registry import ToolResult

        names = ", ".join(allowed) or "none"
        return ToolResult(
            f"ERROR: the skill `{label}` recalled in this turn allows only these tools: {names}. `{name}` was not "
            "run; carry on with the allowed tools.",
            False,
        )

    async def _run_tool(self, call: ToolCall, round_idx: int) -> dict[str, Any]:
        import re

        self.acc_feedback.observe(
            "tool_call", {"name": call.name, "args_summary": str(call.input)[:120]}, round_idx=round_idx
        )
        self._emit(ToolCallStarted(id=call.id, name=call.name, input=call.input))
        code = str(call.input.get("code", ""))
        datasources = sorted({m.lower() for m in re.findall(DATASOURCE_PATTERN, code)})
        self._log("tool_call", str(call.input), tool=call.name, datasources=datasources)
        started = time.monotonic()
        if call.parse_error:
            from anton_tui.agent.tools.registry import ToolResult

            result = ToolResult(f"ERROR: the tool arguments were not valid JSON ({call.parse_error}).", False)
        elif (refusal := self._refused_by_skill(call.name)) is not None:
            result = refusal
        else:
            result = await self.tools.call(call.name, call.input, self._tool_context())
            if result.limits_tools is not None:
                self._tool_limit = result.limits_tools
        result = dataclasses.replace(result, text=self.redact(result.text))  # what the model reads is scrubbed
        self.acc_feedback.observe(
            "tool_result",
            {"name": call.name, "success": result.success, "error": "" if result.success else result.text[:300]},
            severity=1 if result.success else 5,
            round_idx=round_idx,
        )
        self._emit(
            ToolCallFinished(
                id=call.id,
                name=call.name,
                input=call.input,
                result=result.text,
                success=result.success,
                duration=time.monotonic() - started,
            )
        )
        self._log("tool_result", result.text, tool=call.name, **({} if result.success else {"error": True}))
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": result.text}
        if not result.success:
            block["is_error"] = True  # as Anton writes it: the key only on failures
        return block

    async def _cap_postmortem(self, system: str, tools: list[dict[str, Any]], texts: list[str]) -> tuple[str, str]:
        self.acc_feedback.observe(
            "cap_exhausted", {"cap": self.max_tool_rounds}, severity=9, round_idx=self.max_tool_rounds
        )
        note = {"type": "text", "text": prompts.CAP_POSTMORTEM.format(cap=self.max_tool_rounds)}
        self.history[-1]["content"].append(note)
        response = await self._model_round(system, tools)
        if response.tool_calls:
            self.history.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": call.id,
                            "content": "Not run: the tool-round cap for this turn is used up.",
                            "is_error": True,
                        }
                        for call in response.tool_calls
                    ],
                }
            )
            self.history.append({"role": "assistant", "content": [{"type": "text", "text": response.text or ""}]})
        if response.text:
            texts.append(response.text)
        return "\n\n".join(texts), "cap_exhausted"

    # ----------------------------------------------------------------- history repair and cancel

    def _repair_history(self) -> None:
        sealed = seal_dangling_tool_uses(self.history, prompts.SEALED_RESULT)
        if sealed:
            self.acc_feedback.observe(
                "history_repair", {"reason": "orphaned_tool_use", "sealed_count": sealed}, severity=5
            )
            self._emit(HistoryRepaired(reason="orphaned_tool_use", sealed_count=sealed))

    def _on_cancelled(self) -> None:
        """Leave a history the next request can use as it is: no unanswered tool call, no two prompts in a row."""
        partial = self._partial_text.strip()
        if partial:
            self.history.append({"role": "assistant", "content": [{"type": "text", "text": partial}]})
            self._log("assistant", partial[:2000])
        close_interrupted_round(self.history, self._round_results, prompts.CANCELLED_RESULT)

    # ----------------------------------------------------------------- learning

    def _finish_learning(self, turn: int, *, cancelled: bool) -> None:
        """Start the turn-end hooks in the background; on cancel, `skip_on_cancel` hooks run their `on_cancel()`."""
        for hook in list(self.turn_end_hooks):
            if cancelled and hook.skip_on_cancel:
                if hook.on_cancel is not None:
                    hook.on_cancel()
                continue
            self.background.start(hook.run(self, turn), hook.name)

    # ----------------------------------------------------------------- plumbing

    def _emit_background(self, event: SessionEvent) -> None:
        self.background_events.put_nowait(event)

    def emit(self, event: SessionEvent) -> None:
        """Send an event to whoever watches: the running turn's stream, or the background queue between turns."""
        if isinstance(event, MemoryWritten):  # for the ledger of the turn, should it be summarised
            self.conversation.ledgers.memory_written(event.engrams, event.producer)
        self._emit(event)

    def _tool_context(self) -> ToolContext:
        return ToolContext(
            cortex=self.cortex,
            episodic=self.episodic,
            skills=self.skills,
            scratchpads=self.scratchpads,
            emit=self.emit,
            acc_observe=self.acc_feedback.observe,
            turn=self.turn_count,
            scratchpad_observers=self.scratchpad_observers,
            history=[*self.turn_memory.front_messages, *self.history],  # what the model sees
            log_episode=self._log,
            redactor=self.redact,
            session_id=self.session_id or "",
            taint=self.trust.taint,
            trust_filter=self.memory_writes.trust_filter,
        )

    def _log(self, role: str, content: str, **meta: Any) -> None:
        if self.episodic is None:
            return
        if self.trust.turn_trust.untrusted:
            meta = {**meta, "trust": "untrusted"}  # a later recall of these lines taints that turn too
        self.episodic.log_turn(self.turn_count, role, self.redact(content), **meta)
