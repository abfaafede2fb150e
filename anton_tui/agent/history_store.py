"""Saved conversations, in the very files Anton uses, so either program can resume the other's.

A conversation is saved as ``<project>/.anton/episodes/{session_id}_history.json``, next to its episode log
``{session_id}.jsonl``: the bare list of model messages, written whole after every turn exactly as Anton writes it
(one line of ``json.dumps(history, ensure_ascii=False)``, no trailing newline, mode 0600), through a temporary file
that replaces it in one step (`atomic_write`). `HistoryStore` saves, loads, lists and deletes them.

A file that cannot be used is *broken*, whatever is wrong with it: not UTF-8, not JSON, JSON of the wrong shape,
nested deeper than any conversation (`MAX_DEPTH`), not a regular file, or unreadable. Every such case raises the
same `HistoryBroken` (a `ValueError`, which is what the app's and the command line's resume report) saying what is
wrong; the file is listed as broken, never loaded, and never written over (a save to it raises `HistoryBroken` and
leaves it byte-identical), and the rest of the list still shows. A session whose history file is missing but whose
episode log exists is rebuilt from the log (`history_from_episodes`), as Anton's ``rebuild_from_episodic`` does,
with steadier tool ids and no dangling calls.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from anton_tui.agent.history import seal_dangling_tool_uses
from anton_tui.agent.messages import is_summary_message, is_user_turn, strip_stamp, typed_turns, user_text
from anton_tui.memory.episodes.store import MEMORY_ROLES, Episode, read_episodes, session_start
from anton_tui.memory.files.locking import atomic_write

HISTORY_SUFFIX = "_history.json"
EPISODES_SUFFIX = ".jsonl"
NO_RESULT_NOTE = "[no result was recorded for this call]"
PREVIEW_CHARS = 200
MAX_DEPTH = 200  # levels of nesting a saved conversation may have (real ones have about ten)
_SAFE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
StatKey = tuple[int, int, int]  # inode, size, modification time: a file unchanged keeps its key


class HistoryBroken(ValueError):
    """A saved conversation that cannot be read, for whatever reason; it is left exactly as it is on disk."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path.name} cannot be read ({reason}); it was left as it is.")


@dataclass(frozen=True)
class SavedSession:
    """One row of the session list. `source` is "history" (the saved file), "episodes" (no saved file: it will be
    rebuilt from the episode log) or "broken" (`broken` says why)."""

    session_id: str
    started: datetime | None  # from the id (UTC); None for ids that are not a time
    date: str  # as Anton shows it: "YYYY-MM-DD HH:MM", or the raw id
    turns: int
    preview: str  # the first thing the user asked, without Anton's "[YYYY-MM-DD HH:MM] " stamp
    model: str | None  # the planning model of the last turn, when the episode log recorded it
    source: str
    broken: str | None = None
    title: str | None = None  # given by the user (kept beside the history, see `conversation_notes`)
    parent: str | None = None  # for a fork: the conversation it was forked from
    forked_at: int | None = None  # and the number of the parent's user message it was forked at


# --------------------------------------------------------------------------- the file's bytes


def format_history(history: list[dict[str, Any]]) -> bytes:
    """The exact bytes Anton writes for `history`."""
    return json.dumps(history, ensure_ascii=False).encode("utf-8")


