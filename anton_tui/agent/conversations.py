"""Saving, resuming and rewinding a session's conversation (the headless half of /resume and /rewind).

A `ChatSession` holds one `SavedConversation`; what it needs of the session is `ConversationHost`. `save` writes
the conversation to its history file after every message that is complete (the user's, each answer, each round of
tool results; see `history_store`), so a crash loses nothing finished; a file it may not write over is reported
once with `HistoryNotSaved`. `resume` loads a saved conversation into the running session, which then keeps saving
to the same file and logging to the same episode log. `rewind` goes back to just before one of the user's messages.
The conversation's ledgers (what its summaries folded, see `ledger`) are held in `ledgers` and saved beside it.
The session offers these under the same names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from anton_tui.agent.conversation_notes import ConversationNotes
from anton_tui.agent.events import HistoryNotSaved, SessionEvent
from anton_tui.agent.history import close_interrupted_round
from anton_tui.agent.history_store import HistoryBroken
from anton_tui.agent.ledger_book import LedgerBook
from anton_tui.agent.messages import count_user_turns, is_summary_message, is_user_turn, typed_turns, user_text
from anton_tui.agent.summarise import current_summary
from anton_tui.agent.transcript import TranscriptEntry, transcript

__all__ = ["ConversationHost", "Resumed", "SavedConversation", "TranscriptEntry", "UserTurn", "transcript"]

if TYPE_CHECKING:
    from anton_tui.agent.context_report import ContextReports
    from anton_tui.agent.conversation_shelf import ConversationShelf
    from anton_tui.agent.history_store import HistoryStore
    from anton_tui.agent.ledger import Ledger
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.scratchpad.runtime import ScratchpadManager

INTERRUPTED_NOTE = "[no result: the app stopped before this call finished]"
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
    ledgers: int = 0  # ledgers of what its summaries folded, kept beside it
    interrupted: bool = False  # it ended in the middle of a turn (the app stopped); that turn was closed


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


def ends_mid_turn(history: list[dict[str, Any]]) -> bool:
    """Whether the saved conversation stops inside a turn: on the user's side, or on tool calls with no results."""
    if not history:
        return False
    last = history[-1]
    content = last.get("content")
    if last.get("role") != "assistant":
        return True
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)


def last_user_text(history: list[dict[str, Any]]) -> str:
    """The latest message the user typed (what started the current turn)."""
    for message in reversed(history):
        if is_user_turn(message) and not is_summary_message(message):
            return user_text(message)
    return ""


class ConversationHost(Protocol):
    """What the saved conversation needs of its session: the history it changes in place, and the turn count it
    sets on a resume."""

    turn_count: int

    @property
    def history(self) -> list[dict[str, Any]]: ...

    @property
    def running(self) -> bool: ...

    @property
    def episodic(self) -> EpisodicMemory | None: ...

    @property
    def scratchpads(self) -> ScratchpadManager | None: ...

    @property
    def session_id(self) -> str | None: ...

    def emit(self, event: SessionEvent) -> None: ...


