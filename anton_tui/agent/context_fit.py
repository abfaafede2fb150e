"""Keeps every request to the planning model within a share of its context window, so long conversations go on.

Before each request `ContextKeeper.fit` estimates its size. Past the share (``ANTON_CONTEXT_PRESSURE_THRESHOLD``,
0.7 by default) of the window, the older turns are summarised by the coding model (`agent.summarise`). If that
fails, or is not enough, the oldest messages are dropped instead, with a notice, and as a last step the largest
parts are cut down (`agent.context_cuts`: a tool result is stubbed, a text the user sent is cut in the middle): a
request that is sure to be refused is never sent. A message the user sent that is by itself larger than the room
for messages (a long paste) is the cause, not the history: it is cut first, to `MESSAGE_SHARE` of that room, and the
notice names it and says by how much, rather than the rest of the conversation being folded or cut for it. When the
provider refuses a request as too long all the same (the window was larger in our table than in reality), `recover`
summarises, then cuts down to the last few messages, then gives up; the window is also lowered to what the provider
said it holds.

Before any of that, once a request passes `WARN_SHARE` of its budget, `SummaryAhead` says at about what size the
older turns will be summarised. Whatever is folded or dropped first goes into a ledger (`agent.ledger`, word for
word), which the summariser is shown and the conversation keeps beside its saved file.

Every change is announced with an event (`HistorySummarising`, `HistorySummarised`, `HistoryTrimmed`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent.context_cuts import cut_largest
from anton_tui.agent.context_window import (
    DEFAULT_PRESSURE_SHARE,
    RequestSizer,
    context_window,
    message_chars,
    messages_chars,
    request_chars,
)
from anton_tui.agent.events import (
    HistorySummarised,
    HistorySummarising,
    HistoryTrimmed,
    SessionEvent,
    SummaryAhead,
    TextCut,
)
from anton_tui.agent.messages import is_summary_message, is_user_turn
from anton_tui.agent.summarise import (
    KEEP_RECENT,
    SummaryFailed,
    choose_cut,
    drop_oldest,
    summarise_old_turns,
    summary_prefix,
    worth_summarising,
)

if TYPE_CHECKING:
    from anton_tui.agent.conversations import SavedConversation
    from anton_tui.llm.client import LLMClient
    from anton_tui.llm.errors import LLMError

MIN_WINDOW = 4096
WARN_SHARE = 0.8  # of the budget: past it, the chat is told that older turns will be summarised soon
MESSAGE_SHARE = 0.5  # of the room for messages: what a message too large by itself is cut to
NOTHING_TO_SUMMARISE = "nothing to summarise"
_USED_LIMIT = re.compile(r"(\d[\d,]*) tokens? > (\d[\d,]*)")
_MAXIMUM = re.compile(r"maximum context length is (\d[\d,]*)")


def overflow_figures(message: str) -> tuple[int | None, int | None]:
    """(tokens sent, tokens allowed) when a provider's "too long" message says them."""
    found = _USED_LIMIT.search(message)
    if found:
        return int(found.group(1).replace(",", "")), int(found.group(2).replace(",", ""))
    found = _MAXIMUM.search(message)
    return None, int(found.group(1).replace(",", "")) if found else None


class ContextHost(Protocol):
    """What making room needs of the session: the model, the history it changes in place, the saved conversation
    (its file and the ledgers of what was folded), and where to announce what it did."""

    @property
    def llm(self) -> LLMClient: ...

    @property
    def history(self) -> list[dict[str, Any]]: ...

    @property
    def conversation(self) -> SavedConversation: ...

    def emit(self, event: SessionEvent) -> None: ...


