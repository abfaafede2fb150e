"""The `/memory` commands: the dashboard, numbered lists of rules, lessons and identity facts with edit and delete by
number, the current session's episodes, and compaction on demand.

Entries are numbered across both scopes, global first, in the order the lists show them, so the number a user
reads in `/memory rules` is the number `/memory rules delete <n>` acts on. Everything shown goes through Rich
`Text` objects, never markup, so a kind like `[always]` is displayed as typed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text

from anton_tui.memory.engrams.cortex import COMPACTION_THRESHOLD
from anton_tui.memory.engrams.engram import Engram
from anton_tui.memory.engrams.hippocampus import Hippocampus, MemoryFileError
from anton_tui.memory.episodes.store import Episode
from anton_tui.runtime import off_loop
from anton_tui.tui.commands.context import CommandContext, CommandOutput, as_output, error, info, success, warning
from anton_tui.tui.commands.parse import ParsedCommand

MODE_MEANING = {
    "autopilot": "saves what it learns without asking",
    "copilot": "saves what it is sure of, asks about the rest",
    "off": "reads memory but saves nothing new",
}
LIST_FILES = {"rules": "rules", "lessons": "lessons", "identity": "profile"}
SINGULAR = {"rules": "rule", "lessons": "lesson", "identity": "identity fact"}
EPISODE_CELL = 63
IDENTITY_PREVIEW = 3


def short_path(path: Path) -> str:
    """`path` with the user's home folder written as `~`."""
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + os.sep) else text


def _scopes(ctx: CommandContext) -> list[tuple[str, Hippocampus]]:
    return ctx.stores.scoped()


# --------------------------------------------------------------------------- dashboard


def _scope_rows(table: Table, hc: Hippocampus) -> None:
    facts = hc.identity_facts()
    identity = ", ".join(facts[:IDENTITY_PREVIEW]) + (" ..." if len(facts) > IDENTITY_PREVIEW else "")
    topics = hc.topics()
    table.add_row(Text("  Identity"), Text(identity or "(empty)"))
    table.add_row(Text("  Rules"), Text(str(len(hc.get_rules()))))
    table.add_row(Text("  Lessons"), Text(str(len(hc.get_lessons()))))
    table.add_row(Text("  Topics"), Text(", ".join(topics) if topics else "(none)"))