class SavedConversation:
    """The saved side of one session's conversation: its file, resume, rewind, the transcript, its ledgers,
    deleting and starting anew. `reports` are the session's context reports, which follow the turns that stay."""

    def __init__(self, host: ConversationHost, reports: ContextReports, store: HistoryStore | None = None) -> None:
        self._host = host
        self._reports = reports
        self.store = store  # saves the conversation after every message (None: not saved)
        self.ledgers = LedgerBook()  # what its summaries folded, and the turns asked back
        self.lost_pads: tuple[str, ...] = ()  # scratchpads a resumed conversation used, gone since
        self.unsaved_reason: str | None = None  # why the last save failed, once said

    @property
    def summary(self) -> str | None:
        """The record that stands for the earlier turns, when the history starts with one."""
        return current_summary(self._host.history)

    @property
    def notes(self) -> ConversationNotes | None:
        """Where titles, forks' origins and ledgers are kept beside the history files (None: not saved)."""
        return ConversationNotes(self.store.episodes_dir) if self.store is not None else None

    def shelf(self) -> ConversationShelf | None:
        """The project's saved conversations, to list, rename, fork, delete, restore and export (None: not saved)."""
        if self.store is None:
            return None
        from anton_tui.agent.conversation_shelf import ConversationShelf

        return ConversationShelf(self.store.episodes_dir, self.store)

    def pads_note(self, live: list[str] | tuple[str, ...] = ()) -> str:
        """For the system prompt: the resumed conversation's scratchpads that are gone (empty when none is)."""
        return pads_note(self.lost_pads, live)

    def transcript(self) -> list[TranscriptEntry]:
        """The conversation as the chat shows it (for a resumed one): typed messages, answers, tool calls, and the
        summary with the ledgers of what it folded."""
        return transcript(self._host.history, tuple(self.ledgers.ledgers))

    def save(self, *, force: bool = False, durable: bool = True) -> Path | None:
        """Write the conversation to ``{session_id}_history.json``. Nothing is written while it holds no user turn
        (unless `force`), or when saving is off (no store, or no session id because episodic memory is off).
        `durable=False` (the saves inside a turn) skips the sync to the disk; see `HistoryStore.save`."""
        store, session_id = self.store, self._host.session_id
        if store is None or session_id is None:
            return None
        if not force and not any(is_user_turn(m) for m in self._host.history):
            return None
        try:
            path = store.save(session_id, self._host.history, durable=durable)
        except HistoryBroken as exc:
            self._not_saved(session_id, str(exc.path), f"{exc.reason}; the file was left as it is")
            return None
        except (OSError, ValueError) as exc:
            self._not_saved(session_id, str(store.history_path(session_id)), str(exc))
            return None
        self.unsaved_reason = None
        return path

    def _not_saved(self, session_id: str, path: str, reason: str) -> None:
        if self.unsaved_reason != reason:  # said once, not after every turn
            self.unsaved_reason = reason
            self._host.emit(HistoryNotSaved(session_id=session_id, path=path, reason=reason))

    def unfold_notes(self) -> list[str]:
        """For the turn about to start: the folded turns the user asked back, word for word (then they wait no
        more)."""
        return self.ledgers.take_unfold_notes()

    def keep_ledger(self, ledger: Ledger) -> None:
        """Keep the ledger of turns just folded: in the book, and appended beside the saved conversation."""
        self.ledgers.add(ledger)
        notes, session_id = self.notes, self._host.session_id
        if notes is None or session_id is None:
            return
        try:
            notes.add_ledger(session_id, ledger)
        except (OSError, ValueError) as exc:
            self._not_saved(session_id, str(notes.ledgers_path(session_id)), f"the ledger was not saved: {exc}")

    async def resume(self, session_id: str) -> Resumed:
        """Replace the session's conversation with a saved one (this program's or Anton's); later turns save to the
        same file and log to the same episode log. Scratchpads still running are closed (the resumed
        conversation's own are gone). A conversation that ended in the middle of a turn (the app was stopped) has
        that turn closed, every finished message kept.

        Raises `LookupError` (no such conversation), `HistoryBroken` (its file does not parse; nothing changes),
        `RuntimeError` (a turn is running, or saving is off).
        """
        host = self._host
        if host.running:
            raise RuntimeError("A turn is running; cancel it first.")
        store, episodic = self.store, host.episodic
        if store is None or episodic is None:
            raise RuntimeError("Saved conversations need episodic memory (ANTON_EPISODIC_MEMORY is off).")
        loaded = store.load(session_id)
        if loaded is None:
            raise LookupError(f"No saved conversation {session_id!r}.")
        history, source = loaded
        interrupted = ends_mid_turn(history)
        if interrupted:
            close_interrupted_round(history, [], INTERRUPTED_NOTE)
        if host.scratchpads is not None:
            await host.scratchpads.close_all()
        episodic.resume_session(session_id)
        host.history[:] = history
        self._reports.clear()
        self.ledgers.reset(ConversationNotes(store.episodes_dir).ledgers(session_id))
        logged = [episode.turn for episode in episodic.read_session(session_id)]
        host.turn_count = max([count_user_turns(history), *logged])
        self.lost_pads = pads_in(history)
        self.unsaved_reason = None
        return Resumed(
            session_id=session_id,
            source=source,
            turns=typed_turns(history),
            messages=len(history),
            summary=current_summary(history),
            lost_pads=self.lost_pads,
            ledgers=len(self.ledgers.ledgers),
            interrupted=interrupted,
        )

    def user_turns(self) -> list[UserTurn]:
        """The user's messages still in the history (a summary is not one), oldest first."""
        found = [
            UserTurn(index, user_text(message))
            for index, message in enumerate(self._host.history)
            if is_user_turn(message) and not is_summary_message(message)
        ]
        if not found:
            return found
        numbers = self._reports.turn_numbers([turn.text for turn in found])
        return [UserTurn(turn.index, turn.text, number) for turn, number in zip(found, numbers, strict=False)]

    def rewind(self, index: int) -> str:
        """Go back to just before the user message at `index`: it and everything after it leave the history, and
        the saved file follows. Returns that message's text, to edit and send again. Memory written meanwhile
        stays, and the episode log keeps its record of what happened."""
        history = self._host.history
        if self._host.running:
            raise RuntimeError("A turn is running; cancel it first.")
        turns = self.user_turns()
        if index not in {turn.index for turn in turns}:
            raise ValueError(f"Message {index} is not one of the user's messages.")
        text = user_text(history[index])
        dropped = [turn.turn for turn in turns if turn.index >= index and turn.turn is not None]
        if dropped:
            self._reports.drop_from(min(dropped))
        del history[index:]
        if not any(is_user_turn(m) and not is_summary_message(m) for m in history):
            self.lost_pads = ()
        self.save(force=True)
        return text

    def start_new(self) -> None:
        """Start a new conversation under a new session id; the last one stays saved and resumable, and memory,
        skills and episodes stay. Refused while a turn runs."""
        host = self._host
        if host.running:
            raise RuntimeError("A turn is running; cancel it first.")
        host.history.clear()
        host.turn_count = 0
        self._reports.clear()
        self.ledgers.reset()
        self.lost_pads = ()
        self.unsaved_reason = None
        if host.episodic is not None and host.episodic.session_id is not None:
            host.episodic.start_session()

    def delete(self, session_id: str) -> list[Path]:
        """Move a saved conversation (its history file, episode log and notes) to the trash, where it is kept 30
        days and can be restored; not the one in progress. Returns the files as they were before the move."""
        shelf = self.shelf()
        if shelf is None:
            return []
        if session_id == self._host.session_id and self._host.history:
            raise ValueError("That is the conversation in progress; start a new one before deleting it.")
        files = shelf.files(session_id)
        shelf.delete(session_id)
        return files
