"""Saving, resuming and rewinding a session's conversation (the headless half of /resume and /rewind).

`save` writes the conversation to its history file after each turn (see `history_store`); a file it may not write
over is reported once with `HistoryNotSaved`. `resume` loads a saved conversation into a running `ChatSession`,
which then keeps saving to the same file and logging to the same episode log. `rewind` goes back to just before
one of the user's messages. These are reached through the `ChatSession` methods of the same names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anton_tui.agent.events import HistoryNotSaved
from anton_tui.agent.history_store import HistoryBroken
from anton_tui.agent.messages import (
    count_user_turns,
    is_summary_message,
    is_user_turn,
    message_text,
    typed_turns,
    user_text,
)
from anton_tui.agent.summarise import current_summary, summary_prefix, summary_text

if TYPE_CHECKING:
    from anton_tui.agent.session import ChatSession

PADS_LOST = (
    "This conversation was resumed after a restart. Scratchpads do not survive one: {names} no longer exist and "
    "their variables are gone, so run again whatever you still need."
)


@dataclass(frozen=True)
class UserTurn:
    """One message the user typed, as it stands in the history (`index`), for rewinding; `turn` is the turn it
    started when this run recorded what that turn's request carried (see `context_report.ContextReports`)."""

    index: int
    text: str
    turn: int | None = None


@dataclass(frozen=True)
class Resumed:
    """What `resume` loaded: `source` is "history" (the saved file) or "episodes" (rebuilt from the episode log)."""

    session_id: str
    source: str
    turns: int
    messages: int
    summary: str | None
    lost_pads: tuple[str, ...]


@dataclass(frozen=True)
class TranscriptEntry:
    """One thing to show of a loaded conversation: "user" (what was typed; `index` is its place in the history,
    for rewinding), "answer" (Markdown), "tool" (a call: `tool`, `input`, its result in `text`, `success`) or
    "summary" (the record standing for the earlier turns)."""

    kind: str
    text: str
    index: int
    tool: str | None = None
    input: Any = None
    success: bool = True


def transcript(history: list[dict[str, Any]]) -> list[TranscriptEntry]:
    """The conversation as the chat shows it, oldest first (tool results sit with their calls)."""
    results: dict[str, dict[str, Any]] = {}
    for message in history:
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[str(block.get("tool_use_id"))] = block
    entries: list[TranscriptEntry] = []
    skip = summary_prefix(history)
    if skip:
        entries.append(TranscriptEntry("summary", summary_text(history[0]), 0))
    for index, message in enumerate(history[skip:], start=skip):
        content = message.get("content")
        if message.get("role") == "user":
            if is_user_turn(message):
                entries.append(TranscriptEntry("user", user_text(message), index))
            continue
        if isinstance(content, str):
            if content.strip():
                entries.append(TranscriptEntry("answer", content, index))
            continue
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                entries.append(TranscriptEntry("answer", str(block["text"]), index))
            elif block.get("type") == "tool_use":
                result = results.get(str(block.get("id")), {})
                entries.append(
                    TranscriptEntry(
                        "tool",
                        message_text({"content": result.get("content", "")}),
                        index,
                        tool=str(block.get("name")),
                        input=block.get("input"),
                        success=not result.get("is_error", False),
                    )
                )
    return entries


def save(session: ChatSession, *, force: bool = False) -> Path | None:
    """Write the conversation to ``{session_id}_history.json``. Nothing is written while it holds no user turn
    (unless `force`), or when saving is off (no store, or no session id because episodic memory is off)."""
    store, session_id = session.history_store, session.session_id
    if store is None or session_id is None:
        return None
    if not force and not any(is_user_turn(m) for m in session.history):
        return None
    try:
        path = store.save(session_id, session.history)
    except HistoryBroken as exc:
        _not_saved(session, session_id, str(exc.path), f"{exc.reason}; the file was left as it is")
        return None
    except (OSError, ValueError) as exc:
        _not_saved(session, session_id, str(store.history_path(session_id)), str(exc))
        return None
    session.unsaved_reason = None
    return path


def _not_saved(session: ChatSession, session_id: str, path: str, reason: str) -> None:
    if session.unsaved_reason != reason:  # said once, not after every turn
        session.unsaved_reason = reason
        session.emit(HistoryNotSaved(session_id=session_id, path=path, reason=reason))


def pads_in(history: list[dict[str, Any]]) -> tuple[str, ...]:
    """Names of the scratchpads the conversation's tool calls used, in order of first use."""
    names: dict[str, None] = {}
    for message in history:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "scratchpad":
                arguments = block.get("input")
                name = arguments.get("name") if isinstance(arguments, dict) else None
                names[str(name or "main")] = None
    return tuple(names)


def pads_note(lost_pads: tuple[str, ...], live: list[str] | tuple[str, ...] = ()) -> str:
    """The one line that tells the agent the resumed conversation's scratchpads are gone (not those made since)."""
    lost_pads = tuple(name for name in lost_pads if name not in live)
    if not lost_pads:
        return ""
    shown = ", ".join(f"'{name}'" for name in lost_pads)
    return PADS_LOST.format(names=f"the scratchpad{'s' if len(lost_pads) > 1 else ''} {shown}")