async def dashboard(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    return await off_loop(_dashboard, ctx)


def _dashboard(ctx: CommandContext) -> CommandOutput:
    settings = ctx.settings
    mode = settings.effective_memory_mode
    lines: list[Text | Table] = [Text.assemble(("Memory mode: ", "bold"), (mode, "bold"), f" — {MODE_MEANING[mode]}")]
    if mode != settings.memory_mode:
        said = settings.memory_mode
        lines.append(Text(f"  ANTON_MEMORY_ENABLED is false, so memory is off (the mode setting says {said})."))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    total, crowded = 0, []
    for scope, hc in _scopes(ctx):
        grid.add_row(Text(scope.capitalize(), style="bold"), Text(short_path(hc.base_dir), style="dim"))
        if not hc.base_dir.is_dir():
            grid.add_row(Text("  (no memory folder yet)"), Text(""))
            continue
        _scope_rows(grid, hc)
        count = hc.entry_count()
        total += count
        if count > COMPACTION_THRESHOLD:
            crowded.append(f"{scope} has {count}")
    lines += [Text(""), grid, Text(""), Text(f"Total entries: {total} (rules and lessons in both scopes)")]
    every = getattr(settings, "compaction_every_turns", 10)
    if crowded:
        lines.append(
            Text(
                f"Compaction due: {' and '.join(crowded)} entries (more than {COMPACTION_THRESHOLD} in a scope). "
                f"It runs in the background every {every} turns; /memory vacuum runs it now.",
                style="yellow",
            )
        )
    else:
        lines.append(Text(f"Compaction not needed ({_compaction_rule()})."))
    episodic_on = bool(settings.episodic_memory)
    sessions = ctx.stores.episodic.session_count()
    lines.append(
        Text(f"Episodic memory: {'ON' if episodic_on else 'OFF'} · {sessions} session{'' if sessions == 1 else 's'}")
    )
    lines.append(Text(""))
    lines.append(
        Text(
            "/memory rules, /memory lessons and /memory identity list the entries by number; "
            "/memory episodes shows this session; /setup changes the memory mode.",
            style="dim",
        )
    )
    return CommandOutput(Group(*lines))


# --------------------------------------------------------------------------- numbered entries


@dataclass(frozen=True)
class NumberedEntry:
    number: int
    scope: str
    hc: Hippocampus
    engram: Engram


def numbered_entries(ctx: CommandContext, which: str) -> list[NumberedEntry]:
    """Every rule, lesson or identity fact (`which`) of both scopes, numbered from 1, global first."""
    found: list[NumberedEntry] = []
    for scope, hc in _scopes(ctx):
        if which == "rules":
            engrams = hc.get_rules()
        elif which == "lessons":
            engrams = hc.get_lessons()
        else:
            engrams = hc.get_profile()
        found += [NumberedEntry(len(found) + i + 1, scope, hc, engram) for i, engram in enumerate(engrams)]
    return found


def _meta_line(engram: Engram) -> str:
    parts = []
    if engram.confidence and engram.confidence != "medium":
        parts.append(f"confidence:{engram.confidence}")
    if engram.source and engram.source != "llm":
        parts.append(f"source:{engram.source}")
    if engram.topic:
        parts.append(f"topic:{engram.topic}")
    if engram.updated_at is not None:
        parts.append(f"updated:{engram.updated_at:%Y-%m-%d}")
    return "  ".join(parts)


def _entry_list(ctx: CommandContext, which: str) -> CommandOutput:
    entries = numbered_entries(ctx, which)
    title = {"rules": "Rules", "lessons": "Lessons", "identity": "Identity"}[which]
    lines: list[Text] = [Text(f"{title} — {len(entries)}", style="bold")]
    if not entries:
        return CommandOutput(Group(*lines, Text("(no items)")))
    for scope, hc in _scopes(ctx):
        mine = [entry for entry in entries if entry.scope == scope]
        if not mine:
            continue
        path = getattr(hc, {"rules": "rules_path", "lessons": "lessons_path", "identity": "profile_path"}[which])
        lines += [Text(""), Text.assemble((scope.capitalize(), "bold"), "  ", (short_path(path), "dim"))]
        kind = None
        for entry in mine:
            if which == "rules" and entry.engram.kind != kind:
                kind = entry.engram.kind
                lines.append(Text(f"  {kind.capitalize()}", style="bold"))
            lines.append(Text(f"{entry.number:>3}.  {entry.engram.text}"))
            if meta := _meta_line(entry.engram):
                lines.append(Text(f"      {meta}", style="dim"))
    hint = f"/memory {which} edit <n> <new text> changes one; /memory {which} delete <n> removes one."
    lines += [Text(""), Text(hint, style="dim")]
    return CommandOutput(Group(*lines))


def _pick(ctx: CommandContext, which: str, number_text: str) -> NumberedEntry | CommandOutput:
    entries = numbered_entries(ctx, which)
    if not number_text.isdigit():
        return error(f"Give the number of the {SINGULAR[which]} as /memory {which} lists it (e.g. delete 2).")
    number = int(number_text)
    if not entries:
        return error(f"There are no {which} to change.")
    if not 1 <= number <= len(entries):
        return error(f"There is no {SINGULAR[which]} {number}: pick a number from 1 to {len(entries)}.")
    return entries[number - 1]


async def _edit(ctx: CommandContext, which: str, args: ParsedCommand) -> CommandOutput:
    picked = await off_loop(_pick, ctx, which, args.words[1] if len(args.words) > 1 else "")
    if isinstance(picked, CommandOutput):
        return picked
    new_text = args.after(2)
    if not new_text:
        ask_text = ctx.hook("ask_text")
        if ask_text is None:
            return error(f"Type the new text after the number: /memory {which} edit {picked.number} <new text>")
        new_text = (await ctx.call(ask_text, f"Edit {SINGULAR[which]} {picked.number}", picked.engram.text)) or ""
        if not new_text.strip():
            return info("Nothing changed.")
    what = f"{SINGULAR[which].capitalize()} {picked.number}"
    try:
        changed = await ctx.runtime.update_entry(picked.scope, LIST_FILES[which], picked.engram.id, new_text)
    except (MemoryFileError, OSError, ValueError) as exc:
        return error(f"Not changed: {exc}")
    if not changed:
        return warning(f"{what} changed on disk meanwhile; list again and retry.")
    return success(f"{what} ({picked.scope}) is now: {' '.join(new_text.split())}")


async def _delete(ctx: CommandContext, which: str, args: ParsedCommand) -> CommandOutput:
    picked = await off_loop(_pick, ctx, which, args.words[1] if len(args.words) > 1 else "")
    if isinstance(picked, CommandOutput):
        return picked
    if not await ctx.ask(f"Delete {SINGULAR[which]} {picked.number} ({picked.scope}): {picked.engram.text}?"):
        return info("Nothing deleted.")
    try:
        deleted = await ctx.runtime.delete_entry(picked.scope, LIST_FILES[which], picked.engram.id)
    except (MemoryFileError, OSError, ValueError) as exc:
        return error(f"Not deleted: {exc}")
    if not deleted:
        return warning(f"{SINGULAR[which].capitalize()} {picked.number} was already gone.")
    return success(f"Deleted {SINGULAR[which]} {picked.number} ({picked.scope}): {picked.engram.text}")


def entries_command(which: str):
    """The handler of `/memory rules|lessons|identity [edit <n> <text> | delete <n>]`."""

    async def handler(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
        action = args.words[0].lower() if args.words else ""
        if not action:
            return await off_loop(_entry_list, ctx, which)
        if action == "edit":
            return await _edit(ctx, which, args)
        if action in ("delete", "remove", "del"):
            return await _delete(ctx, which, args)
        return error(f"Unknown action {action!r}: use /memory {which} [edit <n> <text> | delete <n>].")

    return handler


# --------------------------------------------------------------------------- episodes


def _cell(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EPISODE_CELL else flat[: EPISODE_CELL - 3] + "..."


def _current_session(ctx: CommandContext) -> str | None:
    episodic = ctx.stores.episodic
    if episodic.session_id:
        return episodic.session_id
    sessions = episodic.sessions()
    return sessions[0] if sessions else None


def _turns(episodes: Iterable[Episode]) -> dict[int, tuple[str, str]]:
    turns: dict[int, tuple[str, str]] = {}
    for episode in episodes:
        question, answer = turns.get(episode.turn, ("", ""))
        if episode.role == "user" and not question:
            question = episode.content
        elif episode.role == "assistant" and episode.content.strip():
            answer = episode.content
        if episode.role in ("user", "assistant"):
            turns[episode.turn] = (question, answer)
    return turns


def _session_turns(ctx: CommandContext) -> tuple[str | None, dict[int, tuple[str, str]]]:
    session = _current_session(ctx)
    return session, _turns(ctx.stores.episodic.read_session(session)) if session else {}


async def episodes(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    session, turns = await off_loop(_session_turns, ctx)
    action = args.words[0].lower() if args.words else ""
    if action in ("delete", "remove", "del"):
        return await _delete_turn(ctx, session, turns, args.words[1] if len(args.words) > 1 else "")
    if action:
        return error("Use /memory episodes, or /memory episodes delete <turn>.")
    title = f"Episodes — session {session}" if session else "Episodes"
    if not turns:
        return CommandOutput(Group(Text(title, style="bold"), Text("(no items)")))
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("question")
    table.add_column("answer")
    for turn, (question, answer) in sorted(turns.items()):
        table.add_row(Text(str(turn)), Text(_cell(question)), Text(_cell(answer)))
    return CommandOutput(table)


async def _delete_turn(ctx: CommandContext, session: str | None, turns: dict, number_text: str) -> CommandOutput:
    if not number_text.isdigit():
        return error("Give the turn number as /memory episodes shows it (e.g. /memory episodes delete 3).")
    turn = int(number_text)
    if session is None or turn not in turns:
        shown = ", ".join(str(t) for t in sorted(turns)) or "none"
        return error(f"Turn {turn} is not in this session (turns: {shown}).")
    question = _cell(turns[turn][0])
    if not await ctx.ask(f"Delete turn {turn} of session {session} from the episode log: {question}?"):
        return info("Nothing deleted.")
    try:
        removed = await off_loop(ctx.stores.episodic.delete_turn, session, turn)
    except OSError as exc:
        return error(f"Not deleted: {exc}")
    return success(f"Deleted turn {turn} ({removed} lines) from session {session}.")


# --------------------------------------------------------------------------- compaction and help


def _compaction_rule() -> str:
    from anton_tui.memory.learners.compaction import RULE  # pydantic: not before the first frame

    return RULE


async def vacuum(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    if not ctx.runtime.can_compact:
        return warning("Compaction needs the model and is not available in this session.")
    from anton_tui.memory.learners.compaction import MIN_FILE_ENTRIES, RULE, file_sizes

    sizes = await off_loop(lambda: [(n, f"{scope} {file}.md") for scope, hc in _scopes(ctx) for file, n in
                                    file_sizes(hc).items()])  # fmt: skip
    due = [f"{name} ({n} entries)" for n, name in sizes if n >= MIN_FILE_ENTRIES]
    if not due:
        largest, name = max(sizes, default=(0, "none"))
        return info(f"Nothing to compact: {RULE}. The largest is {name} with {largest}.")
    if not await ctx.ask(f"Compact {', '.join(due)} now? The model keeps what is still useful."):
        return info("Memory left as it is.")
    result = await ctx.runtime.compact_now()
    return as_output(result, default="Compaction finished.")


async def reset(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    """``/memory reset global|project|episodic``: Anton's reset, as a recorded change that can be undone."""
    scope = args.words[0] if args.words else ""
    if scope not in ("global", "project", "episodic"):
        return error("Say which scope to clear: /memory reset global, project or episodic.")
    what = "episode logs (archived, not deleted)" if scope == "episodic" else f"{scope} rules, lessons and profile"
    if not await ctx.ask(f"Clear the {what}? The change is recorded and can be undone in the History tab."):
        return info("Canceled.")
    try:
        change = await ctx.runtime.memory_reset(scope)
    except Exception as exc:
        return error(f"Not reset: {exc}")
    if change is None:
        return info(f"Nothing to clear in {scope}.")
    return success(f"Reset finished: {scope} (change {change.short}; undo it in the History tab).")


async def memory_help(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    rows = [
        ("/memory", "dashboard: mode, counts per scope, compaction and episodes"),
        ("/memory rules|lessons|identity", "numbered list, global scope first"),
        ("/memory rules|lessons|identity edit <n> <text>", "change entry n"),
        ("/memory rules|lessons|identity delete <n>", "remove entry n (asks first)"),
        ("/memory episodes [delete <turn>]", "this session's turns; remove one from the log"),
        ("/memory vacuum", "compact both scopes now (asks first)"),
        ("/memory reset global|project|episodic", "clear a scope as a recorded change that can be undone"),
        ("/memory remote [add <scope> <url> | remove <scope>]", "share a scope through a git remote"),
        ("/memory sync [global|project]", "fetch, merge by entries and push shared memory now"),
        ("/memory resolve <scope> mine|theirs", "finish a sync that waits for a choice"),
    ]
    notes = Text(f"Compaction: {_compaction_rule()}.")
    table = Table.grid(padding=(0, 2))
    for command, meaning in rows:
        table.add_row(Text(command, style="bold"), Text(meaning))
    return CommandOutput(Group(table, Text(""), notes))