class ContextKeeper:
    """Sizes requests and makes room in the history when a request would not fit."""

    def __init__(
        self,
        *,
        window: int | None = None,
        share: float = DEFAULT_PRESSURE_SHARE,
        keep_recent: int = KEEP_RECENT,
        show_ledger: bool = True,
    ) -> None:
        self.window_override = window
        self.share = share
        self.keep_recent = keep_recent
        self.show_ledger = show_ledger  # whether the summariser is shown the ledger of the turns it folds
        self.sizer = RequestSizer()
        self.learned_window: int | None = None  # what a provider's refusal told us, when lower than the table
        self._summary_failed = False  # this turn: do not ask again after a failure
        self._warned = False  # SummaryAhead was said since the last time room was made
        self._turn_message: dict[str, Any] | None = None  # the message the user sent to begin the running turn
        self._turn_begun = False  # new_turn was called and the turn's first request is not sized yet

    # ---- figures -------------------------------------------------------------------------------------------

    def window(self, llm: LLMClient) -> int:
        window = context_window(llm.planning.model, self.window_override)
        return min(window, self.learned_window) if self.learned_window else window

    def budget(self, llm: LLMClient) -> int:
        """Tokens a request may use: the share of the window, leaving room for the answer (at most a quarter of
        the window is set aside for it, so a small window with a large ANTON_MAX_TOKENS still holds a conversation)."""
        window = self.window(llm)
        answer = min(llm.planning.max_tokens, window // 4)
        return max(1, min(int(window * self.share), window - answer))

    def tokens(self, system: str, tools: list[dict[str, Any]] | None, history: list[dict[str, Any]]) -> int:
        return self.sizer.tokens(request_chars(system, tools, history))

    def _message_room(self, llm: LLMClient, system: str, tools: list[dict[str, Any]] | None) -> int:
        """Characters the messages may take once the system prompt and tools are counted."""
        return int(self.budget(llm) * self.sizer.chars_per_token) - request_chars(system, tools, [])

    def new_turn(self) -> None:
        self._summary_failed = False
        self._turn_message = None
        self._turn_begun = True

    # ---- before a request ----------------------------------------------------------------------------------

    async def fit(self, session: ContextHost, system: str, tools: list[dict[str, Any]] | None) -> None:
        """Make the next request fit the budget, changing `session.history` in place when it would not."""
        llm = session.llm
        self._note_turn_message(session.history)
        self._cut_oversized_message(session, system, tools)
        before = self.tokens(system, tools, session.history)
        self.look_ahead(session, system, tools, before)  # said before anything is folded, whatever comes next
        if before <= self.budget(llm):
            return
        if not self._summary_failed:
            problem = await self._summarise(session, system, tools, reason="long", tokens_before=before)
            if problem is None and self.tokens(system, tools, session.history) <= self.budget(llm):
                return
            if problem not in (None, NOTHING_TO_SUMMARISE):
                self._make_room(session, system, tools, reason="long", why=f"Summarising failed: {problem}.")
                return
        self._make_room(session, system, tools, reason="long", why="")

    def look_ahead(
        self, session: ContextHost, system: str, tools: list[dict[str, Any]] | None, tokens: int | None = None
    ) -> None:
        """Say once (`SummaryAhead`) when the conversation has passed `WARN_SHARE` of the size at which its older
        turns get summarised; called before each request and after each answer."""
        budget = self.budget(session.llm)
        size = self.tokens(system, tools, session.history) if tokens is None else tokens
        if size >= WARN_SHARE * budget and not self._warned:
            self._warned = True
            session.emit(SummaryAhead(tokens=size, at_tokens=budget))

    # ---- after the provider said "too long" ----------------------------------------------------------------

    async def recover(
        self, session: ContextHost, system: str, tools: list[dict[str, Any]] | None, attempt: int, error: LLMError
    ) -> bool:
        """Make room after a refusal; True when the history changed and the request is worth sending again."""
        self._learn(session.llm, system, tools, session.history, error.message)
        if attempt == 1:
            before = self.tokens(system, tools, session.history)
            problem = "not tried" if self._summary_failed else None
            if problem is None:
                problem = await self._summarise(session, system, tools, reason="overflow", tokens_before=before)
            if problem is None:
                if self.tokens(system, tools, session.history) > self.budget(session.llm):
                    self._make_room(session, system, tools, reason="overflow", why="")
                return True
            why = "" if problem in ("not tried", NOTHING_TO_SUMMARISE) else f"Summarising failed: {problem}."
            if self._make_room(session, system, tools, reason="overflow", why=why):
                return True
        if attempt <= 2:
            return self._make_room(session, system, tools, reason="overflow", why="", last_resort=True)
        return False

    def _learn(self, llm: LLMClient, system: str, tools: Any, history: list[dict[str, Any]], message: str) -> None:
        chars = request_chars(system, tools, history)
        used, limit = overflow_figures(message)
        if used:
            self.sizer.sent(chars)
            self.sizer.observed(used)
        estimate = limit or int(self.sizer.tokens(chars) * 0.9)
        self.learned_window = max(MIN_WINDOW, min(self.window(llm), estimate))

    # ---- a message too large by itself --------------------------------------------------------------------

    def _note_turn_message(self, history: list[dict[str, Any]]) -> None:
        """At the turn's first request the last message is the one the user sent: keep it, to name it."""
        if not self._turn_begun:
            return
        self._turn_begun = False
        last = history[-1] if history else None
        if last is not None and is_user_turn(last) and not is_summary_message(last):
            self._turn_message = last

    def _cut_oversized_message(self, session: ContextHost, system: str, tools: Any) -> None:
        """Cut the running turn's message (and its notes) to `MESSAGE_SHARE` of the room for messages when it is
        by itself larger than that room: nothing else in the conversation could make it fit."""
        message = self._turn_message
        room = self._message_room(session.llm, system, tools)
        if message is None or message_chars(message) <= room:
            return
        history = session.history
        before = self.tokens(system, tools, history)
        target = messages_chars(history) - (message_chars(message) - int(room * MESSAGE_SHARE))
        cuts = cut_largest(history, target, turn_message=message, only_turn=True)
        if not cuts.texts:
            return
        history[:] = cuts.history
        session.conversation.save()
        session.emit(
            HistoryTrimmed(
                dropped=0,
                stubbed=0,
                notice=trim_notice(cuts.texts, 0, 0, why=""),
                reason="long",
                tokens_before=before,
                tokens_after=self.tokens(system, tools, history),
                cut=cuts.texts,
            )
        )

    # ---- the two ways of making room -----------------------------------------------------------------------

    async def _summarise(
        self, session: ContextHost, system: str, tools: Any, *, reason: str, tokens_before: int
    ) -> str | None:
        """Summarise the older turns; None on success, else why not (the history is then unchanged)."""
        history = session.history
        cut = choose_cut(history, keep_recent=self.keep_recent)
        if not cut or not worth_summarising(history, cut):
            return NOTHING_TO_SUMMARISE
        conversation = session.conversation
        ledger = conversation.ledgers.build(history[summary_prefix(history) : cut])
        session.emit(HistorySummarising(messages=cut))
        llm = session.llm
        try:
            summary = await summarise_old_turns(
                llm,
                history,
                cut,
                budget_chars=context_window(llm.coding.model),
                ledger=ledger if self.show_ledger else None,
            )
        except SummaryFailed as exc:
            self._summary_failed = True
            return str(exc)
        conversation.keep_ledger(ledger)  # first: a crash before the history's save leaves both old turns and ledger
        history[:] = summary.history
        conversation.save()
        self._warned = False
        session.emit(
            HistorySummarised(
                summary=summary.record,
                folded=summary.folded,
                kept=len(history) - summary_prefix(history),
                tokens_before=tokens_before,
                tokens_after=self.tokens(system, tools, history),
                reason=reason,
                ledger=ledger,
            )
        )
        return None

    def _make_room(
        self, session: ContextHost, system: str, tools: Any, *, reason: str, why: str, last_resort: bool = False
    ) -> bool:
        """Drop the oldest messages (down to the last few when `last_resort`), then cut down the largest parts (tool
        results, texts the user sent), until the request fits. Announces what went; False when nothing could be
        done."""
        history = session.history
        room = self._message_room(session.llm, system, tools)
        before = self.tokens(system, tools, history)
        new, dropped = drop_oldest(history, -1 if last_resort else room, keep_recent=self.keep_recent)
        cuts = cut_largest(new, room, turn_message=self._turn_message)
        if not dropped and not cuts.any:
            return False
        ledger = None
        if dropped:
            prefix = summary_prefix(history)
            ledger = session.conversation.ledgers.build(history[prefix : prefix + dropped], kind="dropped")
            session.conversation.keep_ledger(ledger)
        history[:] = cuts.history
        session.conversation.save()
        self._warned = False
        session.emit(
            HistoryTrimmed(
                dropped=dropped,
                stubbed=cuts.stubbed,
                notice=trim_notice(cuts.texts, dropped, cuts.stubbed, why=why),
                reason=reason,
                tokens_before=before,
                tokens_after=self.tokens(system, tools, history),
                ledger=ledger,
                cut=cuts.texts,
            )
        )
        return True


def trim_notice(texts: tuple[TextCut, ...], dropped: int, stubbed: int, *, why: str) -> str:
    """One line for the user naming everything that went to fit the window: the texts the user sent that were
    cut (and by how much), the oldest messages dropped, the tool results cut down."""
    parts = [
        f"{cut.what} was cut from {cut.chars_before:,} to {cut.chars_after:,} characters (its middle left out)"
        for cut in texts
    ]
    if dropped:
        parts.append(f"the {dropped} oldest messages were dropped" if dropped > 1 else "the oldest message was dropped")
    if stubbed:
        parts.append(f"{stubbed} large tool result{'s' if stubbed != 1 else ''} cut down")
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return " ".join(filter(None, [why, f"To fit the model's context window, {listed}."]))