async def resume(session: ChatSession, session_id: str) -> Resumed:
    """Replace the session's conversation with a saved one; later turns save to the same file and log to the same
    episode log. Scratchpads still running are closed (the resumed conversation's own are gone).

    Raises `LookupError` (no such conversation), `HistoryBroken` (its file does not parse; nothing changes),
    `RuntimeError` (a turn is running, or saving is off).
    """
    if session.running:
        raise RuntimeError("A turn is running; cancel it first.")
    store = session.history_store
    if store is None or session.episodic is None:
        raise RuntimeError("Saved conversations need episodic memory (ANTON_EPISODIC_MEMORY is off).")
    loaded = store.load(session_id)
    if loaded is None:
        raise LookupError(f"No saved conversation {session_id!r}.")
    history, source = loaded
    if session.scratchpads is not None:
        await session.scratchpads.close_all()
    session.episodic.resume_session(session_id)
    session.history[:] = history
    _forget_reports(session)
    logged = [episode.turn for episode in session.episodic.read_session(session_id)]
    session.turn_count = max([count_user_turns(history), *logged])
    session.lost_pads = pads_in(history)
    session.unsaved_reason = None
    return Resumed(
        session_id=session_id,
        source=source,
        turns=typed_turns(history),
        messages=len(history),
        summary=current_summary(history),
        lost_pads=session.lost_pads,
    )


def user_turns(session: ChatSession) -> list[UserTurn]:
    """The user's messages still in the history (a summary is not one), oldest first."""
    found = [
        UserTurn(index, user_text(message))
        for index, message in enumerate(session.history)
        if is_user_turn(message) and not is_summary_message(message)
    ]
    reports = getattr(session, "context_reports", None)
    if reports is None or not found:
        return found
    numbers = reports.turn_numbers([turn.text for turn in found])
    return [UserTurn(turn.index, turn.text, number) for turn, number in zip(found, numbers, strict=False)]


def last_user_text(history: list[dict[str, Any]]) -> str:
    """The latest message the user typed (what started the current turn)."""
    for message in reversed(history):
        if is_user_turn(message) and not is_summary_message(message):
            return user_text(message)
    return ""


def _forget_reports(session: Any, from_turn: int | None = None) -> None:
    """Drop what the context reports say of turns that left the conversation (all of them without `from_turn`)."""
    reports = getattr(session, "context_reports", None)
    if reports is not None:
        reports.clear() if from_turn is None else reports.drop_from(from_turn)


def rewind(session: ChatSession, index: int) -> str:
    """Go back to just before the user message at `index`: it and everything after it leave the history, and the
    saved file follows. Returns that message's text, to edit and send again. Memory written meanwhile stays, and
    the episode log keeps its record of what happened."""
    if session.running:
        raise RuntimeError("A turn is running; cancel it first.")
    turns = user_turns(session)
    if index not in {turn.index for turn in turns}:
        raise ValueError(f"Message {index} is not one of the user's messages.")
    text = user_text(session.history[index])
    dropped = [turn.turn for turn in turns if turn.index >= index and turn.turn is not None]
    if dropped:
        _forget_reports(session, min(dropped))
    del session.history[index:]
    if not any(is_user_turn(m) and not is_summary_message(m) for m in session.history):
        session.lost_pads = ()
    save(session, force=True)
    return text


class SavedConversation:
    """The saved-conversation side of `ChatSession` (a base class, so the turn loop's module stays short): the ids,
    the summary, resume, rewind, the transcript, deleting and starting anew."""

    history: list[dict[str, Any]]
    history_store: Any
    episodic: Any
    turn_count: int
    lost_pads: tuple[str, ...]
    unsaved_reason: str | None
    running: bool

    def new_conversation(self) -> None:
        """Start a new conversation under a new session id; the last one stays saved and resumable, and memory,
        skills and episodes stay. Refused while a turn runs."""
        if self.running:
            raise RuntimeError("A turn is running; cancel it first.")
        self.history.clear()
        self.turn_count = 0
        _forget_reports(self)
        self.lost_pads = ()
        self.unsaved_reason = None
        if self.episodic is not None and self.episodic.session_id is not None:
            self.episodic.start_session()

    @property
    def session_id(self) -> str | None:
        """The id shared by this conversation's episode log and history file (None when episodic memory is off)."""
        return self.episodic.session_id if self.episodic is not None else None

    @property
    def summary(self) -> str | None:
        """The record that stands for the earlier turns, when the history starts with one."""
        return current_summary(self.history)

    def save_history(self) -> Path | None:
        """Save the conversation now (done after every turn). Returns the file, or None when not saved."""
        return save(self)  # type: ignore[arg-type]

    async def resume(self, session_id: str) -> Resumed:
        """Continue a saved conversation (this program's or Anton's); see `conversations.resume`."""
        return await resume(self, session_id)  # type: ignore[arg-type]

    def user_turns(self) -> list[UserTurn]:
        return user_turns(self)  # type: ignore[arg-type]

    def transcript(self) -> list[TranscriptEntry]:
        """The conversation as the chat shows it (for a resumed one): typed messages, answers, tool calls."""
        return transcript(self.history)

    def rewind(self, index: int) -> str:
        """Drop the user message at history `index` and all after it; returns its text. See `conversations.rewind`."""
        return rewind(self, index)  # type: ignore[arg-type]

    def delete_saved(self, session_id: str) -> list[Path]:
        """Delete a saved conversation (its history file and episode log); not the one in progress."""
        if self.history_store is None:
            return []
        if session_id == self.session_id and self.history:
            raise ValueError("That is the conversation in progress; start a new one before deleting it.")
        return self.history_store.delete(session_id)