def check_history(data: Any) -> str | None:
    """Why `data` is not a usable message list, or None when it is."""
    if not isinstance(data, list):
        return f"the top level is a JSON {type(data).__name__}, not a list of messages"
    if _deeper_than(data, MAX_DEPTH):
        return f"it is nested more than {MAX_DEPTH} levels deep, deeper than any conversation"
    for number, message in enumerate(data, start=1):
        if not isinstance(message, dict):
            return f"message {number} is not an object"
        if message.get("role") not in ("user", "assistant"):
            return f"message {number} has role {message.get('role')!r}"
        content = message.get("content")
        if not isinstance(content, str) and not (
            isinstance(content, list) and all(isinstance(block, dict) for block in content)
        ):
            return f"message {number} has content that is neither text nor a list of blocks"
    return None


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether `data` nests lists and objects more than `limit` levels deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_history(raw: bytes, path: Path) -> list[dict[str, Any]]:
    """The message list in a history file's bytes; `HistoryBroken` says what is wrong otherwise."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise HistoryBroken(path, "not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise HistoryBroken(path, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise HistoryBroken(
            path, f"it is nested more than {MAX_DEPTH} levels deep, deeper than any conversation"
        ) from None
    problem = check_history(data)
    if problem:
        raise HistoryBroken(path, problem)
    return data


def read_history_file(path: Path) -> bytes:
    """The bytes of a history file. FileNotFoundError when there is none; `HistoryBroken` when it is there but cannot
    be read as a file (a folder, a pipe or a device in its place, no permission)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise HistoryBroken(path, f"it cannot be read: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HistoryBroken(path, "it is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise HistoryBroken(path, f"it cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- rebuilding from the episode log


def _tool_input(content: str) -> dict[str, Any]:
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(content)
        except Exception:
            continue
        return value if isinstance(value, dict) else {"value": value}
    return {"raw": content}


def history_from_episodes(episodes: list[Episode]) -> list[dict[str, Any]]:
    """A message list from an episode log, as Anton's ``episodes_to_api_history`` builds it, made safe to send.

    user and assistant lines become messages; each tool_call becomes a ``tool_use`` (its input read back from the
    logged text) answered by the tool_result that follows it (a scratchpad line in between is skipped). Unlike
    Anton's, ids are numbered (the same on every rebuild), a call without a result gets a "no result" reply, and
    messages of the same role in a row are merged, so the list can be sent to any provider.
    """
    history: list[dict[str, Any]] = []
    steps = [episode for episode in episodes if episode.role not in MEMORY_ROLES]
    calls = 0
    index = 0
    while index < len(steps):
        episode = steps[index]
        index += 1
        if episode.role in ("user", "assistant"):
            if episode.content.strip():
                _append(history, {"role": episode.role, "content": episode.content})
        elif episode.role == "tool_call":
            calls += 1
            call_id = f"toolu_rebuilt_{calls:05d}"
            name = str(episode.meta.get("tool") or "unknown")
            use = {"type": "tool_use", "id": call_id, "name": name, "input": _tool_input(episode.content)}
            _append(history, {"role": "assistant", "content": [use]})
            if index < len(steps) and steps[index].role == "scratchpad":
                index += 1
            if index < len(steps) and steps[index].role == "tool_result":
                result = {"type": "tool_result", "tool_use_id": call_id, "content": steps[index].content}
                _append(history, {"role": "user", "content": [result]})
                index += 1
    seal_dangling_tool_uses(history, NO_RESULT_NOTE)
    for message in history:  # the sealing note is not an error the model made
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result" and block.get("content") == NO_RESULT_NOTE:
                    block.pop("is_error", None)
    return history


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _append(history: list[dict[str, Any]], message: dict[str, Any]) -> None:
    if history and history[-1]["role"] == message["role"]:
        previous = history[-1]
        previous["content"] = _blocks(previous["content"]) + _blocks(message["content"])
    else:
        history.append(message)


# --------------------------------------------------------------------------- the store


class HistoryStore:
    """The saved conversations of one workspace (``<project>/.anton/episodes``)."""

    def __init__(self, episodes_dir: Path | str) -> None:
        self.episodes_dir = Path(episodes_dir)
        self._written: dict[str, tuple[int, int, int]] = {}  # what this process last wrote or read, per session
        self._listed: dict[Path, tuple[tuple[StatKey | None, StatKey | None], SavedSession | None]] = {}

    def history_path(self, session_id: str) -> Path:
        if not _SAFE_ID.fullmatch(session_id or ""):
            raise ValueError(f"Invalid session id {session_id!r}")
        return self.episodes_dir / f"{session_id}{HISTORY_SUFFIX}"

    def episodes_path(self, session_id: str) -> Path:
        self.history_path(session_id)  # validates the id
        return self.episodes_dir / f"{session_id}{EPISODES_SUFFIX}"

    # ---- saving ----------------------------------------------------------------------------------------------

    def save(self, session_id: str, history: list[dict[str, Any]], *, durable: bool = True) -> Path:
        """Write the whole conversation, atomically. Raises `HistoryBroken` (and writes nothing) when the file
        there does not parse and was not written by us; `OSError` when the disk refuses.

        `durable` also syncs the file and its folder to the disk (`atomic_write`), so the save survives a power
        cut; without it the file is still replaced in one step (a process killed at any moment leaves the old file
        or the new one), at a twentieth of the cost: the saves after each message in a turn, the turn's end syncs."""
        target = self.history_path(session_id)
        current = _stat_key(target)
        if current is not None and current != self._written.get(session_id):
            parse_history(read_history_file(target), target)  # someone else wrote it: overwrite only a readable file
        self.episodes_dir.mkdir(parents=True, exist_ok=True)
        if durable:
            atomic_write(target, format_history(history), mode=0o600)  # mode 0600, as Anton's
        else:
            _replace(target, format_history(history))
        key = _stat_key(target)
        if key is not None:
            self._written[session_id] = key
        return target

    # ---- loading ---------------------------------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return self.history_path(session_id).is_file() or self.episodes_path(session_id).is_file()

    def read_saved(self, session_id: str) -> list[dict[str, Any]]:
        """The conversation in the session's saved file alone (no rebuild from the episode log). Raises
        FileNotFoundError when there is none, `HistoryBroken` when it cannot be used."""
        path = self.history_path(session_id)
        return parse_history(read_history_file(path), path)

    def load(self, session_id: str) -> tuple[list[dict[str, Any]], str] | None:
        """``(history, source)`` for a session: its saved file ("history"), else a rebuild from its episode log
        ("episodes"); None when it has neither. Raises `HistoryBroken` for a file that does not parse."""
        path = self.history_path(session_id)
        try:
            raw = read_history_file(path)
        except FileNotFoundError:
            episodes = read_episodes(self.episodes_path(session_id))
            if not any(episode.role == "user" for episode in episodes):
                return None
            return history_from_episodes(episodes), "episodes"
        history = parse_history(raw, path)
        key = _stat_key(path)
        if key is not None:
            self._written[session_id] = key
        return history, "history"

    # ---- listing ---------------------------------------------------------------------------------------------

    def list_sessions(self, limit: int | None = None) -> list[SavedSession]:
        """Saved conversations, newest first (by the time in the id, else by file time).

        Like Anton's listing, a conversation without a single user turn is left out; unlike it, broken files are
        listed (as broken), a conversation known only from its episode log is listed (it can be rebuilt), and the
        preview skips Anton's time stamp and any summary of earlier turns.
        """
        ids: dict[str, float] = {}
        try:
            entries = list(os.scandir(self.episodes_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            if name.endswith(HISTORY_SUFFIX):
                session_id = name[: -len(HISTORY_SUFFIX)]
            elif name.endswith(EPISODES_SUFFIX):
                session_id = name[: -len(EPISODES_SUFFIX)]
            else:
                continue
            if _SAFE_ID.fullmatch(session_id):
                try:
                    ids[session_id] = max(ids.get(session_id, 0.0), entry.stat().st_mtime)
                except OSError:
                    continue

        def newest_first(session_id: str) -> tuple[float, str]:
            started = session_start(session_id)
            return (started.timestamp() if started else ids[session_id], session_id)

        found: list[SavedSession] = []
        for session_id in sorted(ids, key=newest_first, reverse=True):
            info = self.describe(session_id)
            if info is not None:
                found.append(info)
                if limit is not None and len(found) >= limit:
                    break
        return found

    def describe(self, session_id: str) -> SavedSession | None:
        """The list row for one session, or None when it holds no user turn (cached while its files are unchanged)."""
        history_path = self.history_path(session_id)
        episodes_path = self.episodes_path(session_id)
        key = (_stat_key(history_path), _stat_key(episodes_path))
        cached = self._listed.get(history_path)
        if cached is not None and cached[0] == key:
            return cached[1]
        info = self._describe(session_id, history_path, episodes_path)
        self._listed[history_path] = (key, info)
        return info

    def _describe(self, session_id: str, history_path: Path, episodes_path: Path) -> SavedSession | None:
        started = session_start(session_id)
        date = started.strftime("%Y-%m-%d %H:%M") if started else session_id
        model = _last_model(episodes_path)
        try:
            raw = read_history_file(history_path)
        except FileNotFoundError:
            episodes = read_episodes(episodes_path)
            questions = [episode.content for episode in episodes if episode.role == "user"]
            if not questions:
                return None
            return SavedSession(session_id, started, date, len(questions), _preview(questions[0]), model, "episodes")
        except HistoryBroken as exc:
            return SavedSession(session_id, started, date, 0, "", model, "broken", exc.reason)
        try:
            history = parse_history(raw, history_path)
        except HistoryBroken as exc:
            return SavedSession(session_id, started, date, 0, "", model, "broken", exc.reason)
        turns = typed_turns(history)
        if turns == 0:
            return None

        first = next((m for m in history if is_user_turn(m) and not is_summary_message(m)), None)
        preview = _preview(user_text(first)) if first is not None else ""
        return SavedSession(session_id, started, date, turns, preview, model, "history")

    def newest(self) -> str | None:
        """The id of the newest conversation (for ``--continue``). A broken one is not skipped for an older one: its
        resume then says what is wrong with it, rather than another conversation opening without a word."""
        found = self.list_sessions(limit=1)
        return found[0].session_id if found else None

    # ---- deleting --------------------------------------------------------------------------------------------

    def delete(self, session_id: str) -> list[Path]:
        """Remove a conversation: its saved history and its episode log (so it leaves the list and past-episode
        search). Memory learned from it stays. Returns the files removed."""
        removed = []
        for path in (self.history_path(session_id), self.episodes_path(session_id)):
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
        self._written.pop(session_id, None)
        return removed


def _replace(path: Path, data: bytes) -> None:
    """`path` replaced by `data` in one step, not synced: a temporary file beside it (mode 0600), then `os.replace`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _stat_key(path: Path) -> StatKey | None:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _preview(text: str) -> str:
    flat = " ".join(strip_stamp(text.strip()).split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 3] + "..."


def _last_model(episodes_path: Path, tail: int = 65_536) -> str | None:
    """The model named on the last user line of an episode log that names one (read from the file's end)."""
    try:
        with open(episodes_path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - tail))
            data = handle.read()
    except OSError:
        return None
    for line in reversed(data.split(b"\n")):
        if b'"model"' not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        meta = record.get("meta") if isinstance(record, dict) else None
        model = meta.get("model") if isinstance(meta, dict) else None
        if record.get("role") == "user" and isinstance(model, str) and model:
            return model
    return None
