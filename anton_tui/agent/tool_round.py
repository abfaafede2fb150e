"""Running the model's tool calls within a turn, and keeping every call answered in the history.

`run` carries out one round of calls in order: each is checked (arguments that are not JSON, a tool a recalled
skill's ``allowed-tools`` leaves out), run with the tool's `ToolContext`, its result scrubbed of secrets before the
model reads it, seen by the ACC and logged in the episode log, and answered with a `tool_result` block. Skills the
model names in its text with ``[skill: label]`` are recalled here too (`skill_sentinels`), since a skill with
``allowed-tools`` limits the calls that follow for the rest of the turn.

Every call must be answered in the next message: `repair` seals calls a crash left unanswered before a request,
`close_cancelled` answers the round a cancel stopped (the finished calls with their real results), and `not_run`
answers the calls the model asked for after the turn's cap of rounds.

A `ChatSession` holds one `ToolRound`; what it needs of the session is `ToolRoundHost`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent import prompts
from anton_tui.agent.events import HistoryRepaired, ToolCallFinished, ToolCallStarted
from anton_tui.agent.history import close_interrupted_round, seal_dangling_tool_uses
from anton_tui.agent.tools.context import ScratchpadObserver, ToolContext
from anton_tui.agent.turn_parts import TurnParts

if TYPE_CHECKING:
    from anton_tui.agent.acc_feedback import AccFeedback
    from anton_tui.agent.memory_writes import MemoryWrites
    from anton_tui.agent.tools.registry import ToolResult
    from anton_tui.agent.trust_gate import TrustGate
    from anton_tui.llm.events import ToolCall
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.redact import Redactor

DATASOURCE_PATTERN = r"\bDS_([A-Z0-9_]+?)__"
SKILL_TOOLS = ("recall_skill", "read_skill_resource")  # a skill's own tools stay allowed under its `allowed-tools`
NOT_RUN_AT_CAP = "Not run: the tool-round cap for this turn is used up."


class ToolRoundHost(TurnParts, Protocol):
    """What the tool round needs of its session besides its tools, stores and history: the episode log, the
    redactor that scrubs what the model reads, and episodic memory for the tools that recall."""

    @property
    def episodic(self) -> EpisodicMemory | None: ...

    @property
    def redact(self) -> Redactor: ...

    def log_episode(self, role: str, content: str, **meta: Any) -> None: ...


class ToolRound:
    """The tool calls of the running turn (see the module docstring). `observers` watch every scratchpad cell."""

    def __init__(
        self,
        host: ToolRoundHost,
        *,
        acc: AccFeedback,
        trust: TrustGate,
        memory_writes: MemoryWrites,
        observers: list[ScratchpadObserver],
    ) -> None:
        self._host = host
        self._acc = acc
        self._trust = trust
        self._memory_writes = memory_writes
        self._observers = observers
        self._limit: tuple[str, tuple[str, ...]] | None = None  # a recalled skill's allowed-tools, this turn
        self._finished: list[dict[str, Any]] = []  # the answers of the round running now, for a cancel

    def new_turn(self) -> None:
        """A skill's limit on the tools lasts for the turn that recalled it."""
        self._limit = None

    async def run(self, calls: list[ToolCall], round_idx: int) -> list[dict[str, Any]]:
        """Run `calls` one after the other; returns their `tool_result` blocks, in order."""
        self._finished = results = []
        for call in calls:
            results.append(await self._run_one(call, round_idx))
        self._finished = []
        return results

    async def skill_sentinels(self, text: str) -> tuple[list[dict[str, Any]], bool]:
        """Text blocks with the recall of each skill the model named with ``[skill: label]``, and whether any of them
        brought a skill that was not in the conversation yet (see `turn_memory`)."""
        if "[skill:" not in (text or ""):
            return [], False
        host = self._host
        messages = [*host.turn_memory.front_messages, *host.history]
        results = await asyncio.to_thread(host.turn_memory.sentinel_results, text, host.skills, messages)
        for result in results:
            if result.limits_tools is not None:
                self._limit = result.limits_tools
        fresh = any(result.success and "# Skill recalled:" in result.text for result in results)
        return [{"type": "text", "text": result.text} for result in results], fresh

    def refused_by_skill(self, name: str) -> ToolResult | None:
        """A tool error when a skill recalled in this turn limits the tools (`allowed-tools`) and `name` is not one."""
        if self._limit is None or name in SKILL_TOOLS:
            return None
        label, allowed = self._limit
        if name in allowed:
            return None
        from anton_tui.agent.tools.registry import ToolResult

        names = ", ".join(allowed) or "none"
        return ToolResult(
            f"ERROR: the skill `{label}` recalled in this turn allows only these tools: {names}. `{name}` was not "
            "run; carry on with the allowed tools.",
            False,
        )

    def context(self) -> ToolContext:
        """What a tool handler may use in the running turn."""
        host = self._host
        return ToolContext(
            cortex=host.cortex,
            episodic=host.episodic,
            skills=host.skills,
            scratchpads=host.scratchpads,
            emit=host.emit,
            acc_observe=self._acc.observe,
            turn=host.turn_count,
            scratchpad_observers=self._observers,
            history=[*host.turn_memory.front_messages, *host.history],  # what the model sees
            log_episode=host.log_episode,
            redactor=host.redact,
            session_id=host.session_id or "",
            taint=self._trust.taint,
            trust_filter=self._memory_writes.trust_filter,
        )

    # ---- answering every call --------------------------------------------------------------------------------

    def repair(self) -> None:
        """Answer the calls a crash or an earlier cancel left unanswered, before the next request."""
        sealed = seal_dangling_tool_uses(self._host.history, prompts.SEALED_RESULT)
        if sealed:
            self._acc.observe("history_repair", {"reason": "orphaned_tool_use", "sealed_count": sealed}, severity=5)
            self._host.emit(HistoryRepaired(reason="orphaned_tool_use", sealed_count=sealed))

    def close_cancelled(self) -> None:
        """After a cancel: the calls of the round that finished keep their results, the rest are answered as
        cancelled, and the history ends on an answer."""
        close_interrupted_round(self._host.history, self._finished, prompts.CANCELLED_RESULT)
        self._finished = []

    @staticmethod
    def not_run(calls: list[ToolCall]) -> dict[str, Any]:
        """The message that answers `calls`, asked for after the turn's rounds were used up, as not run."""
        return {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call.id, "content": NOT_RUN_AT_CAP, "is_error": True}
                for call in calls
            ],
        }

    # ---- one call --------------------------------------------------------------------------------------------

    async def _run_one(self, call: ToolCall, round_idx: int) -> dict[str, Any]:
        host = self._host
        self._acc.observe("tool_call", {"name": call.name, "args_summary": str(call.input)[:120]}, round_idx=round_idx)
        host.emit(ToolCallStarted(id=call.id, name=call.name, input=call.input))
        code = str(call.input.get("code", ""))
        datasources = sorted({m.lower() for m in re.findall(DATASOURCE_PATTERN, code)})
        host.log_episode("tool_call", str(call.input), tool=call.name, datasources=datasources)
        started = time.monotonic()
        result = await self._result(call)
        result = dataclasses.replace(result, text=host.redact(result.text))  # what the model reads is scrubbed
        self._acc.observe(
            "tool_result",
            {"name": call.name, "success": result.success, "error": "" if result.success else result.text[:300]},
            severity=1 if result.success else 5,
            round_idx=round_idx,
        )
        host.emit(
            ToolCallFinished(
                id=call.id,
                name=call.name,
                input=call.input,
                result=result.text,
                success=result.success,
                duration=time.monotonic() - started,
            )
        )
        host.log_episode("tool_result", result.text, tool=call.name, **({} if result.success else {"error": True}))
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": result.text}
        if not result.success:
            block["is_error"] = True  # as Anton writes it: the key only on failures
        return block

    async def _result(self, call: ToolCall) -> ToolResult:
        """The tool's result, or the error that says why it was not run."""
        if call.parse_error:
            from anton_tui.agent.tools.registry import ToolResult

            return ToolResult(f"ERROR: the tool arguments were not valid JSON ({call.parse_error}).", False)
        if (refusal := self.refused_by_skill(call.name)) is not None:
            return refusal
        result = await self._host.tools.call(call.name, call.input, self.context())
        if result.limits_tools is not None:
            self._limit = result.limits_tools
        return result
